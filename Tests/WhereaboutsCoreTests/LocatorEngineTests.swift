import TestFixtures
import Testing
import WhereaboutsCore

@Suite("Locator engine", .ownThread)
struct LocatorEngineTests {
    let start = 1_000_000.0

    /// Runs `seconds` of one reading per agent per second for a tag standing still.
    func stand(
        _ engine: inout LocatorEngine,
        tag: TagIdentity,
        at position: Point,
        floor: UInt16 = 1,
        from: Double,
        seconds: Int,
        seed: UInt64 = 1,
        silentAgents: Set<Int> = []
    ) -> [EngineUpdate] {
        let generator = ReadingGenerator(map: engine.map)
        var random = SplitMix64(seed: seed)
        var updates: [EngineUpdate] = []
        for second in 0..<seconds {
            let now = from + Double(second)
            for (agentIndex, reading) in generator.readings(
                tag: tag, at: position, floor: floor, time: now, using: &random)
            where !silentAgents.contains(agentIndex) {
                engine.ingest(reading, agentIndex: agentIndex, now: now)
            }
            for agentIndex in engine.map.agents.indices where !silentAgents.contains(agentIndex) {
                engine.agentHeard(agentIndex, at: now)
            }
            updates.append(engine.update(now: now))
        }
        return updates
    }

    @Test("a tag is placed in its zone, with an enter event and an occupancy change")
    func enterZone() throws {
        var engine = LocatorEngine(map: try loadShippedMap("demo-office.json"))
        let tag = demoTag(1)
        let updates = stand(&engine, tag: tag, at: Point(x: 5, y: 4), from: start, seconds: 30)
        let lobby = ZoneKey(floor: 1, minor: 1)
        let enters = updates.flatMap(\.events).filter { $0.kind == .enter }
        #expect(enters.map(\.zone) == [lobby])
        #expect(engine.occupancy(of: lobby)?.tags == [tag])
        #expect(engine.occupancy(of: lobby)?.state == .known)
        #expect(updates.flatMap(\.occupancyChanges).contains { $0.zone == lobby && $0.count == 1 })
        #expect(engine.state(of: tag, in: lobby) == .inside)
        #expect(engine.state(of: tag, in: ZoneKey(floor: 1, minor: 2)) == .outside)
        let estimate = try #require(updates.last?.estimates.first)
        #expect(estimate.position.distance(to: Point(x: 5, y: 4)) < 1.5)
        #expect(estimate.name == "Alice")
        #expect(estimate.floor == 1)
    }

    @Test("ranging lists the agents nearest first, with CoreLocation proximity")
    func ranging() throws {
        var engine = LocatorEngine(map: try loadShippedMap("demo-office.json"))
        let tag = demoTag(1)
        _ = stand(&engine, tag: tag, at: Point(x: 3, y: 4), from: start, seconds: 60)
        let ranges = engine.ranging(tag, now: start + 59)
        #expect(ranges.count >= 9)
        #expect(ranges.first.map { engine.map.agents[$0.agentIndex].id } == "g-lobby")
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.distance <= $1.distance })
        #expect(ranges.first?.proximity == .near)
        #expect(ranges.last?.proximity == .far)
        #expect(ranges.allSatisfy { $0.accuracy > 0 && $0.accuracy.isFinite })
    }

    @Test("a tag not heard for the timeout leaves its zone")
    func timeout() throws {
        let map = try loadShippedMap("demo-office.json")
        var engine = LocatorEngine(map: map)
        let tag = demoTag(1)
        _ = stand(&engine, tag: tag, at: Point(x: 5, y: 4), from: start, seconds: 20)
        let lobby = ZoneKey(floor: 1, minor: 1)
        #expect(engine.zone(of: tag) == lobby)
        // Agents keep reporting (empty batches); the tag is silent.
        var exits: [ZoneTransition] = []
        for second in 20..<(20 + Int(map.model.tagTimeout) + 2) {
            let now = start + Double(second)
            for agentIndex in map.agents.indices { engine.agentHeard(agentIndex, at: now) }
            exits += engine.update(now: now).events.filter { $0.kind == .exit }
        }
        #expect(exits.map(\.zone) == [lobby])
        #expect(engine.occupancy(of: lobby)?.count == 0)
        #expect(engine.occupancy(of: lobby)?.state == .known)
        #expect(engine.state(of: tag, in: lobby) == .outside)
    }

    @Test("when the agents covering a zone go offline, it is unknown, not empty, and nobody is made to leave")
    func unknownNotEmpty() throws {
        let map = try loadShippedMap("demo-office.json")
        var engine = LocatorEngine(map: map)
        let tag = demoTag(1)
        // Stand in Meeting Room B (far east): covered by agents within the coverage radius.
        _ = stand(&engine, tag: tag, at: Point(x: 27, y: 4), from: start, seconds: 20)
        let roomB = ZoneKey(floor: 1, minor: 4)
        #expect(engine.zone(of: tag) == roomB)
        // Every floor-1 agent goes offline through its last will.
        for (index, agent) in map.agents.enumerated() where agent.floor == 1 {
            engine.setAgentStatus(index, online: false)
        }
        var events: [ZoneTransition] = []
        var changes: [Occupancy] = []
        for second in 20..<120 {
            let update = engine.update(now: start + Double(second))
            events += update.events
            changes += update.occupancyChanges
        }
        #expect(events.isEmpty)
        let occupancy = try #require(engine.occupancy(of: roomB))
        #expect(occupancy.state == .unknown)
        #expect(occupancy.tags == [tag])
        #expect(changes.contains { $0.zone == roomB && $0.state == .unknown })
        #expect(!changes.contains { $0.zone == roomB && $0.state == .known && $0.count == 0 })
        #expect(engine.state(of: tag, in: roomB) == .unknown)
    }

    @Test("silent agents count as offline once the agent timeout passes")
    func silentAgents() throws {
        let map = try loadShippedMap("demo-office.json")
        var engine = LocatorEngine(map: map)
        for index in map.agents.indices { engine.agentHeard(index, at: start) }
        _ = engine.update(now: start)
        #expect(engine.allOccupancy.allSatisfy { $0.state == .known })
        let later = start + map.model.agentTimeout + 1
        let update = engine.update(now: later)
        #expect(engine.allOccupancy.allSatisfy { $0.state == .unknown })
        #expect(update.occupancyChanges.count == map.zones.count)
    }

    @Test("a tag upstairs is placed on the upper floor from the agents' evidence")
    func floorChoice() throws {
        var engine = LocatorEngine(map: try loadShippedMap("demo-office.json"))
        let tag = demoTag(3)
        let updates = stand(&engine, tag: tag, at: Point(x: 24, y: 4), floor: 2, from: start, seconds: 30)
        let estimate = try #require(updates.last?.estimates.first)
        #expect(estimate.floor == 2)
        #expect(engine.zone(of: tag) == ZoneKey(floor: 2, minor: 2))
        // Walking downstairs: the floor follows after the hysteresis, and the upstairs zone is left.
        let more = stand(&engine, tag: tag, at: Point(x: 24, y: 4), floor: 1, from: start + 30, seconds: 30, seed: 9)
        #expect(more.last?.estimates.first?.floor == 1)
        let events = more.flatMap(\.events)
        #expect(events.contains { $0.kind == .exit && $0.zone == ZoneKey(floor: 2, minor: 2) })
        #expect(events.contains { $0.kind == .enter && $0.zone == ZoneKey(floor: 1, minor: 4) })
    }

    @Test(
        "a tag that changes floor leaves its zone upstairs and enters the one downstairs in the same update",
        arguments: [LocatorEngine.Configuration.Positioning.trilateration, .grid])
    func floorChangeAtOnce(positioning: LocatorEngine.Configuration.Positioning) throws {
        // The floor choice has its own hysteresis; a dwell more for the new floor's zone held the tag in no zone
        // for a second or two, reported as two zone changes where there was one.
        var configuration = LocatorEngine.Configuration()
        configuration.positioning = positioning
        var engine = LocatorEngine(map: try loadShippedMap("demo-office.json"), configuration: configuration)
        let tag = demoTag(3)
        let upstairs = ZoneKey(floor: 2, minor: 2)
        _ = stand(&engine, tag: tag, at: Point(x: 24, y: 4), floor: 2, from: start, seconds: 30)
        #expect(engine.zone(of: tag) == upstairs)
        let updates = stand(&engine, tag: tag, at: Point(x: 24, y: 4), floor: 1, from: start + 30, seconds: 30, seed: 9)
        let events = updates.flatMap(\.events)
        let exit = try #require(events.first { $0.kind == .exit && $0.zone == upstairs })
        let enter = try #require(events.first { $0.kind == .enter })
        #expect(enter.zone == ZoneKey(floor: 1, minor: 4))
        #expect(enter.time == exit.time, "in no zone from \(exit.time) to \(enter.time)")
        #expect(events.filter { $0.kind == .exit }.count == 1)
        #expect(engine.zone(of: tag) == ZoneKey(floor: 1, minor: 4))
    }

    @Test("readings are refused with a reason: unknown agent, untracked tag, stale, invalid")
    func rejections() throws {
        var engine = LocatorEngine(map: try loadShippedMap("demo-office.json"))
        let tag = demoTag(1)
        let now = start
        #expect(engine.ingest(Reading(tag: tag, time: now, rssi: -60), agentIndex: 99, now: now) == .unknownAgent)
        let stranger = try #require(TagIdentity("ibeacon-00000000-0000-0000-0000-000000000001-1-1"))
        #expect(engine.ingest(Reading(tag: stranger, time: now, rssi: -60), agentIndex: 0, now: now) == .untrackedTag)
        #expect(engine.ingest(Reading(tag: tag, time: now - 60, rssi: -60), agentIndex: 0, now: now) == .stale)
        #expect(engine.ingest(Reading(tag: tag, time: now, rssi: .nan), agentIndex: 0, now: now) == .invalidValue)
        #expect(engine.ingest(Reading(tag: tag, time: now, rssi: 50), agentIndex: 0, now: now) == .invalidValue)
        #expect(
            engine.ingest(Reading(tag: tag, time: now, rssi: -60, count: 0), agentIndex: 0, now: now) == .invalidValue)
        #expect(engine.ingest(Reading(tag: tag, time: now, rssi: -60), agentIndex: 0, now: now) == nil)
        #expect(engine.trackedTagCount == 1)
    }

    @Test("the same input gives exactly the same output")
    func deterministic() throws {
        let map = try loadShippedMap("demo-office.json")
        var first = LocatorEngine(map: map)
        var second = LocatorEngine(map: map)
        let a = stand(&first, tag: demoTag(1), at: Point(x: 12, y: 15), from: start, seconds: 40, seed: 4)
        let b = stand(&second, tag: demoTag(1), at: Point(x: 12, y: 15), from: start, seconds: 40, seed: 4)
        #expect(a.map(\.estimates) == b.map(\.estimates))
        #expect(a.map(\.events) == b.map(\.events))
    }

    /// A tag at (5, 4), or walking east from (3, 4) at 1 m/s, heard by agents reporting once a second each at its
    /// own phase, as live agents do, through an engine updated every 20 ms for 22 s: when it was estimated, when
    /// its readings arrived, its zone at the end and its last position.
    /// Trilateration by default: the estimate interval's rules for moving and still tags are its own (the grid
    /// filter, the default tracker, waits the larger interval for both, and `estimateInterval` runs it too).
    /// `spacing` is the seconds between successive agents' batches, `period` the seconds between one agent's.
    func runEvery20ms(
        interval: Double, stillInterval: Double, walking: Bool = false,
        positioning: LocatorEngine.Configuration.Positioning = .trilateration, spacing: Double = 0.07,
        period: Double = 1
    ) throws -> Every20msRun {
        let map = try loadShippedMap("demo-office.json")
        let tag = demoTag(1)
        let generator = ReadingGenerator(map: map)
        var configuration = LocatorEngine.Configuration()
        configuration.positioning = positioning
        configuration.estimateInterval = interval
        configuration.stillEstimateInterval = stillInterval
        var engine = LocatorEngine(map: map, configuration: configuration)
        var random = SplitMix64(seed: 9)
        var queued: [(time: Double, agentIndex: Int, reading: Reading)] = []
        for second in 0..<20 {
            let position = walking ? Point(x: 3 + Double(second), y: 4) : Point(x: 5, y: 4)
            for (agentIndex, reading) in generator.readings(
                tag: tag, at: position, floor: 1, time: start + Double(second), using: &random)
            {
                let time = start + Double(second) * period + spacing * Double(agentIndex)
                var stamped = reading
                stamped.time = time
                queued.append((time, agentIndex, stamped))
            }
        }
        queued.sort { $0.time < $1.time }
        var run = Every20msRun()
        var next = 0
        for step in 0..<1100 {
            let now = start + Double(step) * 0.02
            if next < queued.count, queued[next].time <= now { run.arrivals.append(now) }
            while next < queued.count, queued[next].time <= now {
                engine.ingest(queued[next].reading, agentIndex: queued[next].agentIndex, now: now)
                engine.agentHeard(queued[next].agentIndex, at: now)
                next += 1
            }
            let due = engine.zoneDecisionDue(of: tag)
            let update = engine.update(now: now)
            for estimate in update.estimates where estimate.tag == tag {
                run.estimateTimes.append(now)
                // Within an interval of a zone change's decision, the tag is estimated with every batch.
                run.urgent.append(due.map { now >= $0 - max(interval, stillInterval) } ?? false)
                run.last = estimate.position
            }
            if let due, let event = update.events.first(where: { $0.tag == tag }) {
                run.decisions.append((event.time, due))
            }
        }
        run.readingTimes = queued.map(\.time)
        run.readingFloors = queued.map { map.agents[$0.agentIndex].floor }
        run.zone = engine.zone(of: tag)
        return run
    }

    /// 100 tags at random places along the demo office's corridor line, first heard together and then by every
    /// agent at every 20 ms update, on an engine with a 0.5 s estimate interval.
    struct TagsHeardEveryUpdate {
        var engine: LocatorEngine
        let tags = (1...100).map { demoTag(UInt16($0)) }
        let places: [Point]
        let generator: ReadingGenerator
        var random: SplitMix64

        init(stillInterval: Double, seed: UInt64) throws {
            let map = try loadShippedMap("demo-office.json")
            generator = ReadingGenerator(map: map)
            var configuration = LocatorEngine.Configuration()
            configuration.estimateInterval = 0.5
            configuration.stillEstimateInterval = stillInterval
            engine = LocatorEngine(map: map, configuration: configuration)
            var random = SplitMix64(seed: seed)
            places = tags.map { _ in Point(x: Double.random(in: 2...18, using: &random), y: 4) }
            self.random = random
        }

        /// Ingests every tag's readings of update `step`; returns its time, `start` + 0.02 s × `step`.
        mutating func hear(step: Int, from start: Double) -> Double {
            let now = start + Double(step) * 0.02
            for (tag, place) in zip(tags, places) {
                for (agentIndex, reading) in generator.readings(
                    tag: tag, at: place, floor: 1, time: now, using: &random)
                {
                    engine.ingest(reading, agentIndex: agentIndex, now: now)
                }
            }
            return now
        }
    }

    struct Every20msRun {
        /// When the tag was estimated, and whether a zone change was due within the interval then.
        var estimateTimes: [Double] = []
        var urgent: [Bool] = []
        var readingTimes: [Double] = []
        /// The updates that brought the tag readings.
        var arrivals: [Double] = []
        /// The floor of the agent that sent each reading.
        var readingFloors: [UInt16] = []
        /// When a zone change was decided, and when it was due.
        var decisions: [(time: Double, due: Double)] = []
        var zone: ZoneKey?
        var last: Point?

        /// How many estimates were not urgent.
        var regularCount: Int { urgent.filter { !$0 }.count }

        /// Checks that regular estimates come at most once per instant, `interval` apart, and that no reading waits
        /// long. A tag past its instant is estimated with the first update that brings it readings, or an interval
        /// later if none does: so two regular estimates in a row may be closer than an interval (the first came
        /// late), but never two between the same instants (any three span an interval at least). A reading is
        /// weighed within two intervals (and an update) of its arrival; past one, only at an update that brought
        /// the tag readings, or after an interval that brought none. Estimates come with the tag's batches.
        /// A tag whose wait changes (walking, then still) has `interval` its shorter, `longest` its longer.
        func expectCadence(
            interval: Double, longest: Double? = nil, readings: [Double],
            sourceLocation: SourceLocation = #_sourceLocation
        ) {
            let longest = longest ?? interval
            let regular = zip(estimateTimes, urgent).filter { !$0.1 }.map(\.0)
            for (first, third) in zip(regular, regular.dropFirst(2)) {
                #expect(
                    third - first >= interval - 1e-6, "three estimates in \(third - first) s",
                    sourceLocation: sourceLocation)
            }
            // Every estimate comes with a batch of the tag's readings, but one after an interval that brought none
            // (the readings before it are weighed all the same) and its first.
            for estimate in estimateTimes.dropFirst() {
                let withABatch = arrivals.contains { abs($0 - estimate) < 1e-9 }
                let noneBefore = !arrivals.contains { $0 > estimate - interval + 1e-9 && $0 < estimate - 1e-9 }
                #expect(
                    withABatch || noneBefore, "estimated at \(estimate) s, with no batch of the tag",
                    sourceLocation: sourceLocation)
            }
            for time in readings {
                let taken = estimateTimes.first { $0 >= time - 1e-9 } ?? .infinity
                let waited = taken - time
                let withABatch = arrivals.contains { abs($0 - taken) < 1e-9 }
                // (Taken an interval after its instant: no batch came in that interval.)
                let noneSince = !arrivals.contains { $0 > taken - interval + 1e-9 && $0 < taken - 1e-9 }
                #expect(
                    waited <= 2 * longest + 0.02 + 1e-6
                        && (waited <= longest + 0.02 + 1e-6 || withABatch || noneSince),
                    "reading at \(time) s waited \(waited) s", sourceLocation: sourceLocation)
            }
        }
    }

    @Test(
        "updated every 20 ms, a tag is estimated at most once per estimate interval and no reading waits longer",
        arguments: [LocatorEngine.Configuration.Positioning.trilateration, .grid])
    func estimateInterval(_ positioning: LocatorEngine.Configuration.Positioning) throws {
        // Still tags at the same interval as moving ones here; the next test has the longer one for still tags.
        func run(interval: Double) throws -> Every20msRun {
            try runEvery20ms(interval: interval, stillInterval: 0, positioning: positioning)
        }
        let everyUpdate = try run(interval: 0)
        let coalesced = try run(interval: 0.5)
        print(
            "estimate interval: \(everyUpdate.estimateTimes.count) estimates in 22 s at every update, "
                + "\(coalesced.estimateTimes.count) with 0.5 s")
        #expect(everyUpdate.estimateTimes.count > 3 * coalesced.estimateTimes.count)
        #expect(coalesced.regularCount <= 45, "\(coalesced.regularCount) regular estimates in 22 s")
        // The grid weighs only the readings of agents on the tag's floor: an update that brings only the floor
        // above's (heard through the slab) goes to the floor choice, and makes no estimate of a position.
        coalesced.expectCadence(
            interval: 0.5,
            readings: zip(coalesced.readingTimes, coalesced.readingFloors).filter {
                positioning == .trilateration || $0.1 == 1
            }.map(\.0))
        #expect(coalesced.zone == ZoneKey(floor: 1, minor: 1))
        #expect(coalesced.zone == everyUpdate.zone)
        let a = try #require(coalesced.last)
        let b = try #require(everyUpdate.last)
        #expect(a.distance(to: b) < 1)
    }

    @Test("tags started together are estimated spread over the updates of an interval, each once an interval")
    func estimatesSpread() throws {
        var run = try TagsHeardEveryUpdate(stillInterval: 0, seed: 21)
        let tags = run.tags
        var perUpdate: [Int] = []
        var perTag: [TagIdentity: Int] = [:]
        var allPerTag: [TagIdentity: Int] = [:]
        var urgentCount = 0
        // Every tag heard at every update, all from the same instant: the old rule (the last estimate plus the
        // interval) estimated all 100 in one update of every 25.
        for step in 0..<250 {
            let now = run.hear(step: step, from: start)
            // A tag whose zone change is due within the interval is estimated at every update (urgent); the others
            // at their instants.
            let urgent = Set(
                tags.filter { tag in run.engine.zoneDecisionDue(of: tag).map { now >= $0 - 0.5 } ?? false })
            let estimates = run.engine.update(now: now).estimates
            // The first updates estimate every tag, and zones are decided; then each tag is estimated at its phase.
            guard step >= 100 else { continue }
            let regular = estimates.filter { !urgent.contains($0.tag) }
            urgentCount += estimates.count - regular.count
            perUpdate.append(regular.count)
            for estimate in regular { perTag[estimate.tag, default: 0] += 1 }
            for estimate in estimates { allPerTag[estimate.tag, default: 0] += 1 }
        }
        // 150 updates, 3 s: six intervals, so 100 tags make 600 regular estimates, four an update on average, less
        // those an urgent estimate stood in for.
        print("regular estimates per update, from the second second on: \(perUpdate); \(urgentCount) urgent ones")
        #expect(perUpdate.reduce(0, +) + urgentCount >= 600)
        #expect(perUpdate.reduce(0, +) <= 600)
        #expect(perUpdate.max() ?? 0 <= 8, "\(perUpdate.max() ?? 0) estimates in one update")
        // Each tag at most once an instant, and none left waiting.
        #expect(perTag.values.allSatisfy { $0 <= 6 }, "\(Set(perTag.values)) regular estimates per tag")
        #expect(allPerTag.count == 100 && allPerTag.values.allSatisfy { $0 >= 6 }, "\(Set(allPerTag.values))")
    }

    @Test("a still tag is estimated once a second, a walking one every half second, and no reading is lost")
    func stillEstimateInterval() throws {
        let everyUpdate = try runEvery20ms(interval: 0, stillInterval: 0)
        let still = try runEvery20ms(interval: 0.5, stillInterval: 1)
        let walking = try runEvery20ms(interval: 0.5, stillInterval: 1, walking: true)
        print(
            "still estimate interval: \(still.estimateTimes.count) estimates of a still tag in 22 s, "
                + "\(walking.estimateTimes.count) of a walking one")
        for run in [still, walking] {
            // At most one regular estimate per half second of the 22 s run, however many urgent ones came between.
            #expect(run.regularCount <= 45, "\(run.regularCount) regular estimates")
            // A walking tag's instants are half a second apart, a still one's a second; the second bounds the wait.
            run.expectCadence(interval: 0.5, longest: 1, readings: run.readingTimes)
        }
        // Once the motion test has found the tag still (3 s under its threshold), a second between estimates.
        let settled = zip(still.estimateTimes, still.urgent).filter { $0.0 >= start + 6 }
        #expect(settled.count >= 10)
        for (earlier, later) in zip(settled, settled.dropFirst()) where !later.1 {
            #expect(later.0 - earlier.0 >= 1 - 1e-6, "a still tag estimated again after \(later.0 - earlier.0) s")
        }
        // The walking tag is estimated more often, as long as the motion test finds it moving (not all the time:
        // a walk along a row of agents can read as still for a few seconds).
        #expect(walking.estimateTimes.count > still.estimateTimes.count, "the walking tag was not followed")
        // The still tag ends where and in the zone it does when estimated at every update.
        #expect(still.zone == ZoneKey(floor: 1, minor: 1))
        #expect(still.zone == everyUpdate.zone)
        let a = try #require(still.last)
        let b = try #require(everyUpdate.last)
        #expect(a.distance(to: b) < 1)
    }

    @Test(
        "once a zone change is due, every batch is estimated on arrival until it is decided",
        arguments: [(0.07, 1.0), (0.07, 1.03), (0.02, 1.03)])
    func urgentEstimates(spacing: Double, period: Double) throws {
        // Batches spread over most of the second, then so with the agents' clocks running slow (a dwell of a
        // second from one batch ends just before the same agent's next), then bunched in a fifth of the second.
        let walking = try runEvery20ms(
            interval: 0.5, stillInterval: 1, walking: true, spacing: spacing, period: period)
        let urgent = walking.urgent.count { $0 }
        print(
            "urgent estimates: \(walking.decisions.count) zone changes of a walking tag, "
                + "\(urgent) of \(walking.estimateTimes.count) estimates made within an interval of one")
        #expect(walking.decisions.count >= 2, "the walk crosses zones")
        var batchesChecked = 0
        for (time, due) in walking.decisions {
            // Decided with a batch of the tag's readings, the one that completed it, not at the first update past
            // the dwell (which, with batches spread over the second, rarely brings one of the tag's), nor at a wait
            // past the tag's instant with no batch (a walking tag's wait, half a second, is shorter than the gaps
            // between bunched batches).
            #expect(
                walking.arrivals.contains { abs($0 - time) < 1e-9 },
                "a change decided at \(time - start) s, with no batch of the tag")
            // From the moment the change was due until it was decided, every batch was estimated on arrival (the
            // update that took it): the change was decided with the first that bore it out, none waited.
            let batches = walking.readingTimes.filter { $0 >= due - 1e-9 && $0 <= time + 1e-9 }
            batchesChecked += batches.count
            for batch in batches {
                #expect(
                    walking.estimateTimes.contains { $0 >= batch - 1e-9 && $0 <= batch + 0.02 + 1e-6 },
                    "a batch at \(batch - start) s waited, with a zone change due at \(due - start) s")
            }
        }
        #expect(batchesChecked > 0, "no change waited for a batch")
        // Not every batch: only those near a decision.
        let everyUpdate = try runEvery20ms(interval: 0, stillInterval: 0, walking: true)
        #expect(urgent > 0)
        #expect(2 * walking.estimateTimes.count < everyUpdate.estimateTimes.count)
    }

    @Test("a tag's first zone is decided by its regular estimates, not with every batch, a dwell and an interval on")
    func firstPlacement() throws {
        var run = try TagsHeardEveryUpdate(stillInterval: 1, seed: 33)
        var estimates: [TagIdentity: [Double]] = [:]
        var entries: [TagIdentity: Double] = [:]
        // 100 tags first heard together, as by a locator starting at a site, each heard at every update.
        for step in 0..<125 {
            let now = run.hear(step: step, from: start)
            let update = run.engine.update(now: now)
            for estimate in update.estimates { estimates[estimate.tag, default: []].append(now) }
            for event in update.events where event.kind == .enter { entries[event.tag] = entries[event.tag] ?? now }
        }
        // Estimates while each tag's first zone was pending: up to and with its entry.
        let pending = try entries.map { tag, entered in
            try #require(estimates[tag]).filter { $0 <= entered + 1e-9 }.count
        }
        let delays = try entries.map { tag, entered in entered - (try #require(estimates[tag]?.first)) }
        print(
            "first placement: \(entries.count) of 100 tags entered a zone, \(pending.reduce(0, +)) estimates until "
                + "then (most for one tag \(pending.max() ?? 0)), after \(delays.min() ?? 0)…\(delays.max() ?? 0) s")
        #expect(entries.count >= 50, "most tags stand in a zone")
        // The first estimate, then one at each of its instants until the dwell is over: three or four, more for a tag
        // first placed in no zone whose entry was then a change. With every batch estimated while the entry was due,
        // the tags made 2,786 (28 each), every update of their first second.
        #expect(pending.reduce(0, +) <= 6 * entries.count)
        // The dwell, then the next of its instants (a second apart at most), and one update of slack.
        #expect(delays.sorted()[delays.count / 2] <= 2.02)
    }

    @Test("tags silent for longer than the forget time are dropped, so memory stays bounded")
    func forgetting() throws {
        let map = try loadShippedMap("demo-office.json")
        var configuration = LocatorEngine.Configuration()
        configuration.forgetAfter = 120
        var engine = LocatorEngine(map: map, configuration: configuration)
        for minor in 1...50 {
            engine.ingest(Reading(tag: demoTag(UInt16(minor)), time: start, rssi: -70), agentIndex: 0, now: start)
        }
        #expect(engine.trackedTagCount == 50)
        _ = engine.update(now: start + 1)
        _ = engine.update(now: start + 200)
        #expect(engine.trackedTagCount == 0)
    }

    @Test(
        "a tag in a zone silent past the forget time leaves it and is forgotten in one sweep, its zone known or not",
        arguments: [true, false])
    func forgettingFromAZone(othersHeard: Bool) throws {
        let map = try loadShippedMap("demo-office.json")
        var configuration = LocatorEngine.Configuration()
        configuration.forgetAfter = 120
        var engine = LocatorEngine(map: map, configuration: configuration)
        let generator = ReadingGenerator(map: map)
        var random = SplitMix64(seed: 7)
        let (silent, other) = (demoTag(1), demoTag(2))
        let lobby = ZoneKey(floor: 1, minor: 1)
        func hear(_ tag: TagIdentity, at now: Double) {
            for (agentIndex, reading) in generator.readings(
                tag: tag, at: Point(x: 5, y: 4), floor: 1, time: now, using: &random)
            {
                engine.ingest(reading, agentIndex: agentIndex, now: now)
            }
        }
        for second in 0..<6 {
            hear(silent, at: start + Double(second))
            hear(other, at: start + Double(second))
            _ = engine.update(now: start + Double(second))
        }
        #expect(engine.zone(of: silent) == lobby)
        // 200 s later, one update: the other tag still heard (the Lobby's agents online), or nobody (the Lobby
        // unknown, its agents silent too).
        if othersHeard { hear(other, at: start + 199) }
        let update = engine.update(now: start + 200)
        #expect(engine.state(of: lobby) == (othersHeard ? .known : .unknown))
        #expect(update.lostTags.contains(silent))
        #expect(update.events.contains { $0.tag == silent && $0.kind == .exit && $0.zone == lobby })
        #expect(engine.zone(of: silent) == nil)
        #expect(engine.trackedTagCount == (othersHeard ? 1 : 0))
        #expect(engine.occupancy(of: lobby)?.tags.contains(silent) == false)
    }
}

@Suite("RSSI filter")
struct RSSIFilterTests {
    let configuration = RSSIFilter.Configuration()

    @Test("a single outlier barely moves the estimate; a sustained change is followed")
    func gating() {
        var filter = RSSIFilter(rssi: -70, time: 0, configuration: configuration)
        for second in 1...30 { filter.update(rssi: -70, time: Double(second), configuration: configuration) }
        filter.update(rssi: -40, time: 31, configuration: configuration)
        #expect(abs(filter.rssi + 70) < 4)
        for second in 32...40 { filter.update(rssi: -50, time: Double(second), configuration: configuration) }
        #expect(abs(filter.rssi + 50) < 2)
    }

    @Test("an aggregate of many adverts counts for more than one advert")
    func aggregates() {
        var single = RSSIFilter(rssi: -70, time: 0, configuration: configuration)
        var aggregate = single
        single.update(rssi: -64, time: 1, configuration: configuration)
        aggregate.update(rssi: -64, count: 10, variance: 9, time: 1, configuration: configuration)
        #expect(abs(aggregate.rssi + 64) < abs(single.rssi + 64))
        #expect(aggregate.variance < single.variance)
    }

    @Test("uncertainty grows while a link is silent")
    func staleness() {
        let filter = RSSIFilter(rssi: -70, time: 0, configuration: configuration)
        #expect(
            filter.estimate(at: 10, configuration: configuration).variance
                > filter.estimate(at: 1, configuration: configuration).variance)
    }
}
