import TestFixtures
import Testing
import WhereaboutsCore

extension LocatorEngineTests {
    /// Issue 49, item 4: after an outage of the agents longer than the tag timeout, their first batches came a
    /// second before the tags' readings, and every tag got an exit and was lost, to be found again at once.
    @Test("after a long outage of its agents, a tag is not lost while they start reporting; silence since counts")
    func outageIsNotAbsence() throws {
        let map = try loadShippedMap("demo-office.json")
        var engine = LocatorEngine(map: map)
        let tag = demoTag(1)
        let roomB = ZoneKey(floor: 1, minor: 4)
        _ = stand(&engine, tag: tag, at: Point(x: 27, y: 4), from: start, seconds: 20)
        #expect(engine.zone(of: tag) == roomB)
        // Every agent silent for three tag timeouts: the zone is unknown, its members stay.
        let outage = Int(map.model.tagTimeout) * 3
        var events: [ZoneTransition] = []
        var lost: [TagIdentity] = []
        for second in 20..<(20 + outage) {
            let update = engine.update(now: start + Double(second))
            events += update.events
            lost += update.lostTags
        }
        #expect(engine.occupancy(of: roomB)?.state == .unknown)
        // The agents report again, the tag's readings not yet among their batches (they come a few seconds later).
        let back = 20 + outage
        for second in back..<(back + 5) {
            for index in map.agents.indices { engine.agentHeard(index, at: start + Double(second)) }
            let update = engine.update(now: start + Double(second))
            events += update.events
            lost += update.lostTags
        }
        #expect(engine.occupancy(of: roomB)?.state == .known)
        #expect(events.isEmpty, "\(events)")
        #expect(lost.isEmpty)
        #expect(engine.zone(of: tag) == roomB)
        // It really is gone: once its agents have reported for the tag timeout without it, it leaves and is lost.
        var lostAt: Double?
        for second in (back + 5)..<(back + Int(map.model.tagTimeout) + 5) {
            let now = start + Double(second)
            for index in map.agents.indices { engine.agentHeard(index, at: now) }
            let update = engine.update(now: now)
            events += update.events
            if update.lostTags.contains(tag), lostAt == nil { lostAt = now }
        }
        let when = try #require(lostAt, "never lost")
        #expect(when - (start + Double(back)) > map.model.tagTimeout)
        #expect(when - (start + Double(back)) <= map.model.tagTimeout + 2 * LocatorEngine.sweepInterval)
        #expect(events.map(\.kind) == [.exit] && events.first?.zone == roomB)
    }
}
