import Testing
import WhereaboutsCore
import WhereaboutsDashboard
import WhereaboutsJSON
import WhereaboutsWire

/// Issue 49, item 6: what the dashboard shows is marked stale when its source is gone, and says which source: the
/// broker (web's own link), the locator, a simulation that ended, or a zone's agents.
@Suite("Dashboard freshness")
struct DashboardFreshnessTests {
    let map: FloorMap
    let topics: Topics

    init() throws {
        map = try loadMap(try shippedMapText("demo-office.json"))
        topics = Topics(site: map.site.uuid)
    }

    func position(_ minor: UInt16, zone: UInt16?, updated: Double = 100) -> [UInt8] {
        Array(
            TagPosition(
                tag: .demo(minor), name: nil, x: 5, y: 4, floor: 1, zone: zone, zoneName: zone.map { "zone \($0)" },
                accuracy: 1.5, nearest: nil, updated: updated, probability: 0.82,
                zones: [ZoneShare(zone: 1, probability: 0.82), ZoneShare(zone: 2, probability: 0.15)]
            ).payload.utf8)
    }

    func occupancy(zone: UInt16, state: ZoneOccupancy.State, updated: Double = 100) -> [UInt8] {
        Array(
            ZoneOccupancy(
                site: map.site.uuid, floor: 1, zone: zone, name: "Lobby", state: state, count: state == .known ? 1 : 0,
                tags: state == .known ? [.init(id: .demo(1), name: nil, probability: 0.82)] : [], updated: updated
            ).payload.utf8)
    }

    /// A dashboard connected to its broker with the locator online and tag 1 in zone 1, tag 2 in zone 2.
    func liveState() -> DashboardState {
        var state = DashboardState(map: map)
        _ = state.brokerLink(.connecting(since: 0), now: 0)
        _ = state.brokerLink(.connected(sessionKept: false), now: 1)
        _ = state.ingest(topic: topics.locatorStatus.name, payload: Array("online".utf8), now: 1)
        _ = state.ingest(topic: topics.position(tag: .demo(1)).name, payload: position(1, zone: 1), now: 2)
        _ = state.ingest(topic: topics.position(tag: .demo(2)).name, payload: position(2, zone: 2), now: 2)
        _ = state.ingest(
            topic: topics.occupancy(floor: 1, zone: 1).name, payload: occupancy(zone: 1, state: .known), now: 2)
        _ = state.ingest(
            topic: topics.occupancy(floor: 1, zone: 2).name, payload: occupancy(zone: 2, state: .known), now: 2)
        return state
    }

    func sourceObject(_ state: DashboardState, now: Double) throws -> JSONObject {
        try #require(state.snapshot(now: now).json.object?["source"]?.object)
    }

    /// What the page's freshness rule reads (DashboardScript's isStale, freshenTag and freshenZone): web's source,
    /// each zone's state, and the zone each dot is in. The rule itself is the page's; these are its inputs as served.
    struct PageFacts {
        var source: String?
        var zones: [String: String] = [:]
        var tagZones: [String: String] = [:]

        /// The state of the zone a tag's dot is in, if it is in one.
        func zoneState(ofTag tag: TagIdentity) -> String? { tagZones[tag.description].flatMap { zones[$0] } }
    }

    func facts(_ state: DashboardState, now: Double) throws -> PageFacts {
        let snapshot = try #require(state.snapshot(now: now).json.object)
        var facts = PageFacts(source: snapshot["source"]?.object?["state"]?.string)
        for zone in snapshot["zones"]?.array?.compactMap(\.object) ?? [] {
            if let key = zone["key"]?.string { facts.zones[key] = zone["state"]?.string }
        }
        for tag in snapshot["tags"]?.array?.compactMap(\.object) ?? [] {
            if let id = tag["id"]?.string { facts.tagZones[id] = tag["zone_key"]?.string }
        }
        return facts
    }

    @Test("with the broker up and the locator online everything is current")
    func live() throws {
        var state = liveState()
        #expect(state.source(now: 3) == .live)
        let served = try facts(state, now: 3)
        #expect(served.zones["1-1"] == "known" && served.zoneState(ofTag: .demo(1)) == "known")
        #expect(try sourceObject(state, now: 3)["state"] == .string("live"))
        #expect(try sourceObject(state, now: 3)["now"] == .number(3), "the page counts ages on web's clock")
        let first = state.refreshSource(now: 3)
        let second = state.refreshSource(now: 4)
        #expect(first != nil, "the first live source is news")
        #expect(second == nil, "the same source again is not")
    }

    @Test("before the broker answers, the dashboard says it is connecting, not that anything is offline")
    func connecting() throws {
        var state = DashboardState(map: map)
        let connecting = state.brokerLink(.connecting(since: 5), now: 5)
        let change = try #require(connecting.last)
        guard case .source(let view) = change.kind else { throw SchemaTestError("not a source change") }
        #expect(view.state == "broker-connecting" && view.since == 5)
        let failed = state.brokerLink(.lost(since: 7), now: 7)
        #expect(failed.isEmpty, "failing to connect is still connecting")
    }

    @Test("the locator's last will makes dots and counts stale since it went, and says the locator is gone")
    func locatorGone() throws {
        var state = liveState()
        _ = state.refreshSource(now: 2)
        _ = state.ingest(topic: topics.locatorStatus.name, payload: Array("offline".utf8), now: 10)
        let announced = state.refreshSource(now: 10)
        let change = try #require(announced)
        guard case .source(let view) = change.kind else { throw SchemaTestError("not a source change") }
        #expect(view.state == "locator-gone" && view.since == 10 && view.now == 10)
        #expect(view.sentence == "the locator is offline: nothing shown is current")
        #expect(state.source(now: 50) == .locatorGone(since: 10), "the loss keeps its time")
        #expect(try facts(state, now: 50).source == "locator-gone", "the page greys every dot and count")
        let tag = try #require(state.snapshot(now: 50).json.object?["tags"]?.array?.first?.object)
        #expect(tag["seen"] == .number(2), "a dot's age counts from when its position arrived")
        #expect(state.snapshot(now: 50).json.object?["locator"]?.object?["since"] == .number(10))
    }

    @Test("losing the broker is told apart from the locator going: statuses keep their last word, not offline")
    func brokerLost() throws {
        var state = liveState()
        _ = state.ingest(
            topic: topics.agentStatus(agent: try #require(AgentID("g-lobby"))).name, payload: Array("online".utf8),
            now: 3)
        _ = state.refreshSource(now: 3)
        let lost = state.brokerLink(.lost(since: 20), now: 20)
        let change = try #require(lost.last)
        guard case .source(let view) = change.kind else { throw SchemaTestError("not a source change") }
        #expect(view.state == "broker-lost" && view.since == 20)
        #expect(state.source(now: 30) == .brokerLost(since: 20))
        let again = state.brokerLink(.lost(since: 25), now: 25)
        #expect(again.isEmpty, "a failed reconnect keeps the first loss")
        #expect(state.source(now: 30) == .brokerLost(since: 20))
        let snapshot = try #require(state.snapshot(now: 30).json.object)
        #expect(snapshot["locator"]?.object?["status"] == .string("online"), "not reported offline")
        #expect(snapshot["agents"]?.object?["g-lobby"] == .bool(true), "not reported offline")
        #expect(try facts(state, now: 30).source == "broker-lost", "the page greys every dot")
        // Whatever the locator said last (the broker may deliver wills as it shuts down), the broker's loss is named.
        _ = state.ingest(topic: topics.locatorStatus.name, payload: Array("offline".utf8), now: 21)
        #expect(state.source(now: 30) == .brokerLost(since: 20))
        _ = state.ingest(topic: topics.locatorStatus.name, payload: Array("online".utf8), now: 31)
        let backChange = state.brokerLink(.connected(sessionKept: true), now: 31)
        let back = try #require(backChange.last)
        guard case .source(let live) = back.kind else { throw SchemaTestError("not a source change") }
        #expect(live.state == "live" && live.since == nil)
    }

    @Test("a silent zone makes the dots inside it stale, and only those")
    func silentZone() throws {
        var state = liveState()
        _ = state.ingest(
            topic: topics.occupancy(floor: 1, zone: 1).name, payload: occupancy(zone: 1, state: .unknown, updated: 110),
            now: 12)
        _ = state.ingest(
            topic: topics.occupancy(floor: 1, zone: 1).name, payload: occupancy(zone: 1, state: .unknown, updated: 120),
            now: 22)
        #expect(state.source(now: 30) == .live)
        let served = try facts(state, now: 30)
        #expect(served.source == "live")
        #expect(served.zoneState(ofTag: .demo(1)) == "unknown", "in the silent zone: its dot is grey")
        #expect(served.zoneState(ofTag: .demo(2)) == "known", "in a zone whose agents report: its dot is not")
        #expect(served.zones["1-1"] == "unknown")
        let zones = state.snapshot(now: 30).json.object?["zones"]?.array?.compactMap(\.object) ?? []
        let lobby = try #require(zones.first { $0["key"] == .string("1-1") })
        #expect(lobby["unknown_since"] == .number(12), "unknown since it first said so")
        #expect(lobby["seen"] == .number(22))
        let tag = try #require(state.snapshot(now: 30).json.object?["tags"]?.array?.first?.object)
        #expect(tag["zone_key"] == .string("1-1"), "the page finds the dot's zone by its key")
    }

    @Test("the probabilities received are passed on: a zone's members and a tag's zones")
    func probabilities() throws {
        let state = liveState()
        let snapshot = try #require(state.snapshot(now: 3).json.object)
        let zones = snapshot["zones"]?.array?.compactMap(\.object) ?? []
        let lobby = try #require(zones.first { $0["key"] == .string("1-1") })
        #expect(lobby["members"] == .array([.object(JSONObject([("label", "Alice"), ("p", 0.82)]))]))
        let tag = try #require(snapshot["tags"]?.array?.first?.object)
        #expect(tag["p"] == .number(0.82))
        let names = map.zones.filter { $0.floor == 1 && ($0.minor == 1 || $0.minor == 2) }.map(\.name)
        #expect(
            tag["zones"]
                == .array([
                    .object(JSONObject([("name", .string(names[0])), ("p", 0.82)])),
                    .object(JSONObject([("name", .string(names[1])), ("p", 0.15)])),
                ]))
    }

    @Test("a simulation's end is said by the clock alone, on the page and on the terminal")
    func simulationEnded() throws {
        var state = liveState()
        state.simulationEnd = 60
        _ = state.refreshSource(now: 59)
        #expect(state.source(now: 59) == .live)
        let announced = state.refreshSource(now: 60)
        let change = try #require(announced, "the clock passing the end is news")
        guard case .source(let view) = change.kind else { throw SchemaTestError("not a source change") }
        #expect(view.state == "simulation-ended" && view.since == 60)
        // The demo's last frame: the simulated agents said goodbye, so the zones are unknown.
        _ = state.ingest(
            topic: topics.occupancy(floor: 1, zone: 1).name, payload: occupancy(zone: 1, state: .unknown), now: 61)
        let board = TerminalBoard.text(state, elapsed: 63, duration: 60, now: 63)
        #expect(
            board.split(separator: "\n").first?.hasSuffix(" · the simulation ended: nothing moves any more (3 s ago)")
                == true)
        #expect(board.contains("(unknown: the simulation ended)"))
        #expect(!board.contains("its agents are silent"))
    }

    @Test("the terminal says when the locator is gone, and how long ago")
    func terminalLocatorGone() {
        var state = liveState()
        _ = state.ingest(topic: topics.locatorStatus.name, payload: Array("offline".utf8), now: 10)
        let header = TerminalBoard.text(state, elapsed: 0, duration: nil, now: 200).split(separator: "\n").first
        #expect(
            header?.hasSuffix("locator offline · the locator is offline: nothing shown is current (3 min ago)") == true)
    }

    @Test("back on a new session, the locator's old word is forgotten until the broker repeats it")
    func newSession() throws {
        var state = liveState()
        _ = state.brokerLink(.lost(since: 20), now: 20)
        let back = state.brokerLink(.connected(sessionKept: false), now: 30)
        guard case .source(let view) = try #require(back.last).kind else {
            throw SchemaTestError("not a source change")
        }
        #expect(view.state == "locator-unknown", "a restarted broker may have lost it; the locator may be gone")
        #expect(state.locator == nil)
        _ = state.ingest(topic: topics.locatorStatus.name, payload: Array("online".utf8), now: 31)
        #expect(state.source(now: 31) == .live)
        // With the session kept, the broker queued whatever was said meanwhile: the old word stands.
        _ = state.brokerLink(.lost(since: 40), now: 40)
        _ = state.brokerLink(.connected(sessionKept: true), now: 41)
        #expect(state.source(now: 41) == .live)
    }

    @Test(
        "the wills a broker sends as it shuts down do not make the locator and agents offline, in either order",
        arguments: [true, false])
    func shutdownWills(willsFirst: Bool) throws {
        var state = liveState()
        let agent = topics.agentStatus(agent: try #require(AgentID("g-lobby"))).name
        _ = state.ingest(topic: agent, payload: Array("online".utf8), now: 3)
        _ = state.refreshSource(now: 3)
        func wills(at now: Double) -> [DashboardChange] {
            [
                state.ingest(topic: topics.locatorStatus.name, payload: Array("offline".utf8), now: now),
                state.ingest(topic: agent, payload: Array("offline".utf8), now: now),
            ].compactMap { $0 }
        }
        var sent: [DashboardChange] = []
        if willsFirst {
            sent += wills(at: 20.0)
            sent += state.brokerLink(.lost(since: 20.1), now: 20.1)
        } else {
            sent += state.brokerLink(.lost(since: 20.0), now: 20.0)
            sent += wills(at: 20.1)
        }
        #expect(state.source(now: 25) == .brokerLost(since: willsFirst ? 20.1 : 20.0), "broker lost, not locator gone")
        #expect(state.locator == .online)
        let snapshot = try #require(state.snapshot(now: 25).json.object)
        #expect(snapshot["agents"]?.object?["g-lobby"] == .bool(true))
        #expect(snapshot["agents_since"]?.object?["g-lobby"] == .number(3), "since when it was last heard online")
        // The pages end where the state is. Wills first: they were sent, and the last locator and agent changes
        // take them back (online). Wills after the loss: they are not sent at all.
        let lastLocator = sent.last { if case .locator = $0.kind { true } else { false } }
        let lastAgent = sent.last { if case .agent = $0.kind { true } else { false } }
        if willsFirst {
            guard case .locator(let view)? = lastLocator?.kind, case .agent(_, let online, _)? = lastAgent?.kind else {
                Issue.record("the wills' changes were not taken back: \(sent)")
                return
            }
            #expect(view.status == "online")
            #expect(online)
        } else {
            #expect(lastLocator == nil && lastAgent == nil, "\(sent)")
        }
    }

    @Test("a locator that went offline well before the broker was lost stays gone")
    func realDepartureBeforeTheLoss() {
        var state = liveState()
        _ = state.ingest(topic: topics.locatorStatus.name, payload: Array("offline".utf8), now: 10)
        _ = state.brokerLink(.lost(since: 20), now: 20)
        #expect(state.locator == .offline)
        #expect(state.source(now: 21) == .brokerLost(since: 20))
    }
}
