import CommandLineSupport
import Synchronization
import WhereaboutsCore
import WhereaboutsDashboard
import WhereaboutsHTTPServer
import WhereaboutsJSON
import WhereaboutsMQTT

/// The state behind `whereabouts web`, shared by the MQTT tasks (which change it) and the server's thread (which
/// reads it), and its state file.
final class LiveDashboard: Sendable {
    let site: DashboardSite
    let state: Mutex<DashboardState>
    /// `<state-dir>/web-state.json`, when `web` keeps one.
    let stateFile: String?

    /// The largest state file read: 20 events and 720 samples plus 100 crossings per zone fit many times over.
    static let stateFileLimit = 16 << 20
    /// How often the state file is brought up to date, seconds (written only when what it holds changed).
    static let saveInterval = 10.0

    init(map: FloorMap, frameAncestors: [String], stateDirectory: String?, simulationEnd: Double?) {
        site = DashboardSite(map: map, frameAncestors: frameAncestors)
        var initial = DashboardState(map: map)
        initial.simulationEnd = simulationEnd
        state = Mutex(initial)
        stateFile = stateDirectory.map { ($0.hasSuffix("/") ? $0 : $0 + "/") + "web-state.json" }
    }

    /// Reads the state file back, if there is one; says what it found.
    func restore(now: Double, logger: Logger) throws {
        guard let stateFile, let bytes = try FileAccess.readStateFile(stateFile, limit: Self.stateFileLimit) else {
            return
        }
        guard let saved = try? JSONParser().parse(bytes), state.withLock({ $0.restore(saved, now: now) }) else {
            logger.warning("\(stateFile) is not a state this version wrote for this site; starting empty")
            return
        }
        let events = state.withLock { $0.recentEvents.count }
        logger.info("read back \(events) events and the zones' last hour from \(stateFile)")
    }

    /// Writes the state file, if `web` keeps one and it does not already hold the same; a failure is logged, not
    /// fatal (the page goes on).
    ///
    /// At a stop, `web` saves before it lets go of its port (a `web` started again as soon as it can listen reads
    /// the file at once, and the client's stream can take a second to end after the disconnect), and again once
    /// the stream has ended, for the messages taken meanwhile.
    func save(now: Double, logger: Logger) {
        guard let stateFile else { return }
        let text = JSONWriter().string(state.withLock { $0.savedState(now: now) })
        do {
            try FileAccess.writeIfChanged(Array(text.utf8), to: stateFile)
        } catch {
            logger.warning("cannot save the page's state: \(error)")
        }
    }

    /// Takes a broker message; returns the events to send to every page, if something visible changed.
    func take(_ message: MQTTMessage, now: Double) -> [UInt8]? {
        let changes = state.withLock { state in
            [state.ingest(topic: message.topic, payload: message.payload, now: now), state.refreshSource(now: now)]
        }
        return encoded(changes)
    }

    /// Takes a change of the broker link; returns the event for every page, if the source changed.
    func link(_ link: BrokerLink, now: Double) -> [UInt8]? {
        encoded(state.withLock { $0.brokerLink(link, now: now) })
    }

    /// Returns the event for every page if the clock changed the source (a simulation's end).
    func tick(now: Double) -> [UInt8]? {
        encoded([state.withLock { $0.refreshSource(now: now) }])
    }

    /// Follows the broker link: each connection and loss goes to the pages as the source it makes.
    func follow(
        _ events: AsyncStream<MQTTConnectionEvent>, broker: String, server: HTTPServer, logger: Logger
    ) async {
        for await event in events {
            let link: BrokerLink
            switch event {
            case .connected(let sessionPresent):
                logger.info("connected to \(broker)")
                link = .connected(sessionKept: sessionPresent)
            case .connectionFailed(let failure):
                logger.warning("broker: \(failure)")
                link = .lost(since: WallClock.now())
            case .disconnected(let reason):
                logger.info("disconnected: \(reason)")
                link = .lost(since: WallClock.now())
            default: continue
            }
            if let event = self.link(link, now: WallClock.now()) { server.broadcast(event) }
        }
    }

    /// Every second: the clock alone can change the source (a simulation's end); every ``saveInterval``, the state
    /// file is brought up to date. Runs until cancelled.
    func keep(server: HTTPServer, logger: Logger) async throws {
        var saved = WallClock.now()
        while true {
            try await Task.sleep(for: .seconds(1))
            let now = WallClock.now()
            if let event = tick(now: now) { server.broadcast(event) }
            if now - saved >= Self.saveInterval {
                save(now: now, logger: logger)
                saved = now
            }
        }
    }

    private func encoded(_ changes: [DashboardChange?]) -> [UInt8]? {
        let text = changes.compactMap { $0?.serverSentEvent.encoded }.joined()
        return text.isEmpty ? nil : Array(text.utf8)
    }

    func respond(to request: HTTPRequestHead) -> HTTPResponse {
        let response = state.withLock { site.respond(to: request.path, state: $0, now: WallClock.now()) }
        let body: HTTPResponse.Body =
            switch response.body {
            case .complete(let bytes): .complete(bytes)
            case .stream(let initial): .stream(initial: initial)
            }
        return HTTPResponse(
            status: response.status, headers: response.headers.map { (name: $0.0, value: $0.1) }, body: body)
    }
}
