import CommandLineSupport
import Synchronization
import WhereaboutsCore
import WhereaboutsDashboard
import WhereaboutsMQTT
import WhereaboutsSettings
import WhereaboutsWire

#if canImport(Glibc)
    import Glibc
#endif

/// `whereabouts watch`: a terminal dashboard. Subscribes to the zone occupancy topics as any dashboard would and
/// redraws a table in place.
enum WatchCommand {
    static let interface = CommandInterface(
        program: "whereabouts watch",
        synopsis: "whereabouts watch --map M --broker URL [--duration S] [broker options]",
        introduction: "  Shows every zone's occupancy, the last events and the locator's metrics, updating in place.",
        sections: [
            .init(
                Setting.flagsOnly([.value("map", "M", "the floor map")]) + Setting.broker(defaultUsername: "dashboard")
                    + Setting.flagsOnly([
                        .value("duration", "S", "stop after S seconds", default: "until Ctrl-C"),
                        .value(
                            "simulation-end", "UNIX",
                            "a simulation feeds the broker and ends at this time: after it the board says so",
                            default: "none"),
                    ]))
        ])

    /// The dashboard's state, shared by the MQTT task (which changes it) and the drawing task (which prints it).
    final class Board: Sendable {
        let state: Mutex<DashboardState>
        /// Whether the broker has accepted a connection yet.
        let connected = Atomic<Bool>(false)

        init(map: FloorMap, simulationEnd: Double?) {
            var initial = DashboardState(map: map)
            initial.simulationEnd = simulationEnd
            _ = initial.brokerLink(.connecting(since: WallClock.now()), now: WallClock.now())
            state = Mutex(initial)
        }

        /// Follows the broker link, so that the board says when the broker is lost.
        func follow(_ events: AsyncStream<MQTTConnectionEvent>) async {
            for await event in events {
                let now = WallClock.now()
                switch event {
                case .connected(let sessionPresent):
                    connected.store(true, ordering: .relaxed)
                    state.withLock { _ = $0.brokerLink(.connected(sessionKept: sessionPresent), now: now) }
                case .connectionFailed(let failure):
                    printError("watch: \(failure)")
                    state.withLock { _ = $0.brokerLink(.lost(since: now), now: now) }
                case .disconnected:
                    state.withLock { _ = $0.brokerLink(.lost(since: now), now: now) }
                default: break
                }
            }
        }

        func text(elapsed: Double, duration: Double?) -> String {
            state.withLock { TerminalBoard.text($0, elapsed: elapsed, duration: duration, now: WallClock.now()) }
        }
    }

    /// Why a task of the watch ended.
    enum Ending: Sendable {
        /// The broker answered in time: the watch goes on.
        case connected
        /// A signal, the duration, or the client stopping for good: the watch ends.
        case stop
    }

    static func run(_ settings: Settings) async throws -> ExitStatus {
        let mapPath = try settings.required("map")
        let broker = try BrokerSettings(settings, defaultUsername: "dashboard")
        let duration = try settings.number("duration")
        let map = try RecordingFiles.map(mapPath)
        let topics = Topics(site: map.site.uuid)
        let client = try MQTTClient(
            MQTTClientConfiguration(broker: broker, clientID: "whereabouts-watch-\(Int(WallClock.now()) % 100_000)")
        )
        _ = try client.subscribe(topics.allOccupancy.filter, qos: .atLeastOnce)
        _ = try client.subscribe(topics.events.name, qos: .atLeastOnce)
        _ = try client.subscribe(topics.locatorStatus.name, qos: .atLeastOnce)
        _ = try client.subscribe(topics.locatorMetrics.name, qos: .atMostOnce)
        let board = Board(map: map, simulationEnd: try settings.number("simulation-end"))
        let interactive = isatty(1) != 0
        let start = WallClock.monotonic()
        try await client.withSession { client in
            try await withThrowingTaskGroup(of: Ending.self) { group in
                // Messages go through the dashboard's state: its topic parsing, map checks and bounds.
                group.addTask {
                    for await message in client.messages {
                        board.state.withLock {
                            _ = $0.ingest(topic: message.topic, payload: message.payload, now: WallClock.now())
                        }
                    }
                    return .stop
                }
                group.addTask {
                    await board.follow(client.events)
                    return .stop
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(10))
                    guard board.connected.load(ordering: .relaxed) else {
                        throw RuntimeError("could not reach the broker at \(broker.address) within 10 s")
                    }
                    return .connected
                }
                group.addTask {
                    for await _ in SignalWatcher.terminationSignals() { break }
                    return .stop
                }
                if let duration {
                    group.addTask {
                        try await Task.sleep(for: .seconds(duration))
                        return .stop
                    }
                }
                group.addTask {
                    var lastPlain = -Double.infinity
                    while !Task.isCancelled {
                        let elapsed = WallClock.monotonic() - start
                        if interactive {
                            writeOut("\u{1B}[H\u{1B}[2J" + board.text(elapsed: elapsed, duration: duration))
                        } else if elapsed - lastPlain >= 15 {
                            lastPlain = elapsed
                            writeOut(board.text(elapsed: elapsed, duration: duration))
                        }
                        try await Task.sleep(for: .milliseconds(500))
                    }
                    return .stop
                }
                defer {
                    client.disconnect()
                    group.cancelAll()
                }
                while let ending = try await group.next(), ending == .connected {}
            }
        }
        writeOut(board.text(elapsed: WallClock.monotonic() - start, duration: duration))
        return .success
    }
}
