import TestFixtures
import Testing
import WhereaboutsCore

@Suite("Bounded tags (issue 12, item 5)", .ownThread)
struct TagLimitTests {
    let start = 1_000_000.0

    /// A site tag the demo map does not name.
    func unnamedTag(_ index: Int) -> TagIdentity {
        .iBeacon(uuid: demoSite, major: UInt16(1_000 + index >> 16), minor: UInt16(truncatingIfNeeded: index))
    }

    @Test("a million distinct tag ids keep the engine within its limit, and a named tag is never evicted")
    func flood() async throws {
        let map = try loadShippedMap("demo-office.json")
        var configuration = LocatorEngine.Configuration()
        configuration.maximumTags = 2_000
        var engine = LocatorEngine(map: map, configuration: configuration)
        let alice = demoTag(1)
        #expect(map.knownTag(alice) != nil)
        let perSecond = 20_000
        var largest = 0
        for index in 0..<1_000_000 {
            let now = start + Double(index / perSecond)
            if index % perSecond == 0 {
                // Alice is heard once a second, long before most of the flood: oldest first would take her first.
                engine.ingest(Reading(tag: alice, time: now, rssi: -60), agentIndex: 0, now: now)
            }
            engine.ingest(
                Reading(tag: unnamedTag(index), time: now, rssi: -70), agentIndex: index % map.agents.count, now: now)
            largest = max(largest, engine.trackedTagCount)
            if index % 100_000 == 99_999 { _ = engine.update(now: now) }
            // A long loop in a test shares the cooperative threads with every other test: give them a turn.
            if index % 5_000 == 4_999 { await Task.yield() }
        }
        #expect(largest <= configuration.maximumTags)
        #expect(engine.isMoving(alice) != nil, "the named tag was evicted")
        #expect(engine.evictedTagCount >= 1_000_000 - configuration.maximumTags)
    }

    @Test("evicted tags leave their zones and are reported lost; the longest silent go first")
    func evictionLeavesZones() throws {
        let map = try loadShippedMap("demo-office.json")
        var configuration = LocatorEngine.Configuration()
        configuration.maximumTags = 32
        var engine = LocatorEngine(map: map, configuration: configuration)
        let generator = ReadingGenerator(map: map)
        var random = SplitMix64(seed: 3)
        let zone = try #require(map.zones.first)
        let inside = zone.polygon.centroid
        // 32 tags in the first zone for 10 s; tag 0 keeps being heard afterwards.
        var entered = Set<TagIdentity>()
        for second in 0..<10 {
            let now = start + Double(second)
            for index in 0..<32 {
                for (agent, reading) in generator.readings(
                    tag: unnamedTag(index), at: inside, floor: zone.floor, time: now, using: &random)
                {
                    engine.ingest(reading, agentIndex: agent, now: now)
                }
            }
            for event in engine.update(now: now).events where event.kind == .enter { entered.insert(event.tag) }
        }
        #expect(entered.count == 32)
        let now = start + 10
        engine.ingest(Reading(tag: unnamedTag(0), time: now, rssi: -60), agentIndex: 0, now: now)
        // A 33rd tag makes room: 2 (1/16 of 32) go, the longest silent, and tag 0 (heard just now) is not one.
        engine.ingest(Reading(tag: unnamedTag(100), time: now, rssi: -70), agentIndex: 0, now: now)
        #expect(engine.evictedTagCount == 2)
        #expect(engine.trackedTagCount == 31)
        #expect(engine.isMoving(unnamedTag(0)) != nil)
        let update = engine.update(now: now)
        let exits = update.events.filter { $0.kind == .exit }.map(\.tag)
        #expect(exits.count == 2)
        #expect(Set(update.lostTags).isSuperset(of: exits))
        #expect(!exits.contains(unnamedTag(0)))
        for tag in exits { #expect(engine.state(of: tag, in: zone.key) == .unknown) }
    }
}
