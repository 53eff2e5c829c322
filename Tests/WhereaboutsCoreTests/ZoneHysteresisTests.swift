import TestFixtures
import Testing
import WhereaboutsCore

@Suite("Zone hysteresis", .ownThread)
struct ZoneHysteresisTests {
    /// Trilateration, whose zone is decided from the position (0.5 m past a boundary for 1 s); the grid filter, the
    /// default, decides on its zone probabilities (`ZoneProbabilityTests` below).
    static var trilateration: LocatorEngine.Configuration {
        var configuration = LocatorEngine.Configuration()
        configuration.positioning = .trilateration
        return configuration
    }

    /// Simulates a still tag for an hour, one reading per agent per second with 4 dB noise, and counts how often
    /// its reported zone changes.
    func zoneChangesOverAnHour(
        at position: Point, seed: UInt64, configuration: LocatorEngine.Configuration = Self.trilateration
    ) throws -> (changes: Int, finalZone: ZoneKey?) {
        let map = try loadShippedMap("demo-office.json")
        var engine = LocatorEngine(map: map, configuration: configuration)
        let generator = ReadingGenerator(map: map)
        var random = SplitMix64(seed: seed)
        let tag = demoTag(1)
        var changes = 0
        var zone: ZoneKey?
        var first = true
        for second in 0..<3600 {
            let now = 1_000_000 + Double(second)
            for (agentIndex, reading) in generator.readings(tag: tag, at: position, floor: 1, time: now, using: &random)
            {
                engine.ingest(reading, agentIndex: agentIndex, now: now)
            }
            _ = engine.update(now: now)
            let current = engine.zone(of: tag)
            if current != zone {
                // The first decision (none → a zone) is the tag arriving, not a change.
                if !first || zone != nil { changes += 1 }
                if current != nil { first = false }
                zone = current
            }
        }
        return (changes, zone)
    }

    @Test("a still tag at a zone centre never changes zone in an hour", arguments: [UInt64(1), 2, 3])
    func centre(seed: UInt64) throws {
        let result = try zoneChangesOverAnHour(at: Point(x: 5, y: 4), seed: seed)
        print("hysteresis: zone centre, seed \(seed): \(result.changes) zone changes in an hour")
        #expect(result.changes == 0, "changes \(result.changes)")
        #expect(result.finalZone == ZoneKey(floor: 1, minor: 1))
    }

    @Test("a still tag 0.3 m from a boundary changes zone at most 4 times in an hour", arguments: [UInt64(1), 2, 3])
    func nearBoundary(seed: UInt64) throws {
        // 0.3 m inside the Lobby, whose east wall it shares with Reception at x = 10.
        let result = try zoneChangesOverAnHour(at: Point(x: 9.7, y: 4), seed: seed)
        print("hysteresis: 0.3 m from a boundary, seed \(seed): \(result.changes) zone changes in an hour")
        #expect(result.changes <= 4, "changes \(result.changes)")
    }

    @Test(
        "a tag that walks across a boundary is reported in the new zone within 5 s", arguments: [UInt64(1), 2, 3, 4, 5])
    func walkAcross(seed: UInt64) throws {
        try walkAcross(seed: seed, configuration: Self.trilateration)
    }

    func walkAcross(seed: UInt64, configuration: LocatorEngine.Configuration) throws {
        let map = try loadShippedMap("demo-office.json")
        var engine = LocatorEngine(map: map, configuration: configuration)
        let generator = ReadingGenerator(map: map)
        var random = SplitMix64(seed: seed)
        let tag = demoTag(2)
        let start = 1_000_000.0
        // Stand in the Lobby for a minute, then walk east at 1.2 m/s into Reception and stay.
        func position(at t: Double) -> Point {
            let walkStart = 60.0
            let x = 5 + max(0, min(t - walkStart, 10 / 1.2)) * 1.2
            return Point(x: x, y: 4)
        }
        let crossing = 60 + 5 / 1.2
        var detected: Double?
        for second in 0..<120 {
            let t = Double(second)
            let now = start + t
            for (agentIndex, reading) in generator.readings(
                tag: tag, at: position(at: t), floor: 1, time: now, using: &random)
            {
                engine.ingest(reading, agentIndex: agentIndex, now: now)
            }
            let update = engine.update(now: now)
            if t < 55 { continue }
            if detected == nil,
                update.events.contains(where: { $0.kind == .enter && $0.zone == ZoneKey(floor: 1, minor: 2) })
            {
                detected = t
            }
        }
        let delay = try #require(detected, "never reported in Reception") - crossing
        print(
            "hysteresis (\(configuration.positioning)): walk across a boundary, seed \(seed): reported \(delay) s "
                + "after crossing")
        #expect(delay <= 5, "reported \(delay) s after crossing")
        #expect(engine.zone(of: tag) == ZoneKey(floor: 1, minor: 2))
    }
}

@Suite("Zone probabilities from the grid filter", .ownThread)
struct ZoneProbabilityTests {
    static var grid: LocatorEngine.Configuration {
        var configuration = LocatorEngine.Configuration()
        configuration.positioning = .grid
        return configuration
    }

    @Test("a still tag at a zone centre never changes zone in an hour", arguments: [UInt64(1), 2, 3])
    func centre(seed: UInt64) throws {
        let result = try ZoneHysteresisTests().zoneChangesOverAnHour(
            at: Point(x: 5, y: 4), seed: seed, configuration: Self.grid)
        print("zone probability: zone centre, seed \(seed): \(result.changes) zone changes in an hour")
        #expect(result.changes == 0, "changes \(result.changes)")
        #expect(result.finalZone == ZoneKey(floor: 1, minor: 1))
    }

    @Test("a still tag 0.3 m from a boundary changes zone at most 4 times in an hour", arguments: [UInt64(1), 2, 3])
    func nearBoundary(seed: UInt64) throws {
        let result = try ZoneHysteresisTests().zoneChangesOverAnHour(
            at: Point(x: 9.7, y: 4), seed: seed, configuration: Self.grid)
        print("zone probability: 0.3 m from a boundary, seed \(seed): \(result.changes) zone changes in an hour")
        #expect(result.changes <= 4, "changes \(result.changes)")
    }

    @Test(
        "a tag that walks across a boundary is reported in the new zone within 5 s", arguments: [UInt64(1), 2, 3, 4, 5])
    func walkAcross(seed: UInt64) throws {
        try ZoneHysteresisTests().walkAcross(seed: seed, configuration: Self.grid)
    }

    @Test("estimates carry the probability of their zone, and occupancy the probability of each member")
    func probabilities() throws {
        let map = try loadShippedMap("demo-office.json")
        var engine = LocatorEngine(map: map, configuration: Self.grid)
        let tag = demoTag(1)
        let estimate = try #require(
            lastEstimateStandingStill(&engine, tag: tag, at: Point(x: 5, y: 4), seconds: 30, seed: 11))
        let lobby = ZoneKey(floor: 1, minor: 1)
        #expect(estimate.zone == lobby)
        let probability = try #require(estimate.zoneProbability)
        #expect(probability >= 0.7 && probability <= 1)
        #expect(estimate.accuracy > 0 && estimate.accuracy < 5)
        let occupancy = try #require(engine.occupancy(of: lobby))
        #expect(occupancy.tags == [tag])
        #expect(occupancy.probabilities.count == 1)
        #expect((occupancy.probabilities.first ?? nil).map { $0 >= 0.7 } == true)
    }
}
