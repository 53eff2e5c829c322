import Testing
import WhereaboutsCore
import WhereaboutsDashboard
import WhereaboutsJSON
import WhereaboutsWire

/// Issue 49, item 7: the events list and the zones' hours survive a restart of `web` through its state file, and
/// retained values delivered again after the restart keep their age.
@Suite("Dashboard saved state")
struct DashboardSavedStateTests {
    let map: FloorMap
    let topics: Topics

    init() throws {
        map = try loadMap(try shippedMapText("demo-office.json"))
        topics = Topics(site: map.site.uuid)
    }

    func position(_ minor: UInt16, updated: Double) -> [UInt8] {
        Array(
            TagPosition(
                tag: .demo(minor), name: nil, x: 5, y: 4, floor: 1, zone: 1, zoneName: "Lobby", accuracy: 1.5,
                nearest: nil, updated: updated
            ).payload.utf8)
    }

    func occupancy(count: Int, updated: Double) -> [UInt8] {
        Array(
            ZoneOccupancy(
                site: map.site.uuid, floor: 1, zone: 1, name: "Lobby", state: .known, count: count,
                tags: (0..<count).map { .init(id: .demo(UInt16($0 + 1)), name: nil) }, updated: updated
            ).payload.utf8)
    }

    /// A dashboard that ran for a while: events, occupancy changes, a position, statuses.
    func ranState() throws -> DashboardState {
        var state = DashboardState(map: map)
        for second in 0..<30 {
            let event = ZoneEvent(
                time: Double(second), tag: .demo(UInt16(second % 4 + 1)), floor: 1, zone: 1, zoneName: "Lobby",
                kind: second % 2 == 0 ? .enter : .exit)
            _ = state.ingest(topic: topics.events.name, payload: Array(event.payload.utf8), now: 1000 + Double(second))
            _ = state.ingest(
                topic: topics.occupancy(floor: 1, zone: 1).name, payload: occupancy(count: second % 3, updated: 50),
                now: 1000 + Double(second))
        }
        _ = state.ingest(topic: topics.position(tag: .demo(1)).name, payload: position(1, updated: 77), now: 1010)
        _ = state.ingest(topic: topics.locatorStatus.name, payload: Array("offline".utf8), now: 1020)
        _ = state.ingest(
            topic: topics.agentStatus(agent: try #require(AgentID("g-lobby"))).name, payload: Array("offline".utf8),
            now: 1025)
        return state
    }

    func zoneSeen(_ state: DashboardState, now: Double) -> JSONValue? {
        state.snapshot(now: now).json.object?["zones"]?.array?.first { $0.object?["key"] == .string("1-1") }?
            .object?["seen"]
    }

    func seen(_ state: DashboardState, now: Double) -> JSONValue? {
        state.snapshot(now: now).json.object?["tags"]?.array?.first?.object?["seen"]
    }

    @Test("events and the zones' last hour are read back as they were saved, through the file's text")
    func roundTrip() throws {
        let before = try ranState()
        let text = JSONWriter().string(before.savedState(now: 1030))
        var after = DashboardState(map: map)
        let read = after.restore(try JSONParser().parse(text), now: 1040)
        #expect(read)
        #expect(after.recentEvents == before.recentEvents)
        #expect(after.recentEvents.count == DashboardState.recentEventCount)
        let lobby = ZoneKey(floor: 1, minor: 1)
        #expect(after.history(of: lobby, now: 1040) == before.history(of: lobby, now: 1040))
        #expect(after.history(of: lobby, now: 1040)?.samples.count == 30)
        let events = after.snapshot(now: 1040).json.object?["events"]?.array
        #expect(events == before.snapshot(now: 1040).json.object?["events"]?.array, "the page's list is the same")
    }

    @Test("a retained value delivered again after the restart keeps its age; a new one is new")
    func agesSurvive() throws {
        let before = try ranState()
        var after = DashboardState(map: map)
        after.restore(before.savedState(now: 1030), now: 1040)
        let tag = topics.position(tag: .demo(1)).name
        _ = after.ingest(topic: tag, payload: position(1, updated: 77), now: 1041)
        #expect(seen(after, now: 1041) == .number(1010), "the same retained position: received at 1010")
        _ = after.ingest(topic: topics.locatorStatus.name, payload: Array("offline".utf8), now: 1041)
        #expect(after.source(now: 1041) == .locatorGone(since: 1020), "gone since 1020, not since the restart")
        _ = after.ingest(
            topic: topics.agentStatus(agent: try #require(AgentID("g-lobby"))).name, payload: Array("offline".utf8),
            now: 1041)
        #expect(after.snapshot(now: 1041).json.object?["agents_since"]?.object?["g-lobby"] == .number(1025))
        _ = after.ingest(topic: tag, payload: position(1, updated: 78), now: 1042)
        #expect(seen(after, now: 1042) == .number(1042), "a new position is new")
    }

    @Test("a retained value delivered again while web runs (a new broker session) keeps its age; a new one is new")
    func agesSurviveRedelivery() throws {
        var state = DashboardState(map: map)
        let tag = topics.position(tag: .demo(1)).name
        let zone = topics.occupancy(floor: 1, zone: 1).name
        _ = state.ingest(topic: tag, payload: position(1, updated: 77), now: 80)
        _ = state.ingest(topic: zone, payload: occupancy(count: 1, updated: 77), now: 80)
        _ = state.ingest(topic: tag, payload: position(1, updated: 77), now: 500)
        _ = state.ingest(topic: zone, payload: occupancy(count: 1, updated: 77), now: 500)
        #expect(seen(state, now: 500) == .number(80), "the same retained position: received at 80")
        #expect(zoneSeen(state, now: 500) == .number(80), "the same retained occupancy: received at 80")
        _ = state.ingest(topic: tag, payload: position(1, updated: 78), now: 501)
        _ = state.ingest(topic: zone, payload: occupancy(count: 1, updated: 78), now: 501)
        #expect(seen(state, now: 501) == .number(501), "a new position is new")
        #expect(zoneSeen(state, now: 501) == .number(501), "a new occupancy is new")
    }

    @Test("a state file as written before, with its entries' names, is read back: ages, statuses and hours")
    func readsTheWrittenNames() throws {
        let tag = TagIdentity.demo(1).description
        let text = """
            {"version": 1, "site": "\(map.site.uuid)", "events": [],
             "histories": [{"zone": "1-1", "samples": [[1000, "known", 2]], "crossings": [[1001, "Alice", "enter"]]}],
             "seen": [["tag \(tag)", 77, 1010], ["zone 1-1", 50, 1005]],
             "statuses": [["locator", "offline", 1020], ["agent g-lobby", "offline", 1025]]}
            """
        var state = DashboardState(map: map)
        #expect(state.restore(try JSONParser().parse(text), now: 1040))
        #expect(state.history(of: ZoneKey(floor: 1, minor: 1), now: 1040)?.samples.count == 1)
        #expect(state.history(of: ZoneKey(floor: 1, minor: 1), now: 1040)?.crossings.count == 1)
        _ = state.ingest(topic: topics.position(tag: .demo(1)).name, payload: position(1, updated: 77), now: 1041)
        _ = state.ingest(
            topic: topics.occupancy(floor: 1, zone: 1).name, payload: occupancy(count: 2, updated: 50), now: 1041)
        _ = state.ingest(topic: topics.locatorStatus.name, payload: Array("offline".utf8), now: 1041)
        _ = state.ingest(
            topic: topics.agentStatus(agent: try #require(AgentID("g-lobby"))).name, payload: Array("offline".utf8),
            now: 1041)
        let snapshot = try #require(state.snapshot(now: 1041).json.object)
        #expect(seen(state, now: 1041) == .number(1010))
        let lobby = snapshot["zones"]?.array?.compactMap(\.object).first { $0["key"] == .string("1-1") }
        #expect(lobby?["seen"] == .number(1005))
        #expect(state.source(now: 1041) == .locatorGone(since: 1020))
        #expect(snapshot["agents_since"]?.object?["g-lobby"] == .number(1025))
        // And it writes them under the same names.
        let saved = try #require(state.savedState(now: 1041).object)
        #expect(saved["seen"]?.array?.compactMap { $0.array?.first?.string } == ["tag \(tag)", "zone 1-1"])
        #expect(saved["statuses"]?.array?.compactMap { $0.array?.first?.string } == ["locator", "agent g-lobby"])
        #expect(saved["histories"]?.array?.first?.object?["zone"] == .string("1-1"))
    }

    @Test("the saved state changes with what the dashboard holds, not with the clock: web writes it only then")
    func sameStateSameText() throws {
        var state = try ranState()
        let first = JSONWriter().string(state.savedState(now: 1030))
        #expect(JSONWriter().string(state.savedState(now: 1040)) == first, "nothing new came in")
        _ = state.ingest(topic: topics.position(tag: .demo(1)).name, payload: position(1, updated: 78), now: 1041)
        let moved = JSONWriter().string(state.savedState(now: 1050))
        #expect(moved != first, "a new position: its receive time is kept")
        #expect(JSONWriter().string(state.savedState(now: 1060)) == moved)
        let event = ZoneEvent(time: 60, tag: .demo(2), floor: 1, zone: 1, zoneName: "Lobby", kind: .enter)
        _ = state.ingest(topic: topics.events.name, payload: Array(event.payload.utf8), now: 1061)
        #expect(JSONWriter().string(state.savedState(now: 1070)) != moved, "an event")
    }

    @Test("a state for another site, another version, or not a state at all is not read")
    func refusals() throws {
        let saved = try #require(try ranState().savedState(now: 1030).object)
        var otherSite = saved
        otherSite.members = saved.members.map {
            $0.key == "site" ? ("site", "00000000-0000-0000-0000-000000000000") : $0
        }
        var otherVersion = saved
        otherVersion.members = saved.members.map { $0.key == "version" ? ("version", 99) : $0 }
        for refused: JSONValue in [.object(otherSite), .object(otherVersion), [1, 2], "state"] {
            var state = DashboardState(map: map)
            let read = state.restore(refused, now: 1040)
            #expect(!read)
            #expect(state.recentEvents.isEmpty)
        }
    }

    @Test("saved entries for zones no longer on the map, and malformed ones, are skipped")
    func skipsWhatTheMapLost() throws {
        var saved = try #require(try ranState().savedState(now: 1030).object)
        saved.members = saved.members.map { member in
            guard member.key == "histories" else { return member }
            return (
                "histories",
                [
                    ["zone": "9-99", "samples": [[1000, "known", 3]], "crossings": []],
                    ["zone": "1-1", "samples": "x"],
                ]
            )
        }
        var state = DashboardState(map: map)
        let read = state.restore(.object(saved), now: 1040)
        #expect(read)
        #expect(state.history(of: ZoneKey(floor: 9, minor: 99), now: 1040) == nil)
        #expect(state.history(of: ZoneKey(floor: 1, minor: 1), now: 1040)?.samples.isEmpty == true)
        #expect(state.recentEvents.count == DashboardState.recentEventCount, "the rest is read")
    }
}
