import CommandLineSupport
import Synchronization
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsMQTT
import WhereaboutsSettings
import WhereaboutsWire

/// `whereabouts-bench stream`: publishes a stream of reading batches, as the agents of a ``BenchMap`` would send
/// them, as fast as the broker takes them; optionally waits until the locator has taken every reading.
///
/// Each window holds one batch per agent with all it heard of the synthetic tags (``SyntheticLoad``); `--distinct`
/// windows are prepared before the clock starts and played in a loop, every reading stamped with the wall clock as
/// its batch goes out. One connection publishes for every agent at QoS 1, at most two windows unacknowledged.
///
/// - Without `--wait-locator`, it prints when it started and finished publishing; the caller times the
///   subscriber (the broker's ceiling: `mosquitto_sub -C <messages>`).
/// - With `--wait-locator`, it follows the locator's metrics (run it with `--metrics-interval 0.1`) until
///   `readings_accepted` plus rejections have grown by the stream's readings, and prints the rate.
/// - With `--lead N`, a window is sent only when the locator has taken all but the last N windows (a paced load,
///   for memory at scale), and with `--locator-pid` the locator's memory and CPU are sampled meanwhile.
enum StreamCommand {
    struct Progress {
        var baseline: Int?
        var processed = 0
        var rejected = 0
        var reasons: [String: Int] = [:]
        var tagsTracked = 0
    }

    static let table: [Setting] = [
        .value("broker"), .value("label"), .value("agents"), .value("tags"), .value("windows"), .value("distinct"),
        .value("seed"), .value("lead"), .value("locator-pid"), .switchFlag("wait-locator"),
    ]

    static func run(_ settings: Settings) async throws -> ExitStatus {
        guard let broker = settings.value("broker") else { throw UsageError("--broker URL is required") }
        let agents = try settings.integer("agents") ?? 50
        let tagCount = try settings.integer("tags") ?? 1000
        let windows = try settings.integer("windows") ?? 100
        let distinct = try settings.integer("distinct") ?? 20
        let seed = UInt64(try settings.integer("seed") ?? 7)
        let waitsForLocator = try settings.switchValue("wait-locator")
        let lead = try settings.integer("lead")
        let locatorPID = try settings.integer("locator-pid").flatMap { Int32(exactly: $0) }
        let label = settings.value("label") ?? "stream"
        guard windows >= 1, distinct >= 1 else { throw UsageError("--windows and --distinct must be at least 1") }
        guard lead == nil || waitsForLocator else { throw UsageError("--lead needs --wait-locator") }

        let layout = try BenchMap(agents: agents)
        let map = layout.map
        var load = SyntheticLoad(map: map, width: layout.width, height: layout.height, tagCount: tagCount, seed: seed)
        let prepared = BatchTemplate.windows(of: &load, count: distinct)
        let readingsPerWindow = prepared.map { $0.reduce(0) { $0 + $1.count } }
        let topics = Topics(site: map.site.uuid)
        let agentIDs = map.agents.map(\.id)
        let readingTopics = try layout.readingTopics()

        let connection = try BenchConnection(broker: broker, clientID: "whereabouts-bench-\(label)")
        let progress = Shared(Progress())
        if waitsForLocator { try connection.client.subscribe(topics.locatorMetrics.name, qos: .atMostOnce) }

        var result: [(key: String, value: JSONValue)] = [("figure", .string(label))]
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await connection.client.run() }
            group.addTask { await connection.watchEvents() }
            group.addTask {
                for await message in connection.client.messages {
                    guard let metrics = try? LocatorMetrics(payload: String(decoding: message.payload, as: UTF8.self))
                    else { continue }
                    let rejected = metrics.readingsRejected.values.reduce(0, +)
                    progress.withLock { state in
                        state.processed = metrics.readingsAccepted + rejected
                        state.rejected = rejected
                        state.reasons = Dictionary(
                            uniqueKeysWithValues: metrics.readingsRejected.map { ($0.key.rawValue, $0.value) })
                        state.tagsTracked = metrics.tagsTracked
                        if state.baseline == nil { state.baseline = state.processed }
                    }
                }
            }
            try await connection.waitUntilConnected()
            var baseline = 0
            if waitsForLocator {
                let deadline = Measure.monotonic() + 30
                while true {
                    if let known = progress.withLock({ $0.baseline }) {
                        baseline = known
                        break
                    }
                    guard Measure.monotonic() < deadline else { throw RuntimeError("no metrics from the locator") }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            let firstSample = locatorPID.flatMap { ProcessSample(pid: $0) }
            var peakResident = firstSample?.residentKB ?? 0
            let epoch = Int(WallClock.now() * 1000)
            let start = WallClock.now()
            var sent = 0
            var bytes = 0
            var sentBefore: [Int] = []
            var drained = 0.0
            for window in 0..<windows {
                sentBefore.append(sent)
                if let lead, window >= lead {
                    let needed = baseline + sentBefore[window - lead]
                    while progress.withLock({ $0.processed }) < needed {
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
                if let locatorPID, let sample = ProcessSample(pid: locatorPID) {
                    peakResident = max(peakResident, sample.residentKB)
                }
                let templates = prepared[window % distinct]
                let time = WallClock.now()
                for (agent, template) in templates.enumerated() {
                    let payload = template.payload(agent: agentIDs[agent], epoch: epoch, seq: window, time: time)
                    bytes += payload.count
                    try await connection.publish(readingTopics[agent], payload)
                }
                sent += readingsPerWindow[window % distinct]
                let drainStart = Measure.monotonic()
                try await connection.drain(to: 2 * agents)
                drained += Measure.monotonic() - drainStart
            }
            try await connection.drain(to: 0)
            let published = WallClock.now()
            result += [
                ("agents", .number(Double(agents))), ("tags", .number(Double(tagCount))),
                ("windows", .number(Double(windows))), ("messages", .number(Double(windows * agents))),
                ("readings", .number(Double(sent))), ("bytes", .number(Double(bytes))),
                ("readings_per_message", .number(Double(sent) / Double(windows * agents))),
                ("start", .number(start)), ("published", .number(published)), ("drain_seconds", .number(drained)),
            ]
            if waitsForLocator {
                let deadline = Measure.monotonic() + 600
                while progress.withLock({ $0.processed }) < baseline + sent {
                    guard Measure.monotonic() < deadline else { throw RuntimeError("the locator did not keep up") }
                    if let locatorPID, let sample = ProcessSample(pid: locatorPID) {
                        peakResident = max(peakResident, sample.residentKB)
                    }
                    try await Task.sleep(for: .milliseconds(5))
                }
                let end = WallClock.now()
                let state = progress.withLock { $0 }
                result += [
                    ("end", .number(end)), ("elapsed", .number(end - start)),
                    ("readings_per_second", .number(Double(sent) / (end - start))),
                    ("rejected", .number(Double(state.rejected))),
                    (
                        "rejected_by_reason",
                        .object(
                            JSONObject(
                                state.reasons.sorted { $0.key < $1.key }.map { ($0.key, .number(Double($0.value))) }))
                    ),
                    ("tags_tracked", .number(Double(state.tagsTracked))),
                ]
                if let locatorPID, let firstSample, let last = ProcessSample(pid: locatorPID) {
                    let cpu = last.cpuSeconds - firstSample.cpuSeconds
                    result += [
                        ("locator_vmrss_max_kb", .number(Double(max(peakResident, last.residentKB)))),
                        ("locator_vmhwm_kb", .number(Double(last.peakResidentKB))),
                        ("locator_rss_anon_kb", .number(Double(last.anonymousKB))),
                        ("locator_cpu_seconds", .number(cpu)),
                        ("locator_cpu_percent", .number(100 * cpu / (end - start))),
                        ("locator_cpu_us_per_reading", .number(1e6 * cpu / Double(sent))),
                    ]
                }
            }
            connection.client.disconnect()
            try await group.waitForAll()
        }
        Measure.emit(result)
        return .success
    }
}
