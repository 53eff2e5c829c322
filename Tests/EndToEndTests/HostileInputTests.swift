import BrokerFixture
import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsMQTT
import WhereaboutsWire

/// Hostile payloads through a real broker into whereabouts-locator: every one is counted, nothing crashes, and
/// the valid readings sent in between are all used.
@Suite("Locator under hostile input", .serialized)
struct HostileInputTests {
    static let site = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
    static let tag = "ibeacon-\(site)-7-1"

    /// One hostile payload and the topic's agent it is sent as.
    struct Case {
        var name: String
        var agent: String
        var payload: [UInt8]
    }

    static func batch(_ agent: String, seq: Int, time: Double, reading: String? = nil, extra: String = "") -> String {
        let body = reading ?? #"{"tag":"\#(tag)","t":\#(time),"rssi":-70,"n":4,"var":3}"#
        return #"{"v":1,"agent":"\#(agent)","epoch":7,"seq":\#(seq),"sent":\#(time),"readings":[\#(body)]\#(extra)}"#
    }

    static func corpus(time: Double) -> [Case] {
        func text(_ name: String, _ payload: String, agent: String = "west") -> Case {
            Case(name: name, agent: agent, payload: Array(payload.utf8))
        }
        let reading = { (body: String) in batch("west", seq: 900, time: time, reading: body) }
        let manyReadings = (0..<10_001).map { _ in #"{"tag":"\#(tag)","t":\#(time),"rssi":-70}"# }.joined(
            separator: ",")
        return [
            Case(name: "1 MiB payload", agent: "west", payload: Array(repeating: UInt8(ascii: " "), count: 1 << 20)),
            // Just over the payload limit, under the packet limit the broker is told: it arrives, and is refused.
            Case(
                name: "256 KiB + 1 payload", agent: "west", payload: Array(repeating: UInt8(ascii: " "), count: 262_145)
            ),
            text("10,000-deep nesting", String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)),
            text("NaN", reading(#"{"tag":"\#(tag)","t":\#(time),"rssi":NaN}"#)),
            text(
                "RSSI +50", batch("west", seq: 901, time: time, reading: #"{"tag":"\#(tag)","t":\#(time),"rssi":50}"#)),
            text(
                "RSSI as a string",
                batch("west", seq: 902, time: time, reading: #"{"tag":"\#(tag)","t":\#(time),"rssi":"-70"}"#)),
            text("unknown agent", batch("ghost", seq: 1, time: time), agent: "ghost"),
            text("topic and payload disagree", batch("east", seq: 903, time: time)),
            text("missing readings", #"{"v":1,"agent":"west","epoch":7,"seq":904,"sent":\#(time)}"#),
            text("unknown version", #"{"v":2,"agent":"west","epoch":7,"seq":905,"sent":\#(time),"readings":[]}"#),
            text("negative seq", #"{"v":1,"agent":"west","epoch":7,"seq":-1,"sent":\#(time),"readings":[]}"#),
            text("huge seq", #"{"v":1,"agent":"west","epoch":7,"seq":1e30,"sent":\#(time),"readings":[]}"#),
            text(
                "bad tag",
                batch("west", seq: 906, time: time, reading: #"{"tag":"ibeacon-zzz","t":\#(time),"rssi":-70}"#)),
            text("empty payload", ""),
            text("top-level array", "[1,2,3]"),
            Case(name: "not UTF-8", agent: "west", payload: [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D]),
            text(
                "count 0",
                batch("west", seq: 907, time: time, reading: #"{"tag":"\#(tag)","t":\#(time),"rssi":-70,"n":0}"#)),
            text(
                "negative variance",
                batch("west", seq: 908, time: time, reading: #"{"tag":"\#(tag)","t":\#(time),"rssi":-70,"var":-1}"#)),
            text(
                "time in the future",
                batch("west", seq: 909, time: time, reading: #"{"tag":"\#(tag)","t":\#(time + 3600),"rssi":-70}"#)),
            text(
                "time too old",
                batch("west", seq: 910, time: time, reading: #"{"tag":"\#(tag)","t":\#(time - 3600),"rssi":-70}"#)),
            text(
                "power out of range",
                batch("west", seq: 911, time: time, reading: #"{"tag":"\#(tag)","t":\#(time),"rssi":-70,"power":99}"#)),
            text(
                "overflowing number",
                batch("west", seq: 912, time: time, reading: #"{"tag":"\#(tag)","t":\#(time),"rssi":-1e999}"#)),
            text("truncated JSON", String(batch("west", seq: 913, time: time).dropLast(7))),
            text("duplicate key", #"{"v":1,"v":1,"agent":"west","epoch":7,"seq":914,"sent":\#(time),"readings":[]}"#),
            text(
                "tag of another site",
                batch(
                    "west", seq: 915, time: time,
                    reading: #"{"tag":"ibeacon-00000000-0000-0000-0000-000000000001-1-1","t":\#(time),"rssi":-70}"#)),
            text(
                "10,001 readings",
                #"{"v":1,"agent":"west","epoch":7,"seq":916,"sent":\#(time),"readings":[\#(manyReadings)]}"#),
        ]
    }

    /// Flips, cuts, inserts and deletes bytes of a valid batch.
    static func mutate(_ bytes: [UInt8], using random: inout SplitMix64) -> [UInt8] {
        var result = bytes
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            guard !result.isEmpty else { break }
            let index = Int.random(in: 0..<result.count, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: result[index] = UInt8.random(in: 0...255, using: &random)
            case 1: result.removeSubrange(index...)
            case 2: result.insert(UInt8.random(in: 0...255, using: &random), at: index)
            default: result.remove(at: index)
            }
        }
        return result
    }

    @Test(
        "25 kinds of bad payload and 10,000 seeded mutations are all counted; valid readings between them are all used")
    func hostilePayloads() async throws {
        let map = try Fixtures.map("corridor.json")
        let mapPath = try Fixtures.path("corridor.json")
        let topics = Topics(site: map.site.uuid)
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        let collector = try Collector(broker: broker, filters: [topics.locatorMetrics.name, topics.locatorStatus.name])
        let west = try TestAgent("west", site: map.site.uuid, broker: broker, epoch: 7)
        let middle = try TestAgent("mid-a", site: map.site.uuid, broker: broker, epoch: 3)
        let ghost = try TestAgent("ghost", site: map.site.uuid, broker: broker)
        let record = scratch.file("readings.jsonl")
        // The same pipeline code, run here over the same messages, says what the locator must count.
        var expected = LocatorPipeline(map: map)
        var random = SplitMix64(seed: 0x4057_11E5)
        print("hostile-input seed 0x405711E5")
        var valid: [ReadingBatch] = []
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await collector.run() }
            for agent in [west, middle, ghost] { group.addTask { await agent.run() } }
            try await collector.waitUntilSubscribed()
            for agent in [west, middle, ghost] { try await agent.waitUntilConnected() }
            let locator = try LocatorProcess(
                map: mapPath, broker: broker, scratch: scratch,
                extra: ["--record", record, "--metrics-interval", "0.2"])
            try await waitFor("the locator to come online") { collector.last(topics.locatorStatus.name) == "online" }

            // The locator tells the broker the largest packet it takes (issue 48): a payload past that never reaches it,
            // so it is not counted there either (the metrics must then equal what is expected without it).
            let packetLimit = LocatorService.maximumPacketSize(payloadLimit: BatchDecoder.Limits().maximumPayloadBytes)
            func send(_ agent: TestAgent, _ payload: [UInt8]) throws {
                try agent.sendRaw(payload)
                guard payload.count < packetLimit else { return }
                _ = expected.receive(topic: agent.topics.readings(agent: agent.id).name, payload: payload, now: now())
            }
            func sendValid() async throws {
                let time = now()
                let position = Point(x: 20, y: 5)
                let reading = ReadingBatch.Reading(
                    tag: try #require(TagIdentity(Self.tag)), time: time,
                    rssi: modelRSSI(map: map, agent: map.agents[1], position: position), count: 6, variance: 2)
                let batch = try await middle.send([reading], sent: time)
                _ = expected.receive(
                    topic: middle.topics.readings(agent: middle.id).name, payload: Array(batch.payload.utf8), now: time)
                valid.append(batch)
            }

            for item in Self.corpus(time: now()) {
                try send(item.agent == "ghost" ? ghost : west, item.payload)
                try await sendValid()
            }
            var base = Array(Self.batch("west", seq: 0, time: now()).utf8)
            for index in 0..<10_000 {
                if index % 500 == 0 {
                    // A fresh base keeps the readings' times current; each base is a new seq.
                    base = Array(Self.batch("west", seq: 1 + index / 500, time: now()).utf8)
                    try await sendValid()
                    try await Task.sleep(for: .milliseconds(20))
                }
                try send(west, Self.mutate(base, using: &random))
            }
            try await sendValid()
            // Stopped only once it has taken everything sent (a fixed wait was too short when the suite around it held
            // the cores): the metrics count every payload, accepted or rejected, by the time they are all taken.
            let sentCount = expected.counters.accepted + expected.counters.rejected.values.reduce(0, +)
            try await waitFor("the locator to count every payload sent") {
                guard let text = collector.last(topics.locatorMetrics.name),
                    let metrics = try? LocatorMetrics(payload: text)
                else { return false }
                return metrics.readingsAccepted + metrics.readingsRejected.values.reduce(0, +) >= sentCount
            }
            #expect(locator.process.isRunning, "the locator died:\n\(locator.log.suffix(2000))")
            #expect(await locator.stop() == 0)
            try await waitFor("the final metrics") { collector.last(topics.locatorStatus.name) == "offline" }
            for agent in [west, middle, ghost] { agent.client.disconnect() }
            collector.client.disconnect()
            group.cancelAll()
        }

        let metrics = try LocatorMetrics(payload: try #require(collector.last(topics.locatorMetrics.name)))
        let local = expected.counters
        #expect(local.rejected.values.reduce(0, +) >= Self.corpus(time: 0).count, "every corpus item must be rejected")
        #expect(
            Set(local.rejected.keys).count >= 15, "the corpus reaches many reasons: \(local.rejected.keys.sorted())")
        #expect(
            metrics.readingsRejected == local.rejected,
            "locator \(metrics.readingsRejected) vs expected \(local.rejected)")
        #expect(metrics.readingsAccepted == local.accepted)
        // Every valid reading sent between the hostile ones was used.
        let recorded = JSONLines.decode(try String(contentsOfFile: record, encoding: .utf8), as: RecordedReading.self)
            .records
        let fromMiddle = Set(recorded.filter { $0.agent.rawValue == "mid-a" }.map(\.time))
        #expect(fromMiddle == Set(valid.flatMap { $0.readings.map(\.time) }))
        #expect(valid.count == Self.corpus(time: 0).count + 21)
    }
}
