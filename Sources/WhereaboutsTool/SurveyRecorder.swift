import CommandLineSupport
import Synchronization
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsMQTT
import WhereaboutsSurvey
import WhereaboutsWire

#if canImport(Glibc)
    import Glibc
#endif

/// Records a survey: subscribes to the agents' readings (as the `surveyor` account, which may read readings and
/// nothing else under the shipped ACL), feeds them and the operator's actions to a ``SurveySession``, and appends
/// what it returns to `survey-readings.jsonl` and `survey-truth.jsonl` (docs/formats.md) in a directory as it goes.
///
/// Shared by the MQTT task, a ticking task and whoever gives the operator's actions (`whereabouts survey`'s standard
/// input, the editor's routes): the session and the files sit behind one lock, held only to take an input and append
/// its lines.
final class SurveyRecorder: Sendable {
    /// The files' names in the survey's directory.
    static let readingsName = "survey-readings.jsonl"
    static let truthName = "survey-truth.jsonl"

    struct State {
        var session: SurveySession
        let readings: LineWriter
        let truth: LineWriter
        /// The first write that failed; nothing more is recorded after it.
        var failure: String?
    }

    let directory: String
    let clock: ScaledClock
    /// The map's site (its readings topics) and first floor.
    let site: BeaconUUID
    let firstFloor: UInt16
    private let state: Mutex<State>
    /// Whether the broker has accepted a connection yet.
    let connected = Atomic<Bool>(false)

    /// A recorder writing into `directory`, which must not hold a survey's files yet (a second survey would mix
    /// into the first).
    init(
        document: JSONValue, directory: String, configuration: SurveySession.Configuration, clock: ScaledClock
    ) throws {
        let session = try SurveySession(document: document, configuration: configuration)
        for name in [Self.readingsName, Self.truthName] where access(directory + "/" + name, F_OK) == 0 {
            throw UsageError("\(directory)/\(name) exists: give a new directory for a new survey")
        }
        let readings = try LineWriter(appendingTo: directory + "/" + Self.readingsName)
        let truth = try LineWriter(appendingTo: directory + "/" + Self.truthName)
        self.directory = directory
        self.clock = clock
        site = session.map.site.uuid
        firstFloor = session.map.floors.first?.major ?? 0
        state = Mutex(State(session: session, readings: readings, truth: truth))
    }

    /// The readings file's path and the truth file's.
    var readingsPath: String { directory + "/" + Self.readingsName }
    var truthPath: String { directory + "/" + Self.truthName }

    // MARK: - The operator's actions (each returns the progress after it)

    func start(tag: TagIdentity) throws -> SurveyProgress {
        try apply { session, now in session.start(tag: tag, now: now) }
    }

    func standAt(floor: UInt16, x: Double, y: Double) throws -> SurveyProgress {
        try apply { session, now in try session.standAt(floor: floor, x: x, y: y, now: now) }
    }

    func walk(floor: UInt16, route: [Point], speed: Double) throws -> SurveyProgress {
        try apply { session, now in try session.walk(floor: floor, route: route, speed: speed, now: now) }
    }

    func finish() throws -> SurveyProgress {
        try apply { session, now in session.finish(now: now) }
    }

    /// Lets time pass: the dwell's closing line, a walk's lines.
    func tick() throws {
        _ = try apply { session, now in session.tick(now: now) }
    }

    /// The progress now.
    func progress() -> SurveyProgress {
        let now = clock.now()
        return state.withLock { $0.session.progress(now: now) }
    }

    /// The distinct places of the truth written so far, the latest `limit` lines' (a point's two lines are one
    /// place), for the editor to mark what was surveyed.
    func surveyedPlaces(limit: Int = 4000) -> [(floor: UInt16, x: Double, y: Double)] {
        let truth = state.withLock { $0.session.truth.suffix(limit) }
        var places: [(floor: UInt16, x: Double, y: Double)] = []
        for line in truth {
            let place = (floor: line.floor, x: line.x, y: line.y)
            if let last = places.last, last == place { continue }
            places.append(place)
        }
        return places
    }

    /// A broker message: an agent's readings batch, checked and filtered by the session.
    func take(_ message: MQTTMessage) throws {
        let now = clock.now()
        try state.withLock { state throws(RuntimeError) in
            let records = state.session.take(topic: message.topic, payload: message.payload, now: now)
            try append(records, to: &state)
        }
    }

    /// The accuracy report over everything recorded so far (`calibrate`'s fit and spatial check: seconds, four
    /// replays of the survey). Copies the survey out first, so recording goes on meanwhile.
    func report(options: GuidedCalibrationRun.Options = GuidedCalibrationRun.Options()) -> SurveyReport {
        let (document, readings, truth) = state.withLock {
            ($0.session.document, $0.session.readings, $0.session.truth)
        }
        return SurveyReport.make(document: document, readings: readings, truth: truth, options: options)
    }

    /// Subscribes to every agent's readings and records them until the client stops for good or the task is
    /// cancelled; ticks the session every 50 ms meanwhile.
    func record(through broker: BrokerSettings, site: BeaconUUID, logger: Logger) async throws {
        let client = try MQTTClient(
            MQTTClientConfiguration(broker: broker, clientID: "whereabouts-survey-\(Int(WallClock.now()) % 100_000)"))
        _ = try client.subscribe(Topics(site: site).allReadings.filter, qos: .atLeastOnce)
        try await client.withSession { client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await message in client.messages { try self.take(message) }
                }
                group.addTask {
                    for await event in client.events {
                        switch event {
                        case .connected:
                            self.connected.store(true, ordering: .relaxed)
                            logger.info("connected to \(broker.address)")
                        case .connectionFailed(let failure): logger.warning("broker: \(failure)")
                        default: break
                        }
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try self.tick()
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

    private func apply(_ action: (inout SurveySession, Double) throws -> SurveyRecords) throws -> SurveyProgress {
        let now = clock.now()
        return try state.withLock { state in
            let records = try action(&state.session, now)
            try append(records, to: &state)
            return state.session.progress(now: now)
        }
    }

    private func append(_ records: SurveyRecords, to state: inout State) throws(RuntimeError) {
        if let failure = state.failure { throw RuntimeError(failure) }
        do {
            if !records.readings.isEmpty {
                try state.readings.write(records.readings.map { JSONLines.line($0) }.joined())
            }
            if !records.truth.isEmpty { try state.truth.write(records.truth.map { JSONLines.line($0) }.joined()) }
        } catch {
            state.failure = error.description
            throw error
        }
    }
}
