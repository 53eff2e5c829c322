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
                    .list(
                        "frame-ancestors", "ORIGIN",
                        "an origin that may embed the page in a frame (a Home Assistant dashboard's, "
                            + "https://ha.example:8123); repeat or separate by commas", default: "none may"),
                    .value(
                        "state-dir", "DIR",
                        "keep the recent events and the zones' last hour in DIR/web-state.json, so that a restart "
                            + "keeps them", default: "kept in memory only"),
                    .value(
                        "simulation-end", "UNIX",
                        "a simulation feeds the broker and ends at this time: after it the page says so",
                        default: "none"),
                ])
        ],
        configFile: "/etc/whereabouts/web.conf")

    /// The origins that may frame the page, each checked.
    static func frameAncestors(_ settings: Settings) throws -> [String] {
        let origins = settings.list("frame-ancestors")
        if let bad = origins.first(where: { !DashboardSite.isFrameAncestor($0) }) {
            throw UsageError("--frame-ancestors: \"\(bad)\" is not an origin like https://ha.example:8123")
        }
        return origins
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
        let frameAncestors = try Self.frameAncestors(settings)
        let map = try RecordingFiles.map(mapPath)
        let logger = Logger(label: "whereabouts-web")
        configuration.log = { line in logger.warning(line) }  // refusals, at most one line every 10 s
        if broker.insecure { logger.warning("--insecure: the broker's certificate is NOT verified") }

        let dashboard = LiveDashboard(
            map: map, frameAncestors: frameAncestors, stateDirectory: settings.value("state-dir"),
            simulationEnd: try settings.number("simulation-end"))
        try dashboard.restore(now: WallClock.now(), logger: logger)
        _ = dashboard.link(.connecting(since: WallClock.now()), now: WallClock.now())
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
                    await dashboard.follow(client.events, broker: "\(broker.address)", server: server, logger: logger)
                }
                group.addTask { try await dashboard.keep(server: server, logger: logger) }
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
                    dashboard.save(now: WallClock.now(), logger: logger)  // before the port goes (LiveDashboard.save)
                    server.stop()
                    group.cancelAll()
                }
                try await group.next()
            }
        }
        dashboard.save(now: WallClock.now(), logger: logger)
        let dropped = dashboard.state.withLock { $0.dropped }
        if !dropped.isEmpty {
            let text = dropped.sorted { $0.key < $1.key }.map { "\($0.key.rawValue) \($0.value)" }
            logger.info("broker messages not shown: \(text.joined(separator: ", "))")
        }
        return .success
    }
}
