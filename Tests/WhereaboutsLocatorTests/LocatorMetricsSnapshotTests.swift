import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

@testable import WhereaboutsLocator

/// The figures the metrics endpoint serves: counted by the pipeline where batches are taken, handed over by the
/// service once a second, and written in the Prometheus text format; and the shipped Grafana dashboard, which must
/// ask only for what is written.
@Suite("Locator metrics snapshot")
struct LocatorMetricsSnapshotTests {
    let start = 1_764_000_000.0

    /// The sample names of an exposition (`name` of each `name{…} value` line).
    static func sampleNames(_ text: String) -> Set<String> {
        Set(
            text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap {
                $0.split(whereSeparator: { $0 == "{" || $0 == " " }).first.map(String.init)
            })
    }

    /// A snapshot with every figure set, so that every family and sample shows in its text.
    static func fullSnapshot() -> LocatorMetricsSnapshot {
        var snapshot = LocatorMetricsSnapshot()
        snapshot.readingsByAgent = ["g-lobby": 10, "f-lab": 3]
        snapshot.readingsRejected = [.malformedJSON: 2]
        snapshot.batches = 14
        snapshot.batchesMissing = ["g-lobby": 1, "f-lab": 0]
        snapshot.agentsUp = ["g-lobby": true, "f-lab": false]
        snapshot.tagsTracked = 4
        snapshot.tagsEvicted = 7
        snapshot.zonesUnknown = 2
        snapshot.outbox = LocatorMetrics.Outbox(
            held: 3, bytes: 900, peakBytes: 1000, limitBytes: 4096, shed: 5, dropped: 1, coalesced: 0)
        snapshot.updateLatency.observe(0.02)
        snapshot.inputLag.observe(0.3)
        snapshot.role = .standby
        return snapshot
    }

    @Test("readings are counted per agent where batches are taken; every agent of the map is listed, from 0")
    func readingsPerAgent() throws {
        var harness = try PipelineHarness()
        harness.perform(harness.pipeline.connected(now: start))
        try harness.agentsSayOnline(now: start)
        harness.run(tag: try alice(), at: Point(x: 5, y: 4), from: start, seconds: 6)
        let snapshot = harness.pipeline.metricsSnapshot(now: start + 6)
        #expect(Set(snapshot.readingsByAgent.keys) == Set(harness.map.agents.map(\.id)))
        #expect(snapshot.readingsByAgent.values.reduce(0, +) == harness.pipeline.counters.accepted)
        #expect(snapshot.readingsByAgent["g-lobby"] == 6, "one reading a second from the agent in the tag's room")
        #expect(snapshot.batches == 6 * harness.map.agents.count)
        #expect(snapshot.agentsUp["g-lobby"] == true)
        #expect(snapshot.tagsTracked == 1)
        #expect(snapshot.role == .single)
        // A batch that is not JSON is refused and counted under its reason, and the text says so.
        let lobby = try #require(AgentID("g-lobby"))
        harness.perform(
            harness.pipeline.receive(
                topic: harness.pipeline.topics.readings(agent: lobby).name, payload: Array("{".utf8), now: start + 6))
        let text = harness.pipeline.metricsSnapshot(now: start + 6).prometheusText(version: "1", startTime: start)
        #expect(text.contains("whereabouts_readings_rejected_total{reason=\"malformed_json\"} 1\n"))
        #expect(text.contains("whereabouts_readings_total{agent=\"g-lobby\"} 6\n"))
    }

    @Test("each batch's latency lands in the histogram: arrival to the update that took it")
    func latencyHistogram() throws {
        var harness = try PipelineHarness()
        harness.perform(harness.pipeline.connected(now: start))
        var taken = 0
        for second in 0..<3 {
            let now = start + Double(second)
            for (topic, payload) in harness.batches(tag: try alice(), at: Point(x: 5, y: 4), floor: 1, time: now) {
                harness.perform(harness.pipeline.receive(topic: topic, payload: payload, now: now))
                taken += 1
            }
            // 30 ms later: every batch of this second waited 30 ms for its update.
            harness.perform(harness.pipeline.tick(now: now + 0.03))
        }
        let latency = harness.pipeline.metricsSnapshot(now: start + 3).updateLatency
        #expect(latency.count == taken)
        let index = try #require(latency.bounds.firstIndex(of: 0.05))
        #expect(latency.cumulativeCounts[index - 1] == 0, "none at or below 25 ms")
        #expect(latency.cumulativeCounts[index] == taken, "all at or below 50 ms")
        #expect(abs(latency.sum - 0.03 * Double(taken)) < 1e-4, "Unix times lose a few ns each")
        #expect(harness.pipeline.metricsSnapshot(now: start + 3).inputLag.count == taken)
    }

    @Test("counts carry on over a new map: readings per agent and evicted tags never fall")
    func countersSurviveReload() throws {
        var configuration = LocatorPipeline.Configuration()
        configuration.engine.maximumTags = 1
        var harness = try PipelineHarness(configuration: configuration)
        harness.perform(harness.pipeline.connected(now: start))
        let strangers = try (1...3).map { try #require(TagIdentity("ibeacon-\(site)-900-\($0)")) }
        for (index, tag) in strangers.enumerated() {
            harness.run(tag: tag, at: Point(x: 5, y: 4), from: start + Double(index * 3), seconds: 3)
        }
        let before = harness.pipeline.metricsSnapshot(now: start + 9)
        #expect(before.tagsEvicted == 2, "each stranger evicted the one before, at a limit of one tag")
        let lobbyBefore = try #require(before.readingsByAgent["g-lobby"])
        #expect(lobbyBefore == 9)
        harness.perform(harness.pipeline.replaceMap(harness.map, now: start + 9))
        let after = harness.pipeline.metricsSnapshot(now: start + 9)
        #expect(after.tagsEvicted == 2)
        #expect(after.readingsByAgent["g-lobby"] == lobbyBefore)
        harness.run(tag: strangers[0], at: Point(x: 5, y: 4), from: start + 10, seconds: 2)
        let later = harness.pipeline.metricsSnapshot(now: start + 12)
        #expect(later.readingsByAgent["g-lobby"] == lobbyBefore + 2)
        #expect(later.readingsByAgent.values.reduce(0, +) == harness.pipeline.counters.accepted)
    }

    @Test("the service hands a snapshot to the endpoint once a second at a tick, and none without an endpoint")
    func serviceHandsOver() throws {
        var without = try LocatorServiceHarness()
        without.connect(at: ServiceTime(now: start, monotonic: start))
        for second in 0..<3 { without.second(second, from: start, alice: try alice()) }
        #expect(without.snapshots.isEmpty)

        var harness = try LocatorServiceHarness(snapshotInterval: 1)
        harness.connect(at: ServiceTime(now: start, monotonic: start))
        for second in 0..<4 { harness.second(second, from: start, alice: try alice()) }
        // Ticks every 0.25 s more: still one a second.
        for quarter in 1..<8 {
            let time = ServiceTime(now: start + 3.5 + Double(quarter) / 4, monotonic: start + 3.5 + Double(quarter) / 4)
            harness.perform(harness.state.tick(at: time), at: time)
        }
        #expect(harness.snapshots.count == 5, "at 0.5, 1.5, 2.5, 3.5 and 4.5 s")
        #expect(harness.snapshots.allSatisfy { $0.role == .single })
        let last = try #require(harness.snapshots.last)
        #expect(last.readingsByAgent.values.reduce(0, +) == harness.state.pipeline.pipeline.counters.accepted)
        #expect(last.outbox != nil, "the outbox as the tick saw it")
    }

    @Test("one of a pair says standby until it holds the lease, then active")
    func role() throws {
        var harness = try LocatorServiceHarness.holder(from: start, alice: try alice(), snapshotInterval: 1)
        #expect(!harness.snapshots.isEmpty)
        #expect(harness.snapshots.allSatisfy { $0.role == .standby })
        harness.second(4, from: start, alice: try alice())
        #expect(harness.snapshots.last?.role == .active)
        let text = try #require(harness.snapshots.last).prometheusText(version: "1", startTime: start)
        #expect(text.contains("whereabouts_lease_role{role=\"active\"} 1\n"))
        #expect(text.contains("whereabouts_lease_role{role=\"standby\"} 0\n"))
        #expect(text.contains("whereabouts_lease_role{role=\"single\"} 0\n"))
    }

    @Test("the text has HELP and TYPE for every family, sorted agents, build info and the start time")
    func text() throws {
        let text = Self.fullSnapshot().prometheusText(version: "0.1.0 \"rc\"", startTime: 1_764_000_000.5)
        let typed = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map {
            $0.split(separator: " ")[2]
        }
        let helped = text.split(separator: "\n").filter { $0.hasPrefix("# HELP ") }.map { $0.split(separator: " ")[2] }
        #expect(typed == helped)
        #expect(Set(typed).count == typed.count, "each family once")
        let histograms: Set<String> = ["whereabouts_update_latency_seconds", "whereabouts_input_lag_seconds"]
        for name in Self.sampleNames(text) {
            let family = histograms.first { name.hasPrefix($0) } ?? name
            #expect(typed.contains(Substring(family)), "\(name) has a TYPE line")
        }
        #expect(
            text.contains(
                "whereabouts_readings_total{agent=\"f-lab\"} 3\nwhereabouts_readings_total{agent=\"g-lobby\"} 10\n"))
        #expect(text.contains("# TYPE whereabouts_readings_total counter\n"))
        #expect(text.contains("# TYPE whereabouts_batches_missing gauge\n"))
        #expect(text.contains("# TYPE whereabouts_update_latency_seconds histogram\n"))
        #expect(text.contains("whereabouts_update_latency_seconds_bucket{le=\"0.025\"} 1\n"))
        #expect(text.contains("whereabouts_agent_up{agent=\"f-lab\"} 0\n"))
        #expect(text.contains("whereabouts_outbox_limit_bytes 4096\n"))
        #expect(text.contains("whereabouts_build_info{version=\"0.1.0 \\\"rc\\\"\"} 1\n"))
        #expect(text.contains("process_start_time_seconds 1764000000.5\n"))
        #expect(text.hasSuffix("\n"))
    }

    /// The metric names a PromQL expression reads: identifiers of ours or `process_`, not followed by `(` (a
    /// function) and not inside quotes.
    static func metricNames(in expression: String) -> [String] {
        let unquoted = expression.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 0 }.map(\.element).joined(separator: " ")
        var names: [String] = []
        var current = ""
        for character in unquoted + " " {
            if character.isLetter || character.isNumber || character == "_" || character == ":" {
                current.append(character)
                continue
            }
            if current.hasPrefix("whereabouts_") || current.hasPrefix("process_"), character != "(" {
                names.append(current)
            }
            current = ""
        }
        return names
    }

    @Test("the shipped Grafana dashboard is valid JSON and asks only for metrics the endpoint serves")
    func dashboard() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let data = try #require(
            FileManager.default.contents(atPath: root.appendingPathComponent("deploy/grafana/whereabouts.json").path))
        let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        var expressions: [String] = []
        for panel in panels where panel["type"] as? String != "row" {
            let targets = try #require(panel["targets"] as? [[String: Any]], "\(panel["title"] ?? "a panel")")
            #expect(!targets.isEmpty)
            for target in targets { expressions.append(try #require(target["expr"] as? String)) }
        }
        let templating = try #require((dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]])
        for variable in templating { if let query = variable["definition"] as? String { expressions.append(query) } }
        let served = Self.sampleNames(Self.fullSnapshot().prometheusText(version: "1", startTime: start))
        var asked: Set<String> = []
        for expression in expressions { asked.formUnion(Self.metricNames(in: expression)) }
        #expect(asked.count >= 15, "the dashboard reads most of the families: \(asked.sorted())")
        #expect(asked.subtracting(served).isEmpty, "not served: \(asked.subtracting(served).sorted())")
        // The label names it groups by are ours or Prometheus's own.
        let labels: Set<String> = ["agent", "reason", "role", "version", "le", "job", "instance"]
        for expression in expressions {
            for part in expression.components(separatedBy: "by (").dropFirst() {
                let grouped = part.prefix { $0 != ")" }.split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
                #expect(Set(grouped).isSubset(of: labels), "\(expression)")
            }
        }
    }

    @Test("the names of a PromQL expression are read as the dashboard check needs")
    func promQLNames() {
        #expect(
            Self.metricNames(
                in: "histogram_quantile(0.5, sum by (le) (rate(whereabouts_update_latency_seconds_bucket"
                    + "{job=~\"whereabouts_x\"}[5m])))") == ["whereabouts_update_latency_seconds_bucket"])
        #expect(Self.metricNames(in: "time() - process_start_time_seconds") == ["process_start_time_seconds"])
        #expect(Self.metricNames(in: "whereabouts_nope_total") == ["whereabouts_nope_total"])
    }
}
