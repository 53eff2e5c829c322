import BrokerFixture
import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsMQTT
import WhereaboutsWire

/// Batches an agent sent that the locator never got, counted by a real locator through a broker crash and its own
/// `kill -9`: `batches_missing` must be what was lost, with a state directory and without.
@Suite("Gap counting", .serialized)
struct GapCountingTests {
    /// A reading that names its batch: agent `a` (its index in the map), batch `b` of the test.
    static func reading(_ tests: LocatorEndToEndTests, agent: Int, batch: Int, time: Double) -> ReadingBatch.Reading {
        ReadingBatch.Reading(
            tag: .iBeacon(uuid: tests.map.site.uuid, major: UInt16(100 + agent), minor: UInt16(batch)), time: time,
            rssi: -60, count: 3)
    }

    /// The batches the recording holds, as (agent index, batch) of ``reading(_:agent:batch:time:)``.
    static func recorded(_ path: String) -> Set<[Int]> {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        var batches: Set<[Int]> = []
        for record in JSONLines.decode(text, as: RecordedReading.self).records {
            guard case .iBeacon(_, let major, let minor) = record.tag, major >= 100 else { continue }
            batches.insert([Int(major) - 100, Int(minor)])
        }
        return batches
    }

    /// The last metrics' `batches_missing`.
    static func missing(_ collector: Collector, _ topics: Topics) -> Int? {
        collector.last(topics.locatorMetrics.name).flatMap { try? LocatorMetrics(payload: $0) }?.batchesMissing
    }

    /// Every agent sends batch `batch`.
    static func round(_ tests: LocatorEndToEndTests, _ agents: [String: TestAgent], batch: Int) async throws {
        for (index, agent) in tests.map.agents.enumerated() {
            let time = now()
            try await #require(agents[agent.id]).send(
                [reading(tests, agent: index, batch: batch, time: time)], sent: time)
        }
    }

    @Test(
        "a broker crash that loses the batches queued for a paused locator: batches_missing says exactly how many",
        arguments: [false, true])
    func brokerCrash(stateDirectory: Bool) async throws {
        let tests = try LocatorEndToEndTests()
        try await tests.withSite { broker, collector, agents, scratch in
            let record = scratch.file("readings.jsonl")
            var extra = ["--warm-up", "1", "--record", record, "--metrics-interval", "0.5"]
            if stateDirectory { extra += ["--state-dir", scratch.file("state")] }
            let locator = try LocatorProcess(map: tests.mapPath, broker: broker, scratch: scratch, extra: extra)
            let topics = tests.topics
            try await waitFor("the locator to come online") { collector.last(topics.locatorStatus.name) == "online" }
            let count = tests.map.agents.count
            for batch in 0..<4 { try await Self.round(tests, agents, batch: batch) }
            try await waitFor("the first rounds recorded") { Self.recorded(record).count == 4 * count }
            // Paused, the locator takes nothing: the broker queues what the agents send, past what its socket holds.
            locator.process.send(SIGSTOP)
            for batch in 4..<104 {
                try await Self.round(tests, agents, batch: batch)
                if batch % 10 == 9 { try await Task.sleep(for: .milliseconds(20)) }
            }
            try await Task.sleep(for: .milliseconds(500))
            await broker.kill()
            locator.process.send(SIGCONT)
            try await broker.restart()
            try await waitFor("the locator to reconnect") {
                locator.log.components(separatedBy: "connected to ").count > 2
            }
            for agent in agents.values { try await agent.waitUntilConnected() }
            try await Task.sleep(for: .seconds(1))
            for batch in 104..<108 { try await Self.round(tests, agents, batch: batch) }
            try await waitFor("the last round recorded") {
                let recorded = Self.recorded(record)
                return (0..<count).allSatisfy { recorded.contains([$0, 107]) }
            }
            // Told every half second; waited for, up to 20 s, until it says as many as were lost. What was taken is
            // read again each time: after the reconnection the agents' queued batches arrive in no set order, and one
            // recorded after the last round's would otherwise count as lost.
            var taken = Self.recorded(record)
            var lost = 108 * count - taken.count
            var patience = Patience(.seconds(20))
            while Self.missing(collector, topics) != lost, !patience.isExhausted() {
                try await Task.sleep(for: .milliseconds(100))
                taken = Self.recorded(record)
                lost = 108 * count - taken.count
            }
            let reported = Self.missing(collector, topics)
            print(
                "broker kill -9 with a paused locator (\(stateDirectory ? "with" : "without") --state-dir): "
                    + "\(108 * count) batches sent, \(taken.count) taken, \(lost) lost; batches_missing "
                    + "\(reported.map(String.init) ?? "none")")
            #expect(lost > 0, "the crash should have lost the batches queued at the broker")
            #expect(reported == lost)
            #expect(await locator.stop() == 0)
        }
    }

    @Test("an agent run that began while the locator watched, and whose first 6 batches never came: counted")
    func lostFirstBatches() async throws {
        let tests = try LocatorEndToEndTests()
        try await tests.withSite { broker, collector, agents, scratch in
            let locator = try LocatorProcess(
                map: tests.mapPath, broker: broker, scratch: scratch,
                extra: ["--warm-up", "1", "--metrics-interval", "0.5"])
            let topics = tests.topics
            try await waitFor("the locator to come online") { collector.last(topics.locatorStatus.name) == "online" }
            // East starts now, a run the locator has never heard of: its first 6 batches were lost (a full outbox
            // while the broker was away drops the oldest), and its first to arrive is seq 6.
            // The locator counts a run from seq 0 only when it began more than the clock skew allowed between the
            // agents and the locator (5 s) after the locator connected: before, a restarted locator would count the
            // batches its last run took.
            let online = now()
            try #require(agents["east"]).client.disconnect()
            try await Task.sleep(for: .seconds(6))
            let east = try TestAgent("east", site: tests.map.site.uuid, broker: broker, epoch: Int(now() * 1000))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await east.run() }
                try await east.waitUntilConnected()
                east.skip(6)
                for batch in 0..<3 {
                    try await east.send([Self.reading(tests, agent: 3, batch: batch, time: now())], sent: now())
                }
                var patience = Patience(.seconds(20))
                while Self.missing(collector, topics) != 6, !patience.isExhausted() {
                    try await Task.sleep(for: .milliseconds(100))
                }
                let reported = Self.missing(collector, topics)
                print(
                    "an agent's run begun \(Int(now() - online)) s after the locator connected, its first 6 batches "
                        + "lost: batches_missing \(reported.map(String.init) ?? "none")")
                #expect(reported == 6)
                #expect(locator.log.contains("agent east: 6 batches missing"))
                east.client.disconnect()
                group.cancelAll()
            }
            #expect(await locator.stop() == 0)
        }
    }

    @Test("a locator kill -9 between two saves of its ledger: the next run counts exactly the batches no run took")
    func locatorKill() async throws {
        let tests = try LocatorEndToEndTests()
        try await tests.withSite { broker, collector, agents, scratch in
            let record = scratch.file("readings.jsonl")
            let extra = [
                "--warm-up", "1", "--record", record, "--metrics-interval", "0.5", "--state-dir", scratch.file("state"),
            ]
            let topics = tests.topics
            let count = tests.map.agents.count
            let first = try LocatorProcess(map: tests.mapPath, broker: broker, scratch: scratch, extra: extra)
            try await waitFor("the locator to come online") { collector.last(topics.locatorStatus.name) == "online" }
            // 8 s of rounds at 5 a second: the ledger was last saved up to 5 s before the kill.
            var batch = 0
            let start = ContinuousClock.now
            while ContinuousClock.now - start < .seconds(8) {
                try await Self.round(tests, agents, batch: batch)
                batch += 1
                try await Task.sleep(for: .milliseconds(200))
            }
            // A burst, and the kill in the middle of it: the inbox's batches were acknowledged and never taken.
            for _ in 0..<30 {
                try await Self.round(tests, agents, batch: batch)
                batch += 1
            }
            await first.kill()
            let afterKill = Self.recorded(record).count
            let metricsBefore = collector.all(topics.locatorMetrics.name).count
            let second = try LocatorProcess(map: tests.mapPath, broker: broker, scratch: scratch, extra: extra)
            try await waitFor("the second run to connect") { second.log.contains("connected to ") }
            for _ in 0..<4 {
                try await Self.round(tests, agents, batch: batch)
                batch += 1
                try await Task.sleep(for: .milliseconds(200))
            }
            let last = batch - 1
            try await waitFor("the last round recorded") { Self.recorded(record).contains([count - 1, last]) }
            let taken = Self.recorded(record)
            let lost = batch * count - taken.count
            var patience = Patience(.seconds(20))
            // The second run's metrics: more than the first run had told, and a second since it connected.
            while Self.missing(collector, topics) != lost
                || collector.all(topics.locatorMetrics.name).count < metricsBefore + 2,
                !patience.isExhausted()
            {
                try await Task.sleep(for: .milliseconds(100))
            }
            let reported = Self.missing(collector, topics)
            print(
                "locator kill -9 with --state-dir: \(batch * count) batches sent, \(afterKill) taken before the kill, "
                    + "\(taken.count) in all, \(lost) lost; batches_missing \(reported.map(String.init) ?? "none")")
            #expect(second.log.contains("batch ledger journal"), "the journal was replayed: \(second.log)")
            #expect(reported == lost)
            #expect(await second.stop() == 0)
        }
    }
}
