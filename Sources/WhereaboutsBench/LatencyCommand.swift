import CommandLineSupport
import Glibc
import Synchronization
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsMQTT
import WhereaboutsSettings
import WhereaboutsWire

/// `whereabouts-bench latency`: from a reading's publication to the occupancy update it causes, under a fixed load.
///
/// The agents of a ``BenchMap`` send one batch each per second in real time, with everything they heard of
/// `--tags` synthetic tags and `--probes` probe tags, as in production. The background tags' windows are made
/// before the clock starts and played in turn (`--distinct`, 4 by default); the probes' are made every window. Each
/// probe has two adjacent rooms;
/// when the bench moves a probe to its other room, the locator's smoothing (RSSI filters, track, the zone margin
/// and the 1 s dwell) takes a few windows to be convinced, then the occupancy of the new room names the probe.
///
/// Each agent's window has its own phase: agent i of N sends its batch i/N s into each second, stamped with the time
/// it goes out. Real agents close their windows on the same wall-clock seconds (`WindowSlot`), so with synchronised
/// clocks their batches come together; spread out, the load is even over the second and a tag's readings come in
/// many small updates, the worst case for the grid filter (docs/tracker.md).
///
/// The deliberate delay is excluded by design: the latency is measured from the batch that completed the decision,
/// not from the move. That batch is the last one carrying the probe that was published before the locator decided
/// (the occupancy payload's `updated` time, on the same clock). With batches spread over the second, a probe's
/// batches are about 80 ms apart, so that batch is nearly always the only one of the probe in the locator's last
/// coalescing interval. The end is the moment the bench receives the occupancy message naming the probe in its
/// new room. The locator runs with its defaults, so its coalescing interval (`--update-interval`, 0.02 s) counts.
/// The probes first move after `--settle` windows (10 by default), once the locator's start is over.
enum LatencyCommand {
    enum Phase {
        /// Waiting for the probe to be seen in `zone` (at start, or after a timeout); not measured.
        case settling(zone: Int)
        /// Moved to `zone` in window `since`; the next occupancy naming it there is a sample.
        case moving(zone: Int, since: Int)
        /// Decided; moves again at window `until`.
        case holding(until: Int)
    }

    struct Probe {
        var tag: Int
        var identity: TagIdentity
        var rooms: (Int, Int)
        var points: (Point, Point)
        var inFirst = true
        var phase: Phase
        /// (window, publication time) of the batches carrying the probe, newest last.
        var sent: [(window: Int, time: Double)] = []
    }

    struct State {
        var probes: [Probe]
        var window = 0
        var latencies: [Double] = []
        /// From the completing batch to the locator's decision time, and from there to arrival.
        var toDecision: [Double] = []
        var toArrival: [Double] = []
        var decisionWindows: [Double] = []
        var timeouts = 0
        var unattributed = 0
    }

    static let table: [Setting] = [
        .value("broker"), .value("label"), .value("agents"), .value("tags"), .value("probes"), .value("seconds"),
        .value("max-windows"), .value("hold-windows"), .value("seed"), .value("locator-pid"),
        .value("distinct"), .value("settle"),
    ]

    static func run(_ settings: Settings) async throws -> ExitStatus {
        guard let broker = settings.value("broker") else { throw UsageError("--broker URL is required") }
        let agents = try settings.integer("agents") ?? 50
        let tagCount = try settings.integer("tags") ?? 1000
        let probeCount = try settings.integer("probes") ?? 25
        let seconds = try settings.integer("seconds") ?? 60
        let maximumWindows = try settings.integer("max-windows") ?? 15
        let holdWindows = try settings.integer("hold-windows") ?? 2
        // The first probe moves wait this many windows: a locator just started republishes every tag's state and
        // places thousands of tags at once, and the latency wanted is that of the load running, not of the start.
        let settleWindows = try settings.integer("settle") ?? 10
        let seed = UInt64(try settings.integer("seed") ?? 7)
        let label = settings.value("label") ?? "latency"
        let locatorPID = try settings.integer("locator-pid").flatMap { Int32(exactly: $0) }
        let distinct = try settings.integer("distinct") ?? 4
        guard distinct >= 1 else { throw UsageError("--distinct must be at least 1") }

        let layout = try BenchMap(agents: agents)
        let map = layout.map
        // The background tags' windows are made before the clock starts and played in turn (`--distinct`, as the
        // stream bench does): making 10,000 tags' readings and their JSON takes longer than a second here, and a
        // bench that falls behind real time measures itself. The probes' readings are made every window.
        var background = SyntheticLoad(
            map: map, width: layout.width, height: layout.height, tagCount: tagCount, seed: seed)
        let prepared = BatchTemplate.windows(of: &background, count: distinct)
        var load = SyntheticLoad(
            map: map, width: layout.width, height: layout.height, tagCount: 0, seed: seed &+ 1,
            firstIdentity: tagCount)
        // Probes take pairs of neighbouring rooms along a row: (0, 1), (2, 3), …
        var probes: [Probe] = []
        pairs: for row in 0..<layout.rows {
            var column = 0
            while column + 1 < layout.columns {
                guard probes.count < probeCount else { break pairs }
                let first = row * layout.columns + column
                func centre(_ room: Int) -> Point {
                    Point(
                        x: (Double(room % layout.columns) + 0.5) * BenchMap.spacing,
                        y: (Double(room / layout.columns) + 0.5) * BenchMap.spacing)
                }
                let points = (centre(first), centre(first + 1))
                let tag = load.addTag(pinnedAt: points.0)
                probes.append(
                    Probe(
                        tag: tag, identity: load.tags[tag].identity, rooms: (first, first + 1), points: points,
                        phase: .settling(zone: first)))
                column += 2
            }
        }
        let tagIDs = load.tags.map(\.identity.description)
        let probeByTag = Dictionary(uniqueKeysWithValues: probes.enumerated().map { ($1.tag, $0) })
        let topics = Topics(site: map.site.uuid)
        let agentIDs = map.agents.map(\.id)
        let readingTopics = try layout.readingTopics()
        let state = Shared(State(probes: probes))
        let connection = try BenchConnection(broker: broker, clientID: "whereabouts-bench-\(label)")
        try connection.client.subscribe("\(topics.prefix)/floors/+/zones/+/occupancy", qos: .atLeastOnce)

        var readings = 0
        var windowsSent = 0
        // The locator's CPU time over the sending (with --locator-pid): at real time, its share of the cores is the
        // headroom figure of issue 16.
        var firstSample: ProcessSample?
        var lastSample: ProcessSample?
        var sendingTime = 0.0
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await connection.client.run() }
            group.addTask { await connection.watchEvents() }
            group.addTask {
                for await message in connection.client.messages {
                    let arrival = WallClock.now()
                    guard
                        let occupancy = try? ZoneOccupancy(
                            payload: String(decoding: message.payload, as: UTF8.self))
                    else { continue }
                    let room = Int(occupancy.zone) - 1
                    let present = Set(occupancy.tags.map(\.id))
                    state.withLock { state in
                        received(
                            room: room, present: present, decided: occupancy.updated, at: arrival, hold: holdWindows,
                            settle: settleWindows, &state)
                    }
                }
            }
            try await connection.waitUntilConnected()
            let epoch = Int(WallClock.now() * 1000)
            let start = Measure.monotonic()
            firstSample = locatorPID.flatMap { ProcessSample(pid: $0) }
            for window in 0..<seconds {
                let due = start + Double(window)
                let wait = due - Measure.monotonic()
                if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
                // Move the probes whose hold is over, and give up on those the locator has not decided.
                state.withLock { state in
                    state.window = window
                    for index in state.probes.indices {
                        var probe = state.probes[index]
                        switch probe.phase {
                        case .holding(let until) where window >= until:
                            probe.inFirst.toggle()
                            probe.phase = .moving(zone: probe.inFirst ? probe.rooms.0 : probe.rooms.1, since: window)
                        case .moving(let zone, let since) where window - since > maximumWindows:
                            state.timeouts += 1
                            probe.phase = .settling(zone: zone)
                        default:
                            break
                        }
                        state.probes[index] = probe
                    }
                }
                for probe in state.withLock({ $0.probes }) {
                    load.place(probe.tag, at: probe.inFirst ? probe.points.0 : probe.points.1)
                }
                let probeTemplates = load.nextWindow().map { BatchTemplate($0, tagIDs: tagIDs) }
                let templates = zip(prepared[window % distinct], probeTemplates).map(BatchTemplate.joined)
                for (agent, template) in templates.enumerated() {
                    // Agents' windows have their own phases: spread the batches over the second.
                    let offset = start + Double(window) + Double(agent) / Double(templates.count)
                    let pause = offset - Measure.monotonic()
                    if pause > 0 { try await Task.sleep(for: .seconds(pause)) }
                    let time = WallClock.now()
                    let payload = template.payload(agent: agentIDs[agent], epoch: epoch, seq: window, time: time)
                    let carried = probeTemplates[agent].tags.compactMap { probeByTag[$0] }
                    if !carried.isEmpty {
                        state.withLock { state in
                            for index in carried {
                                state.probes[index].sent.append((window, time))
                                if state.probes[index].sent.count > 64 { state.probes[index].sent.removeFirst() }
                            }
                        }
                    }
                    try await connection.publish(readingTopics[agent], payload)
                    readings += template.count
                }
                windowsSent += 1
            }
            sendingTime = Measure.monotonic() - start
            lastSample = locatorPID.flatMap { ProcessSample(pid: $0) }
            try await Task.sleep(for: .seconds(1))
            connection.client.disconnect()
            try await group.waitForAll()
        }
        var locator: (first: ProcessSample, last: ProcessSample, seconds: Double)?
        if let firstSample, let lastSample { locator = (firstSample, lastSample, sendingTime) }
        emit(
            label: label, agents: agents, tagCount: tagCount, probes: probes.count, windows: windowsSent,
            readings: readings, seconds: sendingTime, final: state.withLock { $0 }, locator: locator)
        return .success
    }

    /// Prints the figures: the latency distribution, and the locator's CPU when it was watched.
    private static func emit(
        label: String, agents: Int, tagCount: Int, probes: Int, windows: Int, readings: Int, seconds: Double,
        final: State, locator: (first: ProcessSample, last: ProcessSample, seconds: Double)?
    ) {
        let sorted = final.latencies.sorted()
        func milliseconds(_ p: Double) -> JSONValue { Measure.quantile(sorted, p).map { .number($0 * 1000) } ?? .null }
        var locatorFields: [(String, JSONValue)] = []
        if let locator, locator.seconds > 0, readings > 0 {
            let cpu = locator.last.cpuSeconds - locator.first.cpuSeconds
            let cores = Double(onlineCores)
            locatorFields = [
                ("locator_cpu_seconds", .number(cpu)),
                ("locator_cpu_share_of_cores", .number(cpu / locator.seconds / cores)),
                ("locator_cpu_us_per_reading", .number(1e6 * cpu / Double(readings))),
                ("locator_vmhwm_kb", .number(Double(locator.last.peakResidentKB))),
                ("cores", .number(cores)),
            ]
        }
        let fields: [(String, JSONValue)] = [
            ("figure", .string(label)),
            ("agents", .number(Double(agents))), ("tags", .number(Double(tagCount))),
            ("probes", .number(Double(probes))), ("windows", .number(Double(windows))),
            ("readings_per_second", .number(Double(readings) / Double(max(windows, 1)))),
            // Above the windows' count when the bench could not keep real time: then its figures mean little.
            ("sending_seconds", .number(seconds)),
            ("samples", .number(Double(sorted.count))),
            ("p50_ms", milliseconds(0.5)), ("p90_ms", milliseconds(0.9)), ("p99_ms", milliseconds(0.99)),
            ("max_ms", milliseconds(1)),
            (
                "p50_to_decision_ms",
                Measure.quantile(final.toDecision.sorted(), 0.5).map { .number($0 * 1000) } ?? .null
            ),
            (
                "p99_to_decision_ms",
                Measure.quantile(final.toDecision.sorted(), 0.99).map { .number($0 * 1000) } ?? .null
            ),
            (
                "p50_decision_to_arrival_ms",
                Measure.quantile(final.toArrival.sorted(), 0.5).map { .number($0 * 1000) } ?? .null
            ),
            (
                "p99_decision_to_arrival_ms",
                Measure.quantile(final.toArrival.sorted(), 0.99).map { .number($0 * 1000) } ?? .null
            ),
            ("timeouts", .number(Double(final.timeouts))), ("unattributed", .number(Double(final.unattributed))),
            (
                "mean_windows_to_decide",
                .number(final.decisionWindows.reduce(0, +) / Double(max(final.decisionWindows.count, 1)))
            ),
        ]
        Measure.emit(fields + locatorFields)
    }

    /// An occupancy message arrived: if it names a moving probe in its new room, that is a sample.
    private static func received(
        room: Int, present: Set<TagIdentity>, decided: Double, at arrival: Double, hold: Int, settle: Int,
        _ state: inout State
    ) {
        for index in state.probes.indices where present.contains(state.probes[index].identity) {
            var probe = state.probes[index]
            defer { state.probes[index] = probe }
            switch probe.phase {
            case .settling(let zone) where zone == room:
                probe.phase = .holding(until: max(state.window + 1, settle))
            case .moving(let zone, let since) where zone == room:
                probe.phase = .holding(until: state.window + 1 + hold)
                // The batch that completed the decision: the newest one carrying the probe sent before the locator decided.
                guard let completing = probe.sent.last(where: { $0.time <= decided }), completing.window >= since
                else {
                    state.unattributed += 1
                    continue
                }
                state.latencies.append(arrival - completing.time)
                state.toDecision.append(decided - completing.time)
                state.toArrival.append(arrival - decided)
                state.decisionWindows.append(Double(completing.window - since + 1))
            default:
                break
            }
        }
    }
}
