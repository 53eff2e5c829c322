import CommandLineSupport
import DetachedThread
import Synchronization
import WhereaboutsCore
import WhereaboutsEditor
import WhereaboutsJSON
import WhereaboutsMQTT
import WhereaboutsMapFile
import WhereaboutsSurvey
import WhereaboutsWire

#if canImport(Glibc)
    import Glibc
#endif

/// The editor's live survey (`whereabouts web --edit MAP --broker …`): one broker connection as the `surveyor`
/// account from the start (so that the page can list the tags heard before one is picked), a ``SurveyRecorder``
/// made at the first start on the map file as it then is, in a new directory beside it, and the report run on a
/// thread of its own (seconds of work the HTTP server's thread must not wait for).
///
/// Shared by the server's thread (the routes), the broker task and the report's thread: the desk's state sits
/// behind one lock, held only to read or swap it; the recorder has its own.
final class EditorSurveyDesk: SurveyDesk {
    struct Options: Sendable {
        var broker: BrokerSettings
        var mapPath: String
        /// Where the survey's files go; nil: a new directory beside the map at the first start.
        var directory: String?
        var configuration: SurveySession.Configuration
        var clock: ScaledClock
    }

    private struct State {
        var recorder: SurveyRecorder?
        var directory: String?
        var mapRevision = ""
        var report = SurveyReportState.none
        var ready: SurveyDeskReport?
        var failure: String?
    }

    let options: Options
    /// The site whose readings the desk subscribes to (the map's when the editor started).
    let site: BeaconUUID
    let logger: Logger
    private let state = Mutex(State())
    private let heard: Mutex<SurveyTagsHeard>
    private let connected = Atomic<Bool>(false)

    init(options: Options, site: BeaconUUID, logger: Logger) {
        self.options = options
        self.site = site
        self.logger = logger
        heard = Mutex(SurveyTagsHeard(site: site))
    }

    // MARK: - The routes' calls

    func start(tag: TagIdentity) throws(SurveyDeskError) -> SurveyProgress {
        let recorder = try state.withLock { state throws(SurveyDeskError) in
            if let recorder = state.recorder { return recorder }
            let made = try makeRecorder()
            (state.recorder, state.directory, state.mapRevision) = made
            logger.info("survey: recording into \(made.directory)")
            return made.recorder
        }
        return try act { try recorder.start(tag: tag) }
    }

    func standAt(floor: UInt16, x: Double, y: Double) throws(SurveyDeskError) -> SurveyProgress {
        let recorder = try started()
        return try act { try recorder.standAt(floor: floor, x: x, y: y) }
    }

    func walk(floor: UInt16, route: [Point], speed: Double) throws(SurveyDeskError) -> SurveyProgress {
        let recorder = try started()
        return try act { try recorder.walk(floor: floor, route: route, speed: speed) }
    }

    func finish() throws(SurveyDeskError) -> SurveyProgress {
        let recorder = try started()
        let revision = try state.withLock { state throws(SurveyDeskError) in
            guard state.report != .running else {
                throw SurveyDeskError(status: 409, "the report is being made already: wait for it")
            }
            state.report = .running
            state.ready = nil
            return state.mapRevision
        }
        let progress: SurveyProgress
        do {
            progress = try act { try recorder.finish() }
        } catch {
            state.withLock { $0.report = .none }
            throw error
        }
        // Seconds of work (four replays of the survey): on a thread of its own, so that the server answers now.
        let status = DetachedThread.start(name: "survey-report") {
            self.makeReport(recorder, places: progress.places, mapRevision: revision)
        }
        guard status == 0 else {
            state.withLock { $0.report = .none }
            throw SurveyDeskError(status: 500, "cannot start the report's thread (error \(status))")
        }
        return progress
    }

    func status() -> SurveyDeskStatus {
        let (recorder, directory, report, failure) = state.withLock {
            ($0.recorder, $0.directory, $0.report, $0.failure)
        }
        let now = options.clock.now()
        return SurveyDeskStatus(
            connected: connected.load(ordering: .relaxed), broker: "\(options.broker.address)", directory: directory,
            progress: recorder?.progress(), surveyed: recorder?.surveyedPlaces() ?? [], report: report,
            heard: heard.withLock { $0.json(now: now) }, dwell: options.configuration.dwell, failure: failure)
    }

    func report() -> SurveyDeskReport? {
        state.withLock { $0.ready }
    }

    // MARK: - The broker

    /// Subscribes to every agent's readings and feeds them to the list of tags heard and to the recorder, until
    /// the client stops for good or the task is cancelled; ticks the recorder every 50 ms meanwhile.
    func run() async throws {
        let client = try MQTTClient(
            MQTTClientConfiguration(
                broker: options.broker, clientID: "whereabouts-edit-survey-\(Int(WallClock.now()) % 100_000)"))
        _ = try client.subscribe(Topics(site: site).allReadings.filter, qos: .atLeastOnce)
        try await client.withSession { client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await message in client.messages { self.take(message) }
                }
                group.addTask {
                    for await event in client.events {
                        switch event {
                        case .connected:
                            self.connected.store(true, ordering: .relaxed)
                            self.logger.info("survey: connected to \(self.options.broker.address)")
                        case .connectionFailed(let failure):
                            self.connected.store(false, ordering: .relaxed)
                            self.logger.warning("survey: broker: \(failure)")
                        default: break
                        }
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        self.tick()
                        try await Task.sleep(for: .milliseconds(50))
                    }
                }
                defer {
                    client.disconnect()
                    group.cancelAll()
                }
                try await group.next()
            }
        }
    }

    private func take(_ message: MQTTMessage) {
        let now = options.clock.now()
        heard.withLock { $0.take(topic: message.topic, payload: message.payload, now: now) }
        guard let recorder = state.withLock({ $0.recorder }) else { return }
        record { try recorder.take(message) }
    }

    private func tick() {
        guard let recorder = state.withLock({ $0.recorder }) else { return }
        record { try recorder.tick() }
    }

    /// A recording step; the first failure (a file that cannot be written) is kept for the page and logged once.
    private func record(_ step: () throws -> Void) {
        do {
            try step()
        } catch {
            let first = state.withLock { state in
                defer { state.failure = state.failure ?? "\(error)" }
                return state.failure == nil
            }
            if first { logger.error("survey: recording stopped: \(error)") }
        }
    }

    // MARK: - Inside

    private func started() throws(SurveyDeskError) -> SurveyRecorder {
        guard let recorder = state.withLock({ $0.recorder }) else {
            throw SurveyDeskError(.notStarted)
        }
        return recorder
    }

    /// An operator's action on the recorder, its errors in the routes' terms.
    private func act(_ action: () throws -> SurveyProgress) throws(SurveyDeskError) -> SurveyProgress {
        do {
            return try action()
        } catch let error as SurveyError {
            throw SurveyDeskError(error)
        } catch {
            throw SurveyDeskError(status: 500, "the survey cannot record: \(error)")
        }
    }

    /// The recorder on the map file as it is now, in the survey's directory (made when it is the default).
    private func makeRecorder() throws(SurveyDeskError) -> (
        recorder: SurveyRecorder, directory: String, mapRevision: String
    ) {
        let bytes: [UInt8]
        let document: JSONValue
        do {
            bytes = try FileAccess.read(options.mapPath)
            document = try MapDocument.parse(bytes)
        } catch {
            throw SurveyDeskError(status: 409, "save the map first: the survey reads the map file (\(error))")
        }
        let uuid = document.object?["site"]?.object?["uuid"]?.string.flatMap(BeaconUUID.init)
        guard uuid == site else {
            throw SurveyDeskError(
                status: 409,
                "the map's site UUID is not the one the editor subscribed to when it started (\(site)): "
                    + "restart the editor to survey this map")
        }
        let directory = options.directory ?? Self.defaultDirectory(beside: options.mapPath, now: WallClock.now())
        if mkdir(directory, 0o755) != 0, errno != EEXIST {
            throw SurveyDeskError(status: 500, "cannot make \(directory): \(FileAccess.systemMessage())")
        }
        do {
            let recorder = try SurveyRecorder(
                document: document, directory: directory, configuration: options.configuration, clock: options.clock)
            return (recorder, directory, EditorSite.revision(bytes))
        } catch let error as SurveyError {
            throw SurveyDeskError(error)
        } catch {
            throw SurveyDeskError(status: 409, "\(error)")
        }
    }

    /// `MAP-survey-YYYYMMDD-HHMMSS` beside the map (local time).
    static func defaultDirectory(beside mapPath: String, now: Double) -> String {
        let name = mapPath.split(separator: "/").last.map(String.init) ?? "map"
        let base = name.hasSuffix(".json") ? String(name.dropLast(5)) : name
        var seconds = time_t(now)
        var parts = tm()
        localtime_r(&seconds, &parts)
        func digits(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(width - text.count, 0)) + text
        }
        let date = digits(parts.tm_year + 1900, 4) + digits(parts.tm_mon + 1, 2) + digits(parts.tm_mday, 2)
        let stamp = date + "-" + digits(parts.tm_hour, 2) + digits(parts.tm_min, 2) + digits(parts.tm_sec, 2)
        return FileAccess.directory(of: mapPath) + "/" + base + "-survey-" + stamp
    }

    /// Real seconds the report waits before it takes the survey's readings: the agents send theirs in batches (a
    /// window of 1 s, then the broker), so the last point's readings arrive after the point is closed.
    static let lateBatchGrace = 2.0

    /// Runs on the report's thread: the report, its files in the survey's directory, then the state.
    private func makeReport(_ recorder: SurveyRecorder, places: Int, mapRevision: String) {
        usleep(useconds_t(Self.lateBatchGrace * 1_000_000))
        let report = recorder.report()
        let directory = recorder.directory
        do {
            try FileAccess.write(Array(report.html.utf8), to: directory + "/survey-report.html")
            try FileAccess.write(
                Array(JSONWriter().string(report.json).utf8), to: directory + "/survey-report.json")
            if report.isSavable, let text = report.mapText {
                try FileAccess.write(Array(text.utf8), to: directory + "/survey-calibrated.json")
            }
        } catch {
            logger.warning("survey: cannot write the report's files: \(error)")
        }
        let why = (report.failure ?? report.refusal).map { " (not savable: \($0))" } ?? ""
        logger.info("survey: the report over \(places) points is ready" + why)
        state.withLock { state in
            state.ready = SurveyDeskReport(report: report, mapRevision: mapRevision, places: places)
            state.report = .ready(places: places)
        }
    }
}
