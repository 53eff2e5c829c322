import Testing
import WhereaboutsCore
import WhereaboutsDashboard
import WhereaboutsJSON
import WhereaboutsWire

@Suite("Dashboard state")
struct DashboardStateTests {
    let map: FloorMap
    let topics: Topics

    init() throws {
        map = try loadMap(try shippedMapText("demo-office.json"))
        topics = Topics(site: map.site.uuid)
    }

    func position(_ minor: UInt16, x: Double, y: Double, floor: UInt16 = 1, name: String? = nil) -> String {
        TagPosition(
            tag: .demo(minor), name: name, x: x, y: y, floor: floor, zone: 1, zoneName: "Lobby", accuracy: 1.5,
            nearest: nil, updated: 100
        ).payload
    }

    func occupancy(floor: UInt16, zone: UInt16, state: ZoneOccupancy.State, tags: [UInt16]) -> String {
        ZoneOccupancy(
            site: map.site.uuid, floor: floor, zone: zone, name: "Lobby", state: state, count: tags.count,
            tags: tags.map { .init(id: .demo($0), name: nil) }, updated: 100
        ).payload
    }

    @Test("positions, occupancy, events and statuses become numbered changes, and the snapshot holds them")
    func changesAndSnapshot() throws {
        var state = DashboardState(map: map)
        let messages = [
            Delivery(topics.position(tag: .demo(1)), position(1, x: 5, y: 4)),
            Delivery(topics.occupancy(floor: 1, zone: 1), occupancy(floor: 1, zone: 1, state: .known, tags: [1])),
            Delivery(topics.occupancy(floor: 2, zone: 7), occupancy(floor: 2, zone: 7, state: .unknown, tags: [])),
            Delivery(
                topics.events,
                ZoneEvent(time: 100, tag: .demo(1), name: "Alice", floor: 1, zone: 1, zoneName: "Lobby", kind: .enter)
                    .payload),
            Delivery(topics.locatorStatus, "online"),
            Delivery(topics.agentStatus(agent: try #require(AgentID("g-lobby"))), "offline"),
        ]
        var sequences: [UInt64] = []
        for message in messages {
            let ingested = state.ingest(topic: message.topic, payload: message.payload, now: 1000)
            let change = try #require(ingested)
            sequences.append(change.sequence)
        }
        #expect(sequences == [1, 2, 3, 4, 5, 6])
        #expect(state.dropped.isEmpty)

        let snapshot = try #require(state.snapshot().json.object)
        #expect(snapshot["seq"] == .number(6))
        let tags = try #require(snapshot["tags"]?.array)
        #expect(tags.count == 1)
        #expect(tags.first?.object?["label"] == .string("Alice"), "the map's name for a known tag")
        #expect(tags.first?.object?["x"] == .number(5))
        let zones = (snapshot["zones"]?.array ?? []).compactMap { $0.object }
        #expect(zones.count == map.zones.count)
        let lobby = try #require(zones.first { $0["key"] == .string("1-1") })
        #expect(lobby["state"] == .string("known"))
        #expect(lobby["count"] == .number(1))
        let server = try #require(zones.first { $0["key"] == .string("2-7") })
        #expect(server["state"] == .string("unknown"), "unknown stays unknown, never 0")
        let reception = try #require(zones.first { $0["key"] == .string("1-2") })
        #expect(reception["state"] == .string("pending"), "not yet published")
        #expect(reception["count"] == .null)
        #expect(snapshot["locator"]?.object?["status"] == .string("online"))
        #expect(snapshot["agents"]?.object?["g-lobby"] == .bool(false))
        #expect(snapshot["agents"]?.object?["g-kitchen"] == .null)
        #expect(snapshot["events"]?.array?.count == 1)
    }

    @Test("a tag's zone is named by the map, whatever name its position message carries")
    func tagZoneNameFromTheMap() throws {
        var state = DashboardState(map: map)
        let renamed = TagPosition(
            tag: .demo(1), name: nil, x: 5, y: 4, floor: 1, zone: 3, zoneName: "Old Meeting Room", accuracy: 1.5,
            nearest: nil, updated: 100
        ).payload
        let delivery = Delivery(topics.position(tag: .demo(1)), renamed)
        let change = state.ingest(topic: delivery.topic, payload: delivery.payload, now: 1000)
        #expect(change != nil)
        let tags = try #require(state.snapshot().json.object?["tags"]?.array)
        #expect(tags.first?.object?["zone"] == .string("Meeting Room A"))
    }

    @Test("an empty retained position removes the tag; a repeated agent status is not a change")
    func removalAndRepeats() throws {
        var state = DashboardState(map: map)
        let topic = topics.position(tag: .demo(2)).name
        _ = state.ingest(topic: topic, payload: Array(position(2, x: 1, y: 1).utf8), now: 0)
        #expect(state.tagCount == 1)
        let ingested = state.ingest(topic: topic, payload: [], now: 1)
        let removed = try #require(ingested)
        #expect(removed.kind == .tagRemoved(id: TagIdentity.demo(2).description))
        #expect(state.tagCount == 0)
        #expect(state.ingest(topic: topic, payload: [], now: 2) == nil, "clearing an unknown tag changes nothing")
        let agent = topics.agentStatus(agent: try #require(AgentID("g-lobby"))).name
        #expect(state.ingest(topic: agent, payload: Array("online".utf8), now: 3) != nil)
        #expect(state.ingest(topic: agent, payload: Array("online".utf8), now: 4) == nil)
    }

    @Test("the readings rate comes from two metrics and the wall clock between them")
    func readingsRate() throws {
        var state = DashboardState(map: map)
        func metrics(_ accepted: Int) -> [UInt8] {
            Array(
                LocatorMetrics(
                    time: 5, readingsAccepted: accepted, readingsRejected: [:], tagsTracked: 3, agentsOnline: 16,
                    latencyP50: 20, latencyP99: 80, inputLagP50: 240, inputLagP99: 610
                ).payload.utf8)
        }
        _ = state.ingest(topic: topics.locatorMetrics.name, payload: metrics(1000), now: 100)
        _ = state.ingest(topic: topics.locatorMetrics.name, payload: metrics(3000), now: 110)
        let locator = try #require(state.snapshot().json.object?["locator"]?.object?["metrics"]?.object)
        #expect(locator["readings_per_s"] == .number(200))
        #expect(locator["latency_p99_ms"] == .number(80))
        #expect(locator["input_lag_p50_ms"] == .number(240))
        #expect(locator["agents_total"] == .number(16))
    }

    @Test(
        "hostile broker messages are dropped and counted, never shown",
        arguments: [
            (
                "whereabouts/v1/00000000-0000-0000-0000-000000000000/events", "{}",
                DashboardState.DropReason.unknownTopic
            ),
            ("whereabouts/v1/f7826da6-4fa2-4e98-8024-bc5b71e0893e/floors/01/zones/1/occupancy", "{}", .unknownTopic),
            ("whereabouts/v1/f7826da6-4fa2-4e98-8024-bc5b71e0893e/floors/1/zones/99/occupancy", "{}", .notOnMap),
            (
                "whereabouts/v1/f7826da6-4fa2-4e98-8024-bc5b71e0893e/floors/1/zones/1/occupancy", "{\"site\":",
                .malformed
            ),
            ("whereabouts/v1/f7826da6-4fa2-4e98-8024-bc5b71e0893e/agents/intruder/status", "online", .notOnMap),
            ("whereabouts/v1/f7826da6-4fa2-4e98-8024-bc5b71e0893e/agents/g-lobby/status", "maybe", .malformed),
            ("whereabouts/v1/f7826da6-4fa2-4e98-8024-bc5b71e0893e/locator/status", "<script>", .malformed),
            ("whereabouts/v1/f7826da6-4fa2-4e98-8024-bc5b71e0893e/events", "[1,2]", .malformed),
            ("whereabouts/v1/f7826da6-4fa2-4e98-8024-bc5b71e0893e/tags/x+/position", "{}", .unknownTopic),
        ])
    func hostileMessages(topic: String, payload: String, reason: DashboardState.DropReason) {
        var state = DashboardState(map: map)
        #expect(state.ingest(topic: topic, payload: Array(payload.utf8), now: 0) == nil)
        #expect(state.dropped == [reason: 1])
        #expect(state.sequence == 0)
    }

    @Test("a position under another tag's topic, on a floor not on the map, or oversized is dropped")
    func mismatchedPositions() {
        var state = DashboardState(map: map)
        let topic = topics.position(tag: .demo(3)).name
        #expect(state.ingest(topic: topic, payload: Array(position(4, x: 1, y: 1).utf8), now: 0) == nil)
        #expect(state.ingest(topic: topic, payload: Array(position(3, x: 1, y: 1, floor: 9).utf8), now: 0) == nil)
        let huge = [UInt8](repeating: UInt8(ascii: " "), count: DashboardState.maximumPayloadBytes + 1)
        #expect(state.ingest(topic: topic, payload: huge, now: 0) == nil)
        #expect(state.dropped == [.malformed: 1, .notOnMap: 1, .oversized: 1])
        #expect(state.tagCount == 0)
    }

    @Test("no more tags than the limit are kept")
    func tagLimit() {
        var state = DashboardState(map: map)
        state.maximumTags = 3
        for minor in UInt16(1)...10 {
            _ = state.ingest(
                topic: topics.position(tag: .demo(minor)).name, payload: Array(position(minor, x: 1, y: 1).utf8),
                now: 0)
        }
        #expect(state.tagCount == 3)
        #expect(state.dropped[.tooManyTags] == 7)
    }

    @Test("a zone's history keeps the last hour, the state at its start, and a bounded number of samples")
    func history() throws {
        var state = DashboardState(map: map)
        let topic = topics.occupancy(floor: 1, zone: 1).name
        // One change a second for two hours: far more than the history keeps.
        for second in 0..<7200 {
            let tags: [UInt16] = second % 2 == 0 ? [1] : []
            _ = state.ingest(
                topic: topic, payload: Array(occupancy(floor: 1, zone: 1, state: .known, tags: tags).utf8),
                now: Double(second))
        }
        let history = try #require(state.history(of: ZoneKey(floor: 1, minor: 1), now: 7200))
        #expect(history.samples.count == ZoneHistory.maximumSamples)
        #expect(history.samples.last?.time == 7199)
        // Repeats of the same count are not new samples.
        _ = state.ingest(
            topic: topic, payload: Array(occupancy(floor: 1, zone: 1, state: .known, tags: []).utf8), now: 7201)
        #expect(state.history(of: ZoneKey(floor: 1, minor: 1), now: 7201)?.samples.count == ZoneHistory.maximumSamples)
        // Two hours of quiet later, only the sample in force at the window's start is left.
        let quiet = try #require(state.history(of: ZoneKey(floor: 1, minor: 1), now: 7200 + 7200))
        #expect(quiet.samples.count == 1)
        #expect(state.history(of: ZoneKey(floor: 9, minor: 9), now: 0) == nil)
    }
}
