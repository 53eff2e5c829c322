import Testing
import WhereaboutsCore
import WhereaboutsDashboard
import WhereaboutsJSON
import WhereaboutsWire

@Suite("Terminal board")
struct TerminalBoardTests {
    let map: FloorMap
    let topics: Topics

    init() throws {
        map = try loadMap(try shippedMapText("demo-office.json"))
        topics = Topics(site: map.site.uuid)
    }

    func occupancy(floor: UInt16, zone: UInt16, state: ZoneOccupancy.State, tags: [TagIdentity]) -> [UInt8] {
        Array(
            ZoneOccupancy(
                site: map.site.uuid, floor: floor, zone: zone, name: "Lobby", state: state, count: tags.count,
                tags: tags.map { .init(id: $0, name: $0 == .demo(1) ? "Alice" : nil) }, updated: 100
            ).payload.utf8)
    }

    @Test("the header, every zone (known, unknown, not yet published) and the last events, as watch prints them")
    func board() throws {
        var state = DashboardState(map: map)
        let metrics = LocatorMetrics(
            time: 5, readingsAccepted: 1200, readingsRejected: [:], tagsTracked: 9, agentsOnline: 15, latencyP50: 20,
            latencyP99: 80, inputLagP50: 240, inputLagP99: 610)
        let crowd = [TagIdentity.demo(1)] + (2...8).map { TagIdentity.demo(UInt16($0)) }
        _ = state.ingest(topic: topics.locatorStatus.name, payload: Array("online".utf8), now: 0)
        _ = state.ingest(topic: topics.locatorMetrics.name, payload: Array(metrics.payload.utf8), now: 0)
        _ = state.ingest(
            topic: topics.occupancy(floor: 1, zone: 1).name,
            payload: occupancy(floor: 1, zone: 1, state: .known, tags: crowd), now: 0)
        _ = state.ingest(
            topic: topics.occupancy(floor: 2, zone: 7).name,
            payload: occupancy(floor: 2, zone: 7, state: .unknown, tags: []), now: 0)
        for minor in UInt16(1)...8 {
            let event = ZoneEvent(
                time: 100, tag: .demo(minor), name: minor == 1 ? "Alice" : nil, floor: 1, zone: 1,
                zoneName: "Lobby", kind: minor % 2 == 0 ? .exit : .enter)
            _ = state.ingest(topic: topics.events.name, payload: Array(event.payload.utf8), now: 0)
        }
        // Not on the map: dropped, as the live page drops it.
        let stray = ZoneEvent(time: 100, tag: .demo(9), floor: 1, zone: 99, kind: .enter)
        _ = state.ingest(topic: topics.events.name, payload: Array(stray.payload.utf8), now: 0)

        let lines = TerminalBoard.text(state, elapsed: 75, duration: 300).split(separator: "\n").map(String.init)
        #expect(
            lines.first
                == "Whereabouts · Demo Office · 1:15 [#######-----------------------] 25 % · locator online"
                + " · 1200 readings, 0 rejected, 9 tags, 15/16 agents")
        #expect(lines.contains("Floor 1 · Ground floor"))
        #expect(
            lines.contains(
                "  Lobby                    8  Alice, Bob, Forklift 3, 100-4, 100-5, 100-6 +2"))
        #expect(lines.contains("  Server Room              ?    (unknown: its agents are silent)"))
        #expect(lines.contains("  Reception                  –  (not yet published)"))
        let events = Array(lines.drop { $0 != "Recent events" }.dropFirst())
        #expect(events.count == TerminalBoard.eventCount)
        #expect(events.first == "  100-8 left Lobby", "newest first")
        #expect(events.last == "  Forklift 3 entered Lobby")
        // A tag its payload gives no name is called as the live page calls it: the map's name, else major-minor
        // (issue 49, item 8: the terminal said `tag 100-4` where the page said `100-4`).
        #expect(state.label(for: .demo(3)) == "Forklift 3" && state.label(for: .demo(4)) == "100-4")
        #expect(!lines.contains { $0.contains("100-9") })
    }

    @Test("before anything arrives: the locator unknown, no figures, no events")
    func empty() {
        let text = TerminalBoard.text(DashboardState(map: map), elapsed: 5, duration: nil)
        #expect(text.hasPrefix("Whereabouts · Demo Office · 0:05 · locator unknown\n"))
        #expect(!text.contains("Recent events"))
        #expect(text.hasSuffix("\n"))
    }

    @Test("the terminal names every member and every event's tag exactly as the page does")
    func namesAsThePage() throws {
        var state = DashboardState(map: map)
        let members = [TagIdentity.demo(1), .demo(3), .demo(4)]
        _ = state.ingest(
            topic: topics.occupancy(floor: 1, zone: 1).name,
            payload: occupancy(floor: 1, zone: 1, state: .known, tags: members), now: 0)
        let event = ZoneEvent(time: 100, tag: .demo(4), floor: 1, zone: 1, zoneName: "Lobby", kind: .enter)
        _ = state.ingest(topic: topics.events.name, payload: Array(event.payload.utf8), now: 0)
        let snapshot = try #require(state.snapshot(now: 0).json.object)
        let lobby = try #require(snapshot["zones"]?.array?.compactMap(\.object).first { $0["key"] == .string("1-1") })
        let pageNames = (lobby["members"]?.array ?? []).compactMap { $0.object?["label"]?.string }
        #expect(pageNames == ["Alice", "Forklift 3", "100-4"])
        let lines = TerminalBoard.text(state, elapsed: 0, duration: nil).split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("  Lobby") && $0.hasSuffix("  " + pageNames.joined(separator: ", ")) })
        let pageEvent = try #require(snapshot["events"]?.array?.first?.object?["label"]?.string)
        #expect(lines.contains("  \(pageEvent) entered Lobby"))
    }

    @Test("an event's zone is the map's name (by floor and zone), as on the page, not the name in the message")
    func zoneNameFromTheMap() throws {
        var state = DashboardState(map: map)
        // Floor 1 zone 3 is Meeting Room A on the map; a locator with an older map calls it otherwise.
        let event = ZoneEvent(time: 100, tag: .demo(1), floor: 1, zone: 3, zoneName: "Old Meeting Room", kind: .enter)
        _ = state.ingest(topic: topics.events.name, payload: Array(event.payload.utf8), now: 0)
        let pageZone = try #require(state.snapshot(now: 0).json.object?["events"]?.array?.first?.object?["zone"])
        #expect(pageZone == .string("Meeting Room A"))
        let text = TerminalBoard.text(state, elapsed: 0, duration: nil)
        #expect(text.contains("\n  Alice entered Meeting Room A\n"), "\(text)")
        #expect(!text.contains("Old Meeting Room"))
    }

    @Test("names from the broker reach the terminal without their control characters: no escape sequence is printed")
    func controlCharactersInNames() throws {
        var state = DashboardState(map: map)
        let name = "Eve\u{1B}[2J\u{9B}31m\u{202E}\nLobby"
        let event = ZoneEvent(time: 100, tag: .demo(2), name: name, floor: 1, zone: 1, kind: .enter)
        _ = state.ingest(topic: topics.events.name, payload: Array(event.payload.utf8), now: 0)
        let occupancy = ZoneOccupancy(
            site: map.site.uuid, floor: 1, zone: 1, name: "Lobby", state: .known, count: 1,
            tags: [.init(id: .demo(2), name: name)], updated: 100)
        _ = state.ingest(
            topic: topics.occupancy(floor: 1, zone: 1).name, payload: Array(occupancy.payload.utf8), now: 0)
        let text = TerminalBoard.text(state, elapsed: 0, duration: nil)
        let controls = text.unicodeScalars.filter { $0 != "\n" && ($0.value < 0x20 || (0x7F...0x9F) ~= $0.value) }
        #expect(controls.isEmpty, "\(text.debugDescription)")
        #expect(!text.unicodeScalars.contains("\u{202E}"))
        let shown = "Eve\u{FFFD}[2J\u{FFFD}31m\u{FFFD}\u{FFFD}Lobby"
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains("  \(shown) entered Lobby"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("  Lobby") && $0.hasSuffix("  \(shown)") }, "\(lines)")
    }
}
