import CommandLineSupport
import Synchronization
import WhereaboutsCore
import WhereaboutsDashboard
import WhereaboutsHTTPServer
import WhereaboutsMQTT
import WhereaboutsSettings
import WhereaboutsWire

/// `whereabouts web`: the live map in a browser. Subscribes as any dashboard (its own account, read-only under the
/// shipped ACL) and serves the page and its event stream from the dashboard library over our HTTP server.
enum WebCommand {
    /// The page's settings: flags, the environment (`WHEREABOUTS_LISTEN`, …), an `--env-file` or
    /// `/etc/whereabouts/web.conf`, like the services', since the page runs as one on a wall screen's server.
    static let interface = CommandInterface(
        program: "whereabouts web",
        synopsis: """
            whereabouts web --map M --broker URL [--listen HOST:PORT] [--duration S] [broker options]
                   whereabouts web --edit MAP [--listen HOST:PORT] [--broker URL …]   (the map editor; a broker to survey)
            """,
        introduction: """
              Serves a live page: each floor with its zones, agents and moving tags, who is in each zone, recent
              events, the locator's status and metrics, and each zone's last hour. Updates by Server-Sent Events.
            """,
        sections: [
            .init(
                [.value("map", "M", "the floor map")] + Setting.broker(defaultUsername: "dashboard") + [
                    .value(
                        "listen", "HOST:PORT",
                        "IPv4 address and port to serve on (loopback only unless told otherwise; port 0 picks a free "
                            + "one). The address is printed on standard output.", default: "127.0.0.1:8080"),
                    .value("duration", "S", "stop after S seconds", default: "until Ctrl-C"),
                ])
        ],
        configFile: "/etc/whereabouts/web.conf")

    /// The dashboard's state, shared by the MQTT task (which changes it) and the server's thread (which reads it).
    final class LiveDashboard: Sendable {
        let site: DashboardSite
        let state: Mutex<DashboardState>

        init(map: FloorMap) {
            site = DashboardSite(map: map)
            state = Mutex(DashboardState(map: map))
        }

        /// Takes a broker message; returns the event to send to every page, if something visible changed.
        func take(_ message: MQTTMessage, now: Double) -> [UInt8]? {
            let change = state.withLock { $0.ingest(topic: message.topic, payload: message.payload, now: now) }
            return change.map { Array($0.serverSentEvent.encoded.utf8) }
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

    static func run(_ settings: Settings) async throws -> ExitStatus {
        let mapPath = try settings.required("map")
        let broker = try BrokerSettings(settings, defaultUsername: "dashboard")
        let listen = settings.value("listen") ?? "127.0.0.1:8080"
        let duration = try settings.number("duration")
        var configuration: HTTPServerConfiguration
        do {
            configuration = try HTTPServerConfiguration(listen: listen)
        } catch {
            throw UsageError("--listen: \(error)")
        }
        let map = try RecordingFiles.map(mapPath)
        let logger = Logger(label: "whereabouts-web")
        configuration.log = { line in logger.warning(line) }  // refusals, at most one line every 10 s
        if broker.insecure { logger.warning("--insecure: the broker's certificate is NOT verified") }

        let dashboard = LiveDashboard(map: map)
        let server: HTTPServer
        do {
            server = try HTTPServer(configuration) { request in dashboard.respond(to: request) }
        } catch {
            throw RuntimeError("cannot listen on \(listen): \(error)")
        }
        if configuration.host != "127.0.0.1" {
            logger.warning("serving on \(configuration.host), not loopback: anyone who can reach it sees the map")
        }
        let topics = Topics(site: map.site.uuid)
        let client = try MQTTClient(
            MQTTClientConfiguration(broker: broker, clientID: "whereabouts-web-\(Int(WallClock.now()) % 100_000)")
        )
        for filter in topics.dashboardFilters {
            let qos: MQTTQoS = filter == topics.allPositions ? .atMostOnce : .atLeastOnce
            _ = try client.subscribe(filter.filter, qos: qos)
        }
        writeOut("whereabouts web: http://\(configuration.host):\(server.port)/\n")
        logger.info("serving \(map.site.name) on http://\(configuration.host):\(server.port)/ from \(broker.address)")

        try await client.withSession { client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await server.run() }
                group.addTask {
                    for await message in client.messages {
                        if let event = dashboard.take(message, now: WallClock.now()) { server.broadcast(event) }
                    }
                }
                group.addTask {
                    for await event in client.events {
                        switch event {
                        case .connected: logger.info("connected to \(broker.address)")
                        case .connectionFailed(let failure): logger.warning("broker: \(failure)")
                        case .disconnected(let reason): logger.info("disconnected: \(reason)")
                        default: break
                        }
                    }
                }
                group.addTask {
                    for await _ in SignalWatcher.terminationSignals() { return }
                }
                if let duration {
                    group.addTask { try await Task.sleep(for: .seconds(duration)) }
                }
                // The first to end (a signal, the duration, the client stopping for good, the server failing) ends
                // the page.
                defer {
                    client.disconnect()
                    server.stop()
                    group.cancelAll()
                }
                try await group.next()
            }
        }
        let dropped = dashboard.state.withLock { $0.dropped }
        if !dropped.isEmpty {
            let text = dropped.sorted { $0.key < $1.key }.map { "\($0.key.rawValue) \($0.value)" }
            logger.info("broker messages not shown: \(text.joined(separator: ", "))")
        }
        return .success
    }
}
