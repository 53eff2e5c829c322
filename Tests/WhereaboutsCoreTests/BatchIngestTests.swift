import TestFixtures
import Testing
import WhereaboutsMapFile

@testable import WhereaboutsCore

/// A batch of one agent's readings is looked up a few dozen readings at a time before they are taken
/// (`LocatorEngine.ingest(_:agentIndex:now:)` with an array). Whatever a batch holds, the engine must end where the
/// same readings taken one by one leave it.
@Suite("Batches of readings taken together (issue 16)", .ownThread)
struct BatchIngestTests {
    /// A 40 × 20 m floor with 24 agents: more than the 16 links a tag's directory lists.
    static func map() throws -> FloorMap {
        let agents = (0..<24).map { index in
            #"{"id": "a\#(index)", "floor": 1, "x": \#(3 + (index % 6) * 6), "y": \#(3 + Double(index / 6) * 4.5), "z": 2.4}"#
        }
        let text = """
            {
              "site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Many agents"},
              "model": {"measured_power": -59, "path_loss_exponent": 2.0},
              "floors": [{"major": 1, "name": "Ground", "height": 0, "outline": [[0,0],[40,0],[40,20],[0,20]]}],
              "zones": [
                {"floor": 1, "minor": 1, "name": "West", "polygon": [[0,0],[20,0],[20,20],[0,20]]},
                {"floor": 1, "minor": 2, "name": "East", "polygon": [[20,0],[40,0],[40,20],[20,20]]}
              ],
              "agents": [\(agents.joined(separator: ", "))]
            }
            """
        return try FloorMap.parse(Array(text.utf8)).get()
    }

    @Test(
        "a batch taken together comes to what its readings taken one by one do: outcomes, updates, ranges, evictions"
    )
    func sameAsOneByOne() throws {
        let map = try Self.map()
        var configuration = LocatorEngine.Configuration()
        // 60 tags take turns against a limit of 48: new tags evict old ones in the middle of batches, and an
        // eviction moves the tags that later readings of the batch were looked up at.
        configuration.maximumTags = 48
        var single = LocatorEngine(map: map, configuration: configuration)
        var together = LocatorEngine(map: map, configuration: configuration)
        var random = SplitMix64(seed: 27)
        let beacon = AgentBeacon.identity(site: map.site.uuid, floor: 1, agentID: "a5")
        var differingOutcomes = 0
        var differingUpdates = 0
        var twiceInBatch = 0
        var refusals: [ReadingRejection: Int] = [:]
        for second in 0..<40 {
            let now = 1_000_000 + Double(second)
            for agentIndex in map.agents.indices {
                var batch: [Reading] = []
                for turn in 0..<36 {
                    let tag = demoTag(UInt16((second * 5 + turn) % 60))
                    let rssi = -55 - Double(random.next() % 35)
                    batch.append(Reading(tag: tag, time: now - 0.2, rssi: rssi, count: 1 + Int(random.next() % 6)))
                    // The same tag twice from one agent: the second finds the tag and the link the first made.
                    if turn % 7 == 0 {
                        batch.append(Reading(tag: tag, time: now - 0.1, rssi: rssi - 2, variance: 3))
                        twiceInBatch += 1
                    }
                }
                batch += [
                    Reading(tag: demoTag(3), time: now, rssi: .nan),
                    Reading(tag: demoTag(4), time: now - 3_600, rssi: -70),
                    Reading(tag: .address(0xC0FF_EE00_0001), time: now, rssi: -70),
                    Reading(tag: beacon, time: now, rssi: -80),
                ]
                batch.shuffle(using: &random)
                let oneByOne = batch.map { single.ingest($0, agentIndex: agentIndex, now: now) }
                let outcomes = together.ingest(batch, agentIndex: agentIndex, now: now)
                if oneByOne != outcomes { differingOutcomes += 1 }
                for case let refusal? in outcomes { refusals[refusal, default: 0] += 1 }
            }
            let expected = single.update(now: now)
            let update = together.update(now: now)
            if expected.estimates != update.estimates || expected.events != update.events
                || expected.occupancyChanges != update.occupancyChanges || expected.lostTags != update.lostTags
            {
                differingUpdates += 1
            }
        }
        #expect(differingOutcomes == 0)
        #expect(differingUpdates == 0)
        // What the batches were meant to hold, they held.
        #expect(twiceInBatch > 0)
        #expect(single.evictedTagCount > 0)
        #expect(together.evictedTagCount == single.evictedTagCount)
        #expect(
            Set(refusals.keys) == [.invalidValue, .stale, .untrackedTag, .agentBeacon],
            "refused: \(refusals)")
        var heardByMore = 0
        for minor in 0..<60 {
            let tag = demoTag(UInt16(minor))
            let ranges = single.ranging(tag, now: 1_000_039)
            #expect(together.ranging(tag, now: 1_000_039) == ranges)
            if ranges.count > LinkDirectory.capacity { heardByMore += 1 }
        }
        #expect(heardByMore > 0, "no tag was heard by more agents than its directory lists")
    }

    /// More agents than the directory lists, some past 16 bits (they share one key there; the link tells them apart).
    static let manyAgents = [3, 70_000, 65_534, 65_533, 70_001, 0] + Array(100..<115) + [65_535, 200_000]

    /// Has `state` take a reading of its tag by `agent`, found by the state itself (no place looked up before).
    static func take(_ state: inout TagState, agent: Int, time: Double, rssi: Double) {
        let filter = RSSIFilter.Configuration()
        state.take(
            Reading(tag: state.identity, time: time, rssi: rssi), agentIndex: agent, link: nil, fast: filter,
            slow: filter, summingForGrid: false)
    }

    @Test("a tag's links are found whatever the agent's index, past the directory's 16 and past 16 bits")
    func linkDirectory() {
        let agents = Self.manyAgents
        var state = TagState(identity: demoTag(1), name: nil, measuredPowerOverride: nil)
        for (order, agent) in agents.enumerated() {
            #expect(state.link(of: agent) == nil, "agent \(agent) found before it was heard")
            Self.take(&state, agent: agent, time: 10 + Double(order), rssi: -60)
        }
        // Heard again, each agent updates its own link rather than adding one.
        for agent in agents.reversed() { Self.take(&state, agent: agent, time: 40, rssi: -70) }
        #expect(state.links.map(\.agentIndex) == agents)
        for (position, agent) in agents.enumerated() {
            #expect(state.link(of: agent) == position, "agent \(agent)")
        }
        #expect(state.link(of: 70_002) == nil)
        #expect(state.link(of: 1) == nil)
        #expect(state.links.allSatisfy { $0.fast.time == 40 && $0.slow.time == 40 })
        // Both filters' state, the agent and the grid filter's sums in one 64-byte line (TagState.Link).
        #expect(MemoryLayout<TagState.Link>.stride == 64)
    }

    @Test("the grid filter's sums since the last update: a mean per agent, weighed by adverts, kept until taken")
    func pendingSums() {
        let filter = RSSIFilter.Configuration()
        var state = TagState(identity: demoTag(1), name: nil, measuredPowerOverride: nil)
        func take(agent: Int, time: Double, rssi: Double, count: Int) {
            state.take(
                Reading(tag: state.identity, time: time, rssi: rssi, count: count), agentIndex: agent, link: nil,
                fast: filter, slow: filter, summingForGrid: true)
        }
        take(agent: 7, time: 10, rssi: -60, count: 1)
        take(agent: 3, time: 10, rssi: -80, count: 2)
        take(agent: 7, time: 11, rssi: -70, count: 3)
        // Agent 3 was last heard at 10 s: past the age limit at 25 s, but its sums are not taken yet, so it stays.
        state.dropLinks(notHeardWithin: 10, of: 25)
        #expect(state.links.map(\.agentIndex) == [7, 3])
        var taken: [(Int, Double)] = []
        state.takePending { taken.append(($0, $1)) }
        // In the order of the links; agent 7's mean is (−60 × 1 − 70 × 3) / 4.
        #expect(taken.map(\.0) == [7, 3])
        #expect(taken.map(\.1) == [-67.5, -80])
        // Taken, the sums start afresh, and the stale link goes.
        taken.removeAll()
        state.takePending { taken.append(($0, $1)) }
        #expect(taken.isEmpty)
        state.dropLinks(notHeardWithin: 10, of: 25)
        #expect(state.links.isEmpty)
        // Trilateration's readings are not summed.
        take(agent: 5, time: 30, rssi: -65, count: 1)
        state.take(
            Reading(tag: state.identity, time: 30, rssi: -65), agentIndex: 6, link: nil, fast: filter, slow: filter,
            summingForGrid: false)
        state.takePending { taken.append(($0, $1)) }
        #expect(taken.map(\.0) == [5])
    }

    @Test("links not heard within the age limit go at the tag's next estimate; the rest are still found")
    func staleLinksDropped() {
        let agents = Self.manyAgents
        var state = TagState(identity: demoTag(1), name: nil, measuredPowerOverride: nil)
        // Every third agent last heard at 10 s, the others at 30 s.
        for (order, agent) in agents.enumerated() {
            Self.take(&state, agent: agent, time: order % 3 == 0 ? 10 : 30, rssi: -60)
        }
        // At 20 s everything was heard within 10 s of it (or after it): nothing goes.
        state.dropLinks(notHeardWithin: 10, of: 20)
        #expect(state.links.map(\.agentIndex) == agents)
        state.dropLinks(notHeardWithin: 10, of: 30)
        let kept = agents.enumerated().filter { $0.offset % 3 != 0 }.map(\.element)
        #expect(state.links.map(\.agentIndex) == kept)
        for (position, agent) in kept.enumerated() {
            #expect(state.link(of: agent) == position, "agent \(agent)")
        }
        for (order, agent) in agents.enumerated() where order % 3 == 0 {
            #expect(state.link(of: agent) == nil, "agent \(agent) found after its link went")
        }
        // Heard again, a dropped agent's link comes back at the end, found like the others.
        Self.take(&state, agent: 3, time: 31, rssi: -75)
        #expect(state.links.last?.agentIndex == 3)
        #expect(state.link(of: 3) == kept.count)
    }

    @Test("an agent that hears a tag again after the age limit starts its link afresh, in the engine")
    func staleLinkStartsAfresh() throws {
        let map = try Self.map()
        var engine = LocatorEngine(map: map)
        let tag = demoTag(9)
        let start = 1_000_000.0
        for second in 0..<30 {
            let now = start + Double(second)
            for agentIndex in 0..<4 {
                // Agent 0 hears the tag strongly for 5 s, then not for 20 s, then once, weakly.
                if agentIndex == 0, !(second < 5 || second == 25) { continue }
                let rssi = agentIndex == 0 ? (second < 5 ? -50.0 : -80.0) : -65.0
                engine.ingest([Reading(tag: tag, time: now, rssi: rssi, count: 8)], agentIndex: agentIndex, now: now)
            }
            _ = engine.update(now: now)
        }
        let ranges = engine.ranging(tag, now: start + 29)
        // The old link's −50 dBm, 20 s stale, no longer pulls the new reading up: the range is the new reading's.
        #expect(ranges.first { $0.agentIndex == 0 }?.rssi == -80)
        #expect(ranges.count == 4)
    }
}
