import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsMapFile
import WhereaboutsSession
import WhereaboutsWire

/// What the pipeline publishes for Home Assistant: tag zone summaries, their staleness, and the removal of configs
/// the map no longer has.
@Suite("Locator pipeline for Home Assistant")
struct HomeAssistantPipelineTests {
    let start = 1_764_000_000.0

    func zoneTopic(_ harness: PipelineHarness, _ tag: TagIdentity) -> String {
        harness.pipeline.topics.tagZone(tag: tag).name
    }

    func locationTopic(_ harness: PipelineHarness, _ tag: TagIdentity) -> String {
        harness.pipeline.topics.tagLocation(tag: tag).name
    }

    func summary(_ harness: PipelineHarness, _ tag: TagIdentity) throws -> TagZone {
        try TagZone(payload: try #require(harness.retained[zoneTopic(harness, tag)]))
    }

    func bob() throws -> TagIdentity { try #require(TagIdentity("ibeacon-\(site)-100-2")) }

    @Test("a tag standing in a zone has its zone summary published once while its position streams")
    func zoneChangesOnly() throws {
        var harness = try PipelineHarness()
        harness.perform(harness.pipeline.connected(now: start))
        harness.run(tag: try alice(), at: Point(x: 5, y: 4), from: start, seconds: 120)
        let tag = try alice()
        let zones = harness.publications.filter { $0.topic.name == zoneTopic(harness, tag) }
        let locations = harness.publications.filter { $0.topic.name == locationTopic(harness, tag) }
        let positions = harness.publications.filter { $0.topic == harness.pipeline.topics.position(tag: tag) }
        #expect(zones.count == 1, "\(zones.map(\.payload))")
        #expect(locations.map(\.payload) == ["home"], "home in any room: Home Assistant counts only home as home")
        #expect(positions.count > 4 * zones.count)
        let lobby = try summary(harness, try alice())
        #expect(lobby.state == .known && lobby.zoneName == "Lobby" && lobby.floorName == "Ground floor")
        // Where it was when it entered, for the tracker's attributes; not updated while it stays.
        #expect(lobby.x.map { abs($0 - 5) < 3 } == true && lobby.y.map { abs($0 - 4) < 3 } == true)
        #expect(lobby.accuracy != nil && lobby.probability.map { $0 > 0 && $0 <= 1 } == true)
    }

    @Test("no zone summary during the warm-up: a restart does not pass every tag through \"in no zone\"")
    func warmUp() throws {
        var harness = try PipelineHarness()
        harness.perform(harness.pipeline.connected(now: start))
        harness.run(tag: try alice(), at: Point(x: 5, y: 4), from: start, seconds: 9)
        let tag = try alice()
        #expect(!harness.publications.contains { $0.topic.name == zoneTopic(harness, tag) })
        harness.run(tag: try alice(), at: Point(x: 5, y: 4), from: start + 9, seconds: 3)
        #expect(try summary(harness, try alice()).zoneName == "Lobby")
    }

    @Test("with its agents offline a tag's zone turns unknown (location None), and known again when they return")
    func agentsOffline() throws {
        var harness = try PipelineHarness()
        harness.perform(harness.pipeline.connected(now: start))
        harness.run(tag: try alice(), at: Point(x: 27, y: 4), from: start, seconds: 15)
        #expect(try summary(harness, try alice()).zoneName == "Meeting Room B")
        for agent in harness.map.agents where agent.floor == 1 {
            harness.perform(
                harness.pipeline.receive(
                    topic: "whereabouts/v1/\(site)/agents/\(agent.id)/status", payload: Array("offline".utf8),
                    now: start + 15))
        }
        for second in 16...120 { harness.perform(harness.pipeline.tick(now: start + Double(second))) }
        let stale = try summary(harness, try alice())
        #expect(stale.state == .unknown)
        #expect(stale.zoneName == "Meeting Room B", "where it was last seen stays in the attributes")
        #expect(stale.x == nil && stale.probability == nil, "no position said current while it cannot be known")
        #expect(harness.retained[locationTopic(harness, try alice())] == "None")
        for agent in harness.map.agents where agent.floor == 1 {
            harness.perform(
                harness.pipeline.receive(
                    topic: "whereabouts/v1/\(site)/agents/\(agent.id)/status", payload: Array("online".utf8),
                    now: start + 121))
        }
        harness.run(tag: try alice(), at: Point(x: 27, y: 4), from: start + 121, seconds: 5)
        #expect(try summary(harness, try alice()).state == .known)
        #expect(harness.retained[locationTopic(harness, try alice())] == "home")
    }

    @Test("a tag lost while its agents are up says lost and not_home, never an empty payload, and its position clears")
    func lostTag() throws {
        var harness = try PipelineHarness()
        harness.perform(harness.pipeline.connected(now: start))
        harness.run(tag: try alice(), at: Point(x: 5, y: 4), from: start, seconds: 15)
        // The agents stay up, hearing Bob elsewhere; Alice is not heard again.
        harness.run(tag: try bob(), at: Point(x: 20, y: 15), from: start + 15, seconds: 50)
        let lost = try summary(harness, try alice())
        #expect(lost.state == .lost && lost.zone == nil && lost.floor == nil)
        #expect(harness.retained[locationTopic(harness, try alice())] == "not_home")
        #expect(harness.retained[harness.pipeline.topics.position(tag: try alice()).name] == "")
        let tag = try alice()
        let summaries = harness.publications.filter {
            $0.topic.name == zoneTopic(harness, tag) || $0.topic.name == locationTopic(harness, tag)
        }
        #expect(summaries.allSatisfy { !$0.payload.isEmpty && $0.retain })
    }

    @Test("a tag the map does not name is logged once with how to add it; its lost summary is cleared")
    func unmappedTag() throws {
        var harness = try PipelineHarness()
        let stranger = try #require(TagIdentity("ibeacon-\(site)-1000-1"))
        harness.perform(harness.pipeline.connected(now: start))
        harness.run(tag: stranger, at: Point(x: 5, y: 4), from: start, seconds: 15)
        let hints = harness.logs.filter { $0.contains("\(stranger)") && $0.contains("not in the map") }
        #expect(hints.count == 1)
        #expect(hints.first?.contains("SIGHUP") == true)
        #expect(try summary(harness, stranger).zoneName == "Lobby")
        harness.run(tag: try bob(), at: Point(x: 20, y: 15), from: start + 15, seconds: 50)
        #expect(harness.retained[zoneTopic(harness, stranger)] == "")
        #expect(harness.retained[locationTopic(harness, stranger)] == "")
    }

    @Test("discovery configs of ours that the map no longer has are removed when read back at start")
    func leftoverConfigs() throws {
        var harness = try PipelineHarness()
        let node = harness.pipeline.topics.discoveryNode
        #expect(
            harness.pipeline.subscriptions.contains {
                $0.filter == harness.pipeline.topics.allDiscoveryConfigs && $0.noLocal
            })
        let stale = [
            "homeassistant/sensor/\(node)/f9_z9_count/config",
            "homeassistant/device_tracker/\(node)/ibeacon-\(site)-100-9_tracker/config",
        ]
        for topic in stale {
            let actions = harness.pipeline.receive(topic: topic, payload: Array("{}".utf8), now: start)
            #expect(actions == [.publish(try cleared(topic, in: harness))])
        }
        let kept = [
            "homeassistant/sensor/\(node)/f1_z1_count/config",
            "homeassistant/device_tracker/\(node)/ibeacon-\(site)-100-1_tracker/config",
            "homeassistant/sensor/whereabouts_00000000000000000000000000000000/f9_z9_count/config",
        ]
        for topic in kept {
            #expect(harness.pipeline.receive(topic: topic, payload: Array("{}".utf8), now: start).isEmpty)
        }
        #expect(harness.pipeline.receive(topic: stale[0], payload: [], now: start).isEmpty)
    }

    @Test("SIGHUP without a zone and a tag removes their configs first, then the zone's occupancy")
    func reloadRemoves() throws {
        var harness = try PipelineHarness()
        harness.perform(harness.pipeline.connected(now: start))
        harness.run(tag: try alice(), at: Point(x: 5, y: 4), from: start, seconds: 12)
        let smaller = try demoMap { object in
            object["zones"] = (object["zones"] as? [[String: Any]])?.filter { ($0["name"] as? String) != "Server Room" }
            object["tags"] = (object["tags"] as? [[String: Any]])?.filter { ($0["name"] as? String) != "Forklift 3" }
        }
        let actions = harness.pipeline.replaceMap(smaller, now: start + 12)
        let topics = actions.compactMap { action -> Publication? in
            if case .publish(let publication) = action { return publication }
            return nil
        }
        let emptied = topics.filter { $0.payload.isEmpty }.map(\.topic.name)
        let node = harness.pipeline.topics.discoveryNode
        let forklift = "ibeacon-\(site)-100-3"
        let expected = [
            "homeassistant/binary_sensor/\(node)/f2_z7_occupied/config",
            "homeassistant/device_tracker/\(node)/\(forklift)_tracker/config",
            "homeassistant/sensor/\(node)/\(forklift)_zone/config",
            "homeassistant/sensor/\(node)/f2_z7_count/config",
            "whereabouts/v1/\(site)/floors/2/zones/7/occupancy",
        ]
        #expect(Set(expected).isSubset(of: Set(emptied)))
        // Also the removed zone's event entity, the removed tag's event entity and device triggers, and every other
        // tag's device triggers of the removed zone; nothing else.
        #expect(emptied.contains("homeassistant/event/\(node)/f2_z7_events/config"))
        #expect(emptied.contains("homeassistant/event/\(node)/\(forklift)_events/config"))
        #expect(emptied.contains("homeassistant/device_automation/\(node)/\(forklift)_f1_z1_enter/config"))
        #expect(emptied.contains("homeassistant/device_automation/\(node)/ibeacon-\(site)-100-1_f2_z7_exit/config"))
        #expect(emptied.allSatisfy { $0.contains(forklift) || $0.contains("f2_z7") || $0.contains("floors/2/zones/7") })
        // The zone's 3 configs, the tag's 5 (zone, tracker, events, battery voltage and level), its 14 × 2 triggers,
        // the other 2 tags' 2 triggers of the zone, and the occupancy.
        #expect(emptied.count == 3 + 5 + 28 + 2 * 2 + 1)
        #expect(emptied.last == "whereabouts/v1/\(site)/floors/2/zones/7/occupancy")
        // What was removed is not announced again.
        #expect(!topics.contains { !$0.payload.isEmpty && $0.topic.name.contains(forklift) })
        #expect(harness.pipeline.receive(topic: expected[1], payload: Array("{}".utf8), now: start + 13).count == 1)
    }

    func cleared(_ topic: String, in harness: PipelineHarness) throws -> Publication {
        guard case .discoveryConfig(let parsed) = try #require(harness.pipeline.topics.parse(topic)) else {
            Issue.record("\(topic) is not a discovery topic")
            throw CancellationError()
        }
        return Publication(topic: parsed, payload: "", qos: .atLeastOnce, retain: true)
    }

    /// The demo map, changed by `edit`.
    func demoMap(_ edit: (inout [String: Any]) -> Void) throws -> FloorMap {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let data = try #require(
            FileManager.default.contents(atPath: root.appendingPathComponent("maps/demo-office.json").path))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        edit(&object)
        let text = try JSONSerialization.data(withJSONObject: object)
        return try FloorMap.parse(Array(text)).get()
    }
}
