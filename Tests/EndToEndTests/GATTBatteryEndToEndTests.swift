import BrokerFixture
import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsMQTT
import WhereaboutsWire

/// GATT job results, as an agent publishes them, through a real broker into whereabouts-locator: a named tag's
/// battery level comes out retained on its tag topic, an unnamed tag's does not, and a malformed result is counted.
@Suite("Locator end to end: GATT battery levels", .serialized)
struct GATTBatteryEndToEndTests {
    let mapPath: String
    let map: FloorMap
    let topics: Topics
    /// Robin, the tag corridor.json names.
    let robin: TagIdentity
    /// A tag the map does not name.
    let stranger: TagIdentity

    init() throws {
        mapPath = try Fixtures.path("corridor.json")
        map = try Fixtures.map("corridor.json")
        topics = Topics(site: map.site.uuid)
        robin = try #require(TagIdentity("ibeacon-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d-7-1"))
        stranger = try #require(TagIdentity("ibeacon-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d-7-99"))
    }

    func result(_ tag: TagIdentity, battery: Int, id: String) throws -> [UInt8] {
        let jobID = try #require(GATTJobID(id))
        let result = GATTJobResult(id: jobID, tag: tag, status: .ok, values: GATTJobValues(battery: battery))
        return Array(result.payload.utf8)
    }

    @Test("a named tag's level is published retained in percent; an unnamed tag's is not; malformed ones counted")
    func batteryLevels() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let broker = try await MosquittoBroker.start(BrokerOptions())
        defer { broker.cleanup() }
        let collector = try Collector(broker: broker, filters: ["\(topics.prefix)/#"])
        let west = try TestAgent("west", site: map.site.uuid, broker: broker)
        let level = topics.tagBatteryLevel(tag: robin).name
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await collector.run() }
            group.addTask { await west.run() }
            try await collector.waitUntilSubscribed()
            try await west.waitUntilConnected()
            let locator = try LocatorProcess(
                map: mapPath, broker: broker, scratch: scratch, extra: ["--metrics-interval", "1"])
            try await waitFor("the locator to come online") { collector.last(topics.locatorStatus.name) == "online" }
            let results = topics.gattResults(agent: west.id).name
            let malformed = [
                Array(#"{"id":"job-1","tag":"\#(robin)","status":"ok","values":{"battery":150}}"#.utf8),
                Array("not json".utf8),
            ]
            // In order on one connection at QoS 1: the locator has taken the others when Robin's level shows.
            for payload in malformed + [
                try result(stranger, battery: 55, id: "job-2"), try result(robin, battery: 87, id: "job-3"),
            ] {
                _ = try west.client.publish(topic: results, payload: payload, qos: .atLeastOnce)
            }
            try await waitFor("Robin's battery level") { collector.last(level) == "87" }
            #expect(!collector.messages.contains { $0.topic == topics.tagBatteryLevel(tag: stranger).name })
            #expect(!collector.messages.contains { $0.topic.hasSuffix("/battery_level") && $0.topic != level })
            try await waitFor("the malformed results counted") {
                guard let text = collector.last(topics.locatorMetrics.name),
                    let metrics = try? LocatorMetrics(payload: text)
                else { return false }
                return metrics.readingsRejected[.badGATTResult] == malformed.count
            }
            // Retained: Home Assistant, subscribing now, still gets the level.
            let late = try Collector(broker: broker, filters: [level])
            group.addTask { await late.run() }
            try await waitFor("the retained level") { !late.messages.isEmpty }
            #expect(late.messages.first?.retain == true)
            #expect(late.last(level) == "87")
            #expect(locator.log.contains("dropped a GATT job result from agent west: bad_gatt_result"))
            #expect(await locator.stop() == 0)
            for client in [collector.client, late.client, west.client] { client.disconnect() }
            group.cancelAll()
        }
    }
}
