import Testing
import WhereaboutsSession
import WhereaboutsWire

@testable import WhereaboutsCore
@testable import WhereaboutsLocator

@Suite("Occupancy publisher")
struct OccupancyPublisherTests {
    let start = 1_764_000_000.0

    func published(_ actions: [ServiceAction<LocatorEffect>]) -> [Publication] {
        actions.compactMap {
            guard case .publish(let publication) = $0 else { return nil }
            return publication
        }
    }

    @Test("nothing before the warm-up that the first batch starts ends; then every zone at once, retained and urgent")
    func warmUp() throws {
        let map = try PipelineHarness().map
        let engine = LocatorEngine(map: map)
        var publisher = OccupancyPublisher(map: map, share: nil, topics: Topics(site: map.site.uuid), warmUp: 10)
        #expect(publisher.tick(EngineUpdate(), engine: engine, now: start).isEmpty)
        publisher.batchTaken(now: start + 5)
        publisher.batchTaken(now: start + 8)
        #expect(publisher.tick(EngineUpdate(), engine: engine, now: start + 14).isEmpty)
        #expect(!publisher.isWarm)
        let all = published(publisher.tick(EngineUpdate(), engine: engine, now: start + 15))
        #expect(publisher.isWarm)
        #expect(all.count == map.zones.count)
        #expect(all.allSatisfy { $0.retain && $0.qos == .atLeastOnce && $0.priority == .urgent })
        #expect(published(publisher.connected(engine: engine, now: start + 16)).count == map.zones.count)
    }

    @Test("with no batch at all, the zones whose agents stay silent are said unknown once, and again on a reconnect")
    func unheardZones() throws {
        let map = try PipelineHarness().map
        let engine = LocatorEngine(map: map)
        var publisher = OccupancyPublisher(map: map, share: nil, topics: Topics(site: map.site.uuid), warmUp: 10)
        #expect(publisher.connected(engine: engine, now: start).isEmpty)
        var said: [Publication] = []
        for second in 0...Int(max(10, map.model.agentTimeout)) + 5 {
            said += published(publisher.tick(EngineUpdate(), engine: engine, now: start + Double(second)))
        }
        #expect(said.count == map.zones.count)
        #expect(try said.allSatisfy { try ZoneOccupancy(payload: $0.payload).state == .unknown })
        #expect(published(publisher.connected(engine: engine, now: start + 60)).count == map.zones.count)
    }

    @Test("events go out on the events topic, the zone's and the tag's, not retained, only for the floors owned")
    func events() throws {
        let map = try FloorShareTests.fiveFloors()
        let engine = LocatorEngine(map: map)
        let topics = Topics(site: map.site.uuid)
        let share = try FloorShare(map: map, floors: [1])
        var publisher = OccupancyPublisher(map: map, share: share, topics: topics, warmUp: 10)
        let zones = map.zones.map(\.key)
        let own = try #require(zones.first { $0.floor == 1 })
        let other = try #require(zones.first { $0.floor != 1 })
        var update = EngineUpdate()
        update.events = [
            ZoneTransition(time: start, tag: try alice(), zone: own, kind: .enter),
            ZoneTransition(time: start, tag: try alice(), zone: other, kind: .exit),
        ]
        let events = published(publisher.tick(update, engine: engine, now: start))
        #expect(
            events.map(\.topic) == [
                topics.events, topics.zoneEvents(floor: own.floor, zone: own.minor), topics.tagEvents(tag: try alice()),
            ])
        #expect(events.allSatisfy { $0.retain == false && $0.payload == events.first?.payload })
        #expect(try events.first.map { try ZoneEvent(payload: $0.payload).zone } == own.minor)
    }

    @Test("an earlier run's occupancy is cleared only for a zone the map lacks on a floor this locator owns")
    func leftovers() throws {
        let map = try FloorShareTests.fiveFloors()
        let share = try FloorShare(map: map, floors: [1])
        let publisher = OccupancyPublisher(map: map, share: share, topics: Topics(site: map.site.uuid), warmUp: 10)
        let payload = Array("{}".utf8)
        #expect(published(publisher.retainedOccupancy(floor: 1, zone: 99, payload: payload)).count == 1)
        #expect(publisher.retainedOccupancy(floor: 1, zone: 99, payload: []).isEmpty)
        #expect(publisher.retainedOccupancy(floor: 3, zone: 99, payload: payload).isEmpty, "another share's floor")
        let kept = try #require(map.zones.first { $0.floor == 1 })
        #expect(publisher.retainedOccupancy(floor: 1, zone: kept.minor, payload: payload).isEmpty)
    }
}
