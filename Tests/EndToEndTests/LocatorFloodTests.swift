import BrokerFixture
import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsMQTT
import WhereaboutsWire

/// Issue 48, item 1, against a real broker and a real `whereabouts-locator`: a flood of new tag ids costs the locator
/// at most its outbox's byte budget, the map's named tag still published throughout. (Item 2, a payload far over the
/// limit never sent to the locator, is `LocatorCrashTests.oversizedPayload`.)
@Suite("Locator under a flood of tag ids", .serialized)
struct LocatorFloodTests {
    static let site = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
    /// Robin, the tag the corridor map names.
    static let robin = "ibeacon-\(site)-7-1"

    static func metrics(_ collector: Collector, _ topics: Topics) -> LocatorMetrics? {
        collector.last(topics.locatorMetrics.name).flatMap { try? LocatorMetrics(payload: $0) }
    }

    /// Robin's readings at `position` from the three agents that hear the west and middle rooms.
    static func robinReadings(map: FloorMap, agents: [TestAgent], at position: Point) async throws {
        let tag = try #require(TagIdentity(robin))
        for agent in agents {
            let index = try #require(map.agentIndex(of: agent.id.rawValue))
            let time = now()
            let rssi = modelRSSI(map: map, agent: map.agents[index], position: position)
            try await agent.send(
                [ReadingBatch.Reading(tag: tag, time: time, rssi: rssi, count: 4, variance: 2)], sent: time)
        }
    }

    @Test("a flood of 6,000 new tag ids is held within the outbox's byte budget; the named tag is published throughout")
    func floodOfTagIDs() async throws {
        let map = try Fixtures.map("corridor.json")
        let topics = Topics(site: map.site.uuid)
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        let robinTopic = topics.position(tag: try #require(TagIdentity(Self.robin))).name
        let collector = try Collector(
            broker: broker, filters: [topics.locatorMetrics.name, topics.locatorStatus.name, robinTopic])
        let listeners = try ["west", "mid-a", "mid-b"].map { try TestAgent($0, site: map.site.uuid, broker: broker) }
        let flooder = try TestAgent("east", site: map.site.uuid, broker: broker, epoch: 5)
        let budget = 65_536
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await collector.run() }
            for agent in listeners + [flooder] { group.addTask { await agent.run() } }
            try await collector.waitUntilSubscribed()
            for agent in listeners + [flooder] { try await agent.waitUntilConnected() }
            let locator = try LocatorProcess(
                map: try Fixtures.path("corridor.json"), broker: broker, scratch: scratch,
                extra: [
                    "--outbox-bytes", "\(budget)", "--metrics-interval", "0.2", "--warm-up", "0", "--no-discovery",
                    // Robin estimated at every update that brings its readings, so each round places it anew.
                    "--estimate-interval", "0", "--still-estimate-interval", "0",
                ])
            try await waitFor("the locator to come online") { collector.last(topics.locatorStatus.name) == "online" }
            try await Self.robinReadings(map: map, agents: listeners, at: Point(x: 6, y: 5))
            try await waitFor("Robin's first position") { !collector.all(robinTopic).isEmpty }

            // 6,000 ids in batches of 500, Robin heard between them, walking east through the middle room.
            let before = collector.all(robinTopic).count
            for round in 0..<12 {
                let time = now()
                let readings = try (0..<500).map { number in
                    ReadingBatch.Reading(
                        tag: try #require(TagIdentity("ibeacon-\(Self.site)-2000-\(round * 500 + number + 1)")),
                        time: time, rssi: -75)
                }
                try await flooder.send(readings, sent: time)
                try await Self.robinReadings(map: map, agents: listeners, at: Point(x: 8 + 2 * Double(round), y: 5))
                // Room for the locator to take the round before the next: Robin's readings must not all land in the
                // update that takes the last flood batch.
                try await Task.sleep(for: .milliseconds(100))
            }
            try await waitFor("the locator to take every reading of the flood") {
                (Self.metrics(collector, topics)?.readingsAccepted ?? 0) >= 6_000 + 13 * 3
            }
            let during = collector.all(robinTopic).count - before
            let outbox = try #require(Self.metrics(collector, topics)?.outbox, "the metrics say what the outbox holds")
            #expect(locator.process.isRunning, "the locator died:\n\(locator.log.suffix(2000))")
            #expect(await locator.stop() == 0)
            for agent in listeners + [flooder] { agent.client.disconnect() }
            collector.client.disconnect()
            group.cancelAll()

            // Past the budget, what was dropped was counted (and said in the log); the outbox never held more than
            // the budget and what the map bounds (the status, the zones' occupancy, Robin's states: a few kB).
            #expect(outbox.limitBytes == budget)
            #expect(outbox.shed > 0, "\(outbox)")
            #expect(outbox.peakBytes <= budget + 16_384, "\(outbox)")
            #expect(
                locator.log.contains("outbox over its budget of \(budget) bytes: dropped"),
                "\(locator.log.suffix(3000))")
            // Robin, named by the map, was published while the flood went on, and none of it was shed.
            #expect(during >= 3, "Robin's positions during the flood: \(during)")
        }
    }
}
