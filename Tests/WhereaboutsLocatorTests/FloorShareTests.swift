import TestFixtures
import Testing
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsMapFile
import WhereaboutsSession
import WhereaboutsSimulation
import WhereaboutsWire

/// Locators split by floor (issue 16, item 3): each owns a share of the floors, and their outputs together are one
/// locator's.
@Suite("Locators split by floor")
struct FloorShareTests {
    static func threeFloors() throws -> FloorMap {
        try FloorMap.parse(TestFixtures.bytes("split/three-floors.json")).get()
    }

    static func configuration(floors: [UInt16]?) -> LocatorPipeline.Configuration {
        var configuration = LocatorReplay.defaultConfiguration
        configuration.floors = floors
        return configuration
    }

    /// A simulated recording in which tags take the stairs.
    static func recording(map: FloorMap, tags: Int, duration: Double, seed: UInt64) throws -> [RecordedReading] {
        var simulation = SimulationConfiguration()
        simulation.tagCount = tags
        simulation.duration = duration
        let text = try simulatedReadings(map: map, configuration: simulation, seed: seed)
        return try cleanRecords(text, as: RecordedReading.self)
    }

    /// Positions and events in one order that does not depend on which locator published them.
    static func canonical(_ output: LocatorReplay.Output) -> (positions: String, events: String) {
        let positions = output.positions.sorted { ($0.time, $0.tag) < ($1.time, $1.tag) }
        let events = output.events.sorted {
            ($0.time, $0.kind == .enter ? 1 : 0, $0.tag, $0.floor, $0.zone)
                < ($1.time, $1.kind == .enter ? 1 : 0, $1.tag, $1.floor, $1.zone)
        }
        return (JSONLines.encode(positions), JSONLines.encode(events))
    }

    /// Each zone's enter/exit sequence, in the order it was published.
    static func eventsByZone(_ events: [ZoneEvent]) -> [String: [String]] {
        Dictionary(grouping: events, by: { "\($0.floor)-\($0.zone)" }).mapValues { zone in
            zone.map { "\($0.time) \($0.tag) \($0.kind)" }
        }
    }

    @Test("a share owns its floors, hears the next ones by height, and owns the site only with the lowest floor")
    func shares() throws {
        let map = try Self.threeFloors()
        let bottom = try FloorShare(map: map, floors: [1])
        let middle = try FloorShare(map: map, floors: [2])
        let top = try FloorShare(map: map, floors: [3, 3])
        #expect(bottom.heardFloors == [1, 2])
        #expect(middle.heardFloors == [1, 2, 3])
        #expect(top.floors == [3])
        #expect(top.heardFloors == [2, 3])
        #expect([bottom.ownsSite, middle.ownsSite, top.ownsSite] == [true, false, false])
        #expect(try FloorShare(map: map, floors: [3, 1]).name == "floors-1-3")
        #expect(throws: FloorShare.Problem.unknownFloor(9)) { try FloorShare(map: map, floors: [1, 9]) }
        #expect(throws: FloorShare.Problem.empty) { try FloorShare(map: map, floors: []) }
    }

    @Test("a split locator subscribes agent by agent to the floors it hears, and names its own status topic")
    func subscriptionsAndStatus() throws {
        let map = try Self.threeFloors()
        let topics = Topics(site: map.site.uuid)
        let top = LocatorPipeline(map: map, configuration: Self.configuration(floors: [3]))
        let filters = Set(top.subscriptions.map(\.filter.filter))
        for agent in map.agents {
            let id = try #require(AgentID(agent.id))
            let heard = agent.floor >= 2
            #expect(filters.contains(topics.readings(agent: id).name) == heard, "\(agent.id)")
            #expect(filters.contains(topics.agentStatus(agent: id).name) == heard, "\(agent.id)")
        }
        #expect(!filters.contains(topics.allReadings.filter))
        #expect(!filters.contains(topics.allAgentStatuses.filter))
        #expect(top.statusTopic.name == "\(topics.prefix)/locator/floors-3/status")
        #expect(top.metricsTopic.name == "\(topics.prefix)/locator/floors-3/metrics")
        let bottom = LocatorPipeline(map: map, configuration: Self.configuration(floors: [1]))
        #expect(bottom.statusTopic == topics.locatorStatus)
        let whole = LocatorPipeline(map: map, configuration: Self.configuration(floors: nil))
        #expect(Set(whole.subscriptions.map(\.filter.filter)).contains(topics.allReadings.filter))
    }

    @Test("two locators splitting two floors publish, merged, byte for byte what one locator publishes")
    func twoFloorsMergeToOne() throws {
        let map = try scenarioMap("two-floors")
        let readings = try Self.recording(map: map, tags: 6, duration: 900, seed: 11)
        let whole = LocatorReplay.run(map: map, readings: readings).output
        let lower = LocatorReplay.run(map: map, readings: readings, configuration: Self.configuration(floors: [1]))
        let upper = LocatorReplay.run(map: map, readings: readings, configuration: Self.configuration(floors: [2]))
        // The recording must hand tags over: some tag is published on both floors.
        let floorsByTag = Dictionary(grouping: whole.positions, by: \.tag).mapValues { Set($0.map(\.floor)) }
        #expect(floorsByTag.values.contains { $0.count == 2 }, "no tag changed floor: the test proves nothing")
        #expect(lower.output.positions.allSatisfy { $0.floor == 1 } && !lower.output.positions.isEmpty)
        #expect(upper.output.positions.allSatisfy { $0.floor == 2 } && !upper.output.positions.isEmpty)
        #expect(lower.output.events.allSatisfy { $0.floor == 1 })
        #expect(upper.output.events.allSatisfy { $0.floor == 2 })
        var merged = lower.output
        merged.positions += upper.output.positions
        merged.events += upper.output.events
        let (mergedPositions, mergedEvents) = Self.canonical(merged)
        let (wholePositions, wholeEvents) = Self.canonical(whole)
        #expect(mergedPositions == wholePositions)
        #expect(mergedEvents == wholeEvents)
        #expect(Self.eventsByZone(merged.events) == Self.eventsByZone(whole.events))
        // With two floors each share hears every agent: nothing is left out, and the work is not split.
        #expect(lower.replay.counters.otherFloors == 0)
        #expect(lower.replay.counters.accepted == upper.replay.counters.accepted)
    }

    /// What merging the outputs of several shares gives, against one locator of the whole site.
    struct Merge {
        var merged = LocatorReplay.Output()
        /// Readings each share left out (other floors').
        var ignored: [UInt16: Int] = [:]
        /// Tag updates published by more than one share, and the longest run of consecutive updates so.
        var doubleClaims = 0
        var longestDoubleRun = 0
        /// Tag updates the whole-site locator published that no share did, or the other way round.
        var missing = 0
        var extra = 0
        /// Zones whose enter/exit sequences (tags and kinds, without times) differ from the whole site's.
        var differingZones: [String] = []
        /// Whether the events are byte-identical, times included.
        var eventsIdentical = false

        init(map: FloorMap, readings: [RecordedReading], shares: [[UInt16]], margin: Int) {
            let whole = LocatorReplay.run(map: map, readings: readings).output
            var claims: [String: Int] = [:]
            for floors in shares {
                var configuration = FloorShareTests.configuration(floors: floors)
                configuration.floorMargin = margin
                let share = LocatorReplay.run(map: map, readings: readings, configuration: configuration)
                merged.positions += share.output.positions
                merged.events += share.output.events
                for floor in floors { ignored[floor] = share.replay.counters.otherFloors }
                for position in share.output.positions { claims["\(position.tag) \(position.time)", default: 0] += 1 }
            }
            let wholeClaims = Set(whole.positions.map { "\($0.tag) \($0.time)" })
            missing = wholeClaims.subtracting(claims.keys).count
            extra = Set(claims.keys).subtracting(wholeClaims).count
            var previous: (tag: Substring, time: Double, run: Int)?
            for key in claims.keys.sorted() where claims[key, default: 0] > 1 {
                doubleClaims += 1
                let parts = key.split(separator: " ")
                let time = Double(parts[1]) ?? 0
                let run = previous.map { $0.tag == parts[0] && time - $0.time <= 1.001 ? $0.run + 1 : 1 } ?? 1
                previous = (parts[0], time, run)
                longestDoubleRun = max(longestDoubleRun, run)
            }
            let strip = { (events: [ZoneEvent]) in
                Dictionary(grouping: events, by: { "\($0.floor)-\($0.zone)" }).mapValues {
                    $0.map { "\($0.tag) \($0.kind)" }
                }
            }
            let (a, b) = (strip(merged.events), strip(whole.events))
            differingZones = Set(a.keys).union(b.keys).filter { a[$0] != b[$0] }.sorted()
            eventsIdentical = FloorShareTests.canonical(merged).events == FloorShareTests.canonical(whole).events
        }
    }

    @Test("five locators, one per floor of five, each hearing two floors around its own, merge to one locator's events")
    func fiveFloorsMergeToOne() throws {
        let map = try FloorMap.parse(TestFixtures.bytes("split/five-floors.json")).get()
        let readings = try Self.recording(map: map, tags: 8, duration: 600, seed: 3)
        let merge = Merge(map: map, readings: readings, shares: [[1, 2], [3, 4, 5]], margin: 2)
        let loose = Merge(map: map, readings: readings, shares: [[1, 2], [3, 4, 5]], margin: 1)
        print(
            "SPLIT2 margin 2: \(merge.doubleClaims) double (longest \(merge.longestDoubleRun)), missing \(merge.missing), extra \(merge.extra), zones differing \(merge.differingZones), identical \(merge.eventsIdentical), ignored \(merge.ignored.sorted { $0.key < $1.key }), events \(merge.merged.events.count), positions \(merge.merged.positions.count), readings \(readings.count)"
        )
        print(
            "SPLIT2 margin 1: \(loose.doubleClaims) double (longest \(loose.longestDoubleRun)), missing \(loose.missing), extra \(loose.extra), zones differing \(loose.differingZones), identical \(loose.eventsIdentical), ignored \(loose.ignored.sorted { $0.key < $1.key })"
        )
        let floorsByTag = Dictionary(grouping: merge.merged.positions, by: \.tag).mapValues { Set($0.map(\.floor)) }
        #expect(floorsByTag.values.contains { $0.count >= 3 }, "no tag crossed two floors: the test proves nothing")
    }
}
