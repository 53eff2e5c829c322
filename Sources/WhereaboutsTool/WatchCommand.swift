import CommandLineSupport
import Synchronization
import WhereaboutsCore
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
                    + Setting.flagsOnly([.value("duration", "S", "stop after S seconds", default: "until Ctrl-C")]))
        ])

    /// What the subscriber has seen, shared between the MQTT task and the drawing loop.
    final class Board: Sendable {
        let occupancy = Mutex<[ZoneKey: ZoneOccupancy]>([:])
        let events = Mutex<[ZoneEvent]>([])
        let metrics = Mutex<LocatorMetrics?>(nil)
        let locatorStatus = Mutex<String>("unknown")
        /// Whether the broker has accepted a connection yet, and whether the client has stopped for good.
        let connected = Atomic<Bool>(false)
        let clientStopped = Atomic<Bool>(false)

        func take(_ message: MQTTMessage, topics: Topics) {
            let text = String(decoding: message.payload, as: UTF8.self)
            if message.topic == topics.locatorStatus.name {
                locatorStatus.withLock { $0 = text }
            } else if message.topic == topics.locatorMetrics.name, let value = try? LocatorMetrics(payload: text) {
                metrics.withLock { $0 = value }
            } else if message.topic == topics.events.name, let event = try? ZoneEvent(payload: text) {
                events.withLock {
                    $0.append(event)
                    if $0.count > 6 { $0.removeFirst($0.count - 6) }
                }
            } else if message.topic.hasSuffix("/occupancy"),
                let value = try? ZoneOccupancy(payload: text)
            {
                occupancy.withLock { $0[ZoneKey(floor: value.floor, minor: value.zone)] = value }
            }
        }
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
        _ = try client.subscribe("\(topics.prefix)/floors/+/zones/+/occupancy", qos: .atLeastOnce)
        _ = try client.subscribe(topics.events.name, qos: .atLeastOnce)
        _ = try client.subscribe(topics.locatorStatus.name, qos: .atLeastOnce)
        _ = try client.subscribe(topics.locatorMetrics.name, qos: .atMostOnce)
        let board = Board()
        let interactive = isatty(1) != 0
        let start = WallClock.monotonic()
        try await client.withSession { client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { for await message in client.messages { board.take(message, topics: topics) } }
                group.addTask {
                    for await event in client.events {
                        if case .connected = event { board.connected.store(true, ordering: .relaxed) }
                        if case .connectionFailed(let failure) = event { printError("watch: \(failure)") }
                    }
                    board.clientStopped.store(true, ordering: .relaxed)
                }
                group.addTask {
                    for await _ in SignalWatcher.terminationSignals() {
                        client.disconnect()
                        return
                    }
                }
                var lastPlain = -Double.infinity
                while !board.clientStopped.load(ordering: .relaxed) {
                    let elapsed = WallClock.monotonic() - start
                    if let duration, elapsed >= duration { break }
                    if !board.connected.load(ordering: .relaxed), elapsed > 10 {
                        throw RuntimeError("could not reach the broker at \(broker.address) within 10 s")
                    }
                    if interactive {
                        writeOut(
                            "\u{1B}[H\u{1B}[2J" + draw(map: map, board: board, elapsed: elapsed, duration: duration))
                    } else if elapsed - lastPlain >= 15 {
                        lastPlain = elapsed
                        writeOut(draw(map: map, board: board, elapsed: elapsed, duration: duration))
                    }
                    try await Task.sleep(for: .milliseconds(500))
                }
                writeOut(draw(map: map, board: board, elapsed: WallClock.monotonic() - start, duration: duration))
                group.cancelAll()
            }
        }
        return .success
    }

    static func draw(map: FloorMap, board: Board, elapsed: Double, duration: Double?) -> String {
        var lines: [String] = []
        var header = "Whereabouts · \(map.site.name) · \(clockText(elapsed))"
        if let duration, duration > 0 {
            let fraction = min(elapsed / duration, 1)
            let filled = Int(fraction * 30)
            header +=
                " [\(String(repeating: "#", count: filled))\(String(repeating: "-", count: 30 - filled))] \(Int(fraction * 100)) %"
        }
        header += " · locator \(board.locatorStatus.withLock { $0 })"
        if let metrics = board.metrics.withLock({ $0 }) {
            header +=
                " · \(metrics.readingsAccepted) readings, \(metrics.readingsRejected.values.reduce(0, +)) rejected"
            header += ", \(metrics.tagsTracked) tags, \(metrics.agentsOnline)/\(map.agents.count) agents"
        }
        lines.append(header)
        let occupancy = board.occupancy.withLock { $0 }
        for floor in map.floors {
            lines.append("")
            lines.append("Floor \(floor.major) · \(floor.name)")
            for zone in map.zones(onFloor: floor.major) {
                let name = zone.name.padding(toLength: 22)
                guard let state = occupancy[zone.key] else {
                    lines.append("  \(name)     –  (not yet published)")
                    continue
                }
                let count = state.state == .unknown ? "  ?" : String(state.count).leftPadding(toLength: 3)
                let who = state.tags.prefix(6).map { $0.name ?? shortName($0.id) }.joined(separator: ", ")
                let more = state.tags.count > 6 ? " +\(state.tags.count - 6)" : ""
                let unknown = state.state == .unknown ? "  (unknown: its agents are silent)" : ""
                lines.append("  \(name) \(count)  \(who)\(more)\(unknown)")
            }
        }
        let events = board.events.withLock { $0 }
        if !events.isEmpty {
            lines.append("")
            lines.append("Recent events")
            for event in events.reversed() {
                let who = event.name ?? shortName(event.tag)
                lines.append(
                    "  \(who) \(event.kind == .enter ? "entered" : "left") \(event.zoneName ?? "zone \(event.zone)")")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func shortName(_ tag: TagIdentity) -> String {
        if let fields = tag.beaconFields { return "tag \(fields.major)-\(fields.minor)" }
        return String(tag.description.suffix(12))
    }

    static func clockText(_ seconds: Double) -> String {
        let whole = Int(seconds)
        let text = "\(whole / 60):" + String(whole % 60).leftPadding(toLength: 2, with: "0")
        return text
    }
}

extension String {
    func padding(toLength length: Int) -> String {
        count >= length ? String(prefix(length)) : self + String(repeating: " ", count: length - count)
    }

    func leftPadding(toLength length: Int, with pad: Character = " ") -> String {
        count >= length ? self : String(repeating: pad, count: length - count) + self
    }
}
