import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsMapFile
import WhereaboutsWire

/// The service decodes readings batches off its loop (``LocatorPipeline/preparation``); what the pipeline makes of a
/// batch must not depend on where it was decoded.
@Suite("Batches decoded off the locator's loop")
struct PreparedBatchTests {
    let start = 1_764_000_000.0

    /// Hands a message to the pipeline as the service does: decoded by the preparation (at `decodedAt`, by default a
    /// fifth of a second before it is taken), then taken at `now`.
    static func receivePrepared(
        _ harness: inout PipelineHarness, topic: String, payload: [UInt8], now: Double, decodedAt: Double? = nil
    ) {
        if let prepared = harness.pipeline.preparation(topic, payload, decodedAt ?? now - 0.2) {
            harness.perform(harness.pipeline.receive(topic: topic, payload: payload, prepared: prepared, now: now))
        } else {
            harness.perform(harness.pipeline.receive(topic: topic, payload: payload, now: now))
        }
    }

    @Test("walks, duplicates, hostile and foreign batches: the same outputs, logs and counts either way")
    func sameOutcome() throws {
        var direct = try PipelineHarness()
        var prepared = try PipelineHarness()
        let lobby = try #require(AgentID("g-lobby"))
        let stranger = try #require(AgentID("not-in-the-map"))
        let topics = direct.pipeline.topics
        var second = 0
        for x in stride(from: 2.0, through: 30.0, by: 1.0) {
            let now = start + Double(second)
            second += 1
            var messages = direct.batches(tag: try alice(), at: Point(x: x, y: 4), floor: 1, time: now)
            _ = prepared.batches(tag: try alice(), at: Point(x: x, y: 4), floor: 1, time: now)  // the same seqs
            messages.append(messages[0])  // a duplicate
            messages.append((topics.readings(agent: lobby).name, Array(#"{"v":1,"agent":"g-lobby""#.utf8)))
            let strangers = ReadingBatch(agent: stranger, epoch: 1, seq: second, sent: now, readings: [])
            messages.append((topics.readings(agent: stranger).name, Array(strangers.payload.utf8)))
            let bad = ReadingBatch.Reading(tag: try alice(), time: now, rssi: 99, count: 1, variance: nil, power: nil)
            let badBatch = ReadingBatch(agent: lobby, epoch: 2, seq: second, sent: now, readings: [bad])
            messages.append((topics.readings(agent: lobby).name, Array(badBatch.payload.utf8)))
            for (topic, payload) in messages {
                direct.perform(direct.pipeline.receive(topic: topic, payload: payload, now: now))
                Self.receivePrepared(&prepared, topic: topic, payload: payload, now: now)
            }
            direct.perform(direct.pipeline.tick(now: now))
            prepared.perform(prepared.pipeline.tick(now: now))
        }
        #expect(direct.pipeline.counters.accepted > 100)
        #expect(direct.pipeline.counters.rejected[.duplicateBatch, default: 0] > 0)
        #expect(direct.pipeline.counters.rejected[.unknownAgent, default: 0] > 0)
        #expect(direct.pipeline.counters.rejected[.rssiOutOfRange, default: 0] > 0)
        #expect(prepared.pipeline.counters == direct.pipeline.counters)
        #expect(prepared.publications == direct.publications)
        #expect(prepared.logs == direct.logs)
        #expect(!direct.events.isEmpty)
    }

    @Test("a batch decoded a simulated minute before or after it is taken gets the verdicts it gets when taken")
    func decodedLongBefore() throws {
        var direct = try PipelineHarness()
        var prepared = try PipelineHarness()
        let lobby = try #require(AgentID("g-lobby"))
        let topic = direct.pipeline.topics.readings(agent: lobby).name
        // Times on both sides of the age limit (60 s) and of the future skew (5 s), at the time taken and at the time
        // decoded, up to a minute apart (a simulation at 300 times real time, between two batches).
        for (round, gap) in [-60.0, -30, 30, 60].enumerated() {
            let now = start + 100 + Double(round) * 200
            let decodedAt = now + gap
            var times: [Double] = []
            for base in [now, decodedAt] { times += [base - 60.5, base - 59.5, base + 4.5, base + 5.5] }
            let readings = try times.map {
                ReadingBatch.Reading(tag: try alice(), time: $0, rssi: -60, count: 1, variance: nil, power: nil)
            }
            for (index, sent) in [now - 1, now + 5.5, decodedAt + 5.5, decodedAt - 1].enumerated() {
                let batch = ReadingBatch(
                    agent: lobby, epoch: 1, seq: round * 10 + index, sent: max(sent, 0), readings: readings)
                let payload = Array(batch.payload.utf8)
                direct.perform(direct.pipeline.receive(topic: topic, payload: payload, now: now))
                Self.receivePrepared(&prepared, topic: topic, payload: payload, now: now, decodedAt: decodedAt)
            }
        }
        let rejected = direct.pipeline.counters.rejected
        #expect(rejected[.timeTooOld, default: 0] > 0)
        #expect(rejected[.timeInFuture, default: 0] > 0)
        #expect(rejected[.badSentTime, default: 0] > 0)
        #expect(direct.pipeline.counters.accepted > 0)
        #expect(prepared.pipeline.counters == direct.pipeline.counters)
        #expect(prepared.logs == direct.logs)
        #expect(prepared.publications == direct.publications)
    }

    @Test("a batch decoded under the map before a reload is decoded again under the new map")
    func reloadBetween() throws {
        var harness = try PipelineHarness()
        let full = harness.pipeline.map
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let data = try #require(
            FileManager.default.contents(atPath: root.appendingPathComponent("maps/demo-office.json").path))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["agents"] = (object["agents"] as? [[String: Any]])?.filter { ($0["id"] as? String) != "g-lobby" }
        let smaller = try FloorMap.parse(Array(try JSONSerialization.data(withJSONObject: object))).get()
        #expect(smaller.agentIndex(of: "g-lobby") == nil)
        harness.pipeline = LocatorPipeline(map: smaller)
        let lobby = try #require(AgentID("g-lobby"))
        let reading = ReadingBatch.Reading(tag: try alice(), time: start, rssi: -60, count: 5, variance: 4, power: -59)
        let payload = Array(ReadingBatch(agent: lobby, epoch: 1, seq: 1, sent: start, readings: [reading]).payload.utf8)
        let topic = harness.pipeline.topics.readings(agent: lobby).name

        // Decoded while the map does not have the agent; taken after a reload that adds it.
        let early = try #require(harness.pipeline.preparation(topic, payload, start))
        harness.perform(harness.pipeline.replaceMap(full, now: start))
        harness.perform(harness.pipeline.receive(topic: topic, payload: payload, prepared: early, now: start))
        #expect(harness.pipeline.counters.accepted == 1)
        #expect(harness.pipeline.counters.rejected.isEmpty)

        // And the other way: decoded with the agent, taken after a reload that removes it.
        let next = Array(ReadingBatch(agent: lobby, epoch: 1, seq: 2, sent: start, readings: [reading]).payload.utf8)
        let late = try #require(harness.pipeline.preparation(topic, next, start + 1))
        harness.perform(harness.pipeline.replaceMap(smaller, now: start + 1))
        harness.perform(harness.pipeline.receive(topic: topic, payload: next, prepared: late, now: start + 1))
        #expect(harness.pipeline.counters.accepted == 1)
        #expect(harness.pipeline.counters.rejected[.unknownAgent] == 1)
    }

    @Test("only readings topics are prepared")
    func onlyReadings() throws {
        let harness = try PipelineHarness()
        let topics = harness.pipeline.topics
        let lobby = try #require(AgentID("g-lobby"))
        #expect(harness.pipeline.preparation(topics.agentStatus(agent: lobby).name, Array("online".utf8), start) == nil)
        #expect(harness.pipeline.preparation(Topics.homeAssistantStatus.name, Array("online".utf8), start) == nil)
        #expect(harness.pipeline.preparation(topics.readings(agent: lobby).name, Array("{}".utf8), start) != nil)
    }
}
