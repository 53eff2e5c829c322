import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsSession
import WhereaboutsWire

/// The Home Assistant entities beyond the zones' and the tags' states: events, device triggers, agents, and a tag's
/// entities surviving its removal from the map.
@Suite("Locator pipeline: Home Assistant events, triggers and agents")
struct HomeAssistantEntitiesTests {
    let start = 1_764_000_000.0

    func announced(_ actions: [ServiceAction<LocatorEffect>]) -> [Publication] {
        actions.compactMap { action -> Publication? in
            if case .publish(let publication) = action, publication.topic.name.hasPrefix("homeassistant/"),
                !publication.payload.isEmpty
            {
                return publication
            }
            return nil
        }
    }

    @Test("an enter is published on the site's events topic, the zone's and the tag's, with the same payload")
    func eventTopics() throws {
        var harness = try PipelineHarness()
        harness.perform(harness.pipeline.connected(now: start))
        harness.run(tag: try alice(), at: Point(x: 5, y: 4), from: start, seconds: 15)
        let topics = harness.pipeline.topics
        let site = harness.publications.filter { $0.topic == topics.events }
        let zone = harness.publications.filter { $0.topic == topics.zoneEvents(floor: 1, zone: 1) }
        let aliceEvents = topics.tagEvents(tag: try alice())
        let tag = harness.publications.filter { $0.topic == aliceEvents }
        let enter = try #require(site.first)
        #expect(try ZoneEvent(payload: enter.payload).kind == .enter)
        #expect(try ZoneEvent(payload: enter.payload).zoneName == "Lobby")
        #expect(zone.map(\.payload) == site.map(\.payload))
        #expect(tag.map(\.payload) == site.map(\.payload))
        #expect((zone + tag).allSatisfy { !$0.retain && $0.qos == .atLeastOnce }, "an event is not a state")
    }

    @Test("announced: an event entity per zone and per named tag, 2 triggers per tag and zone, a device per agent")
    func announcements() throws {
        var harness = try PipelineHarness()
        let configs = announced(harness.pipeline.connected(now: start))
        let map = harness.map
        let node = harness.pipeline.topics.discoveryNode
        let byComponent = Dictionary(grouping: configs, by: { $0.topic.levels[1] })
        #expect(byComponent["event"]?.count == map.zones.count + map.knownTags.count)
        #expect(byComponent["device_automation"]?.count == map.knownTags.count * map.zones.count * 2)
        let agents = configs.filter { $0.topic.name.contains("/\(node)/agent_") }
        #expect(agents.count == map.agents.count * 3, "status, last batch, readings a second")
        #expect(agents.filter { $0.topic.levels[1] == "binary_sensor" }.count == map.agents.count)
    }

    @Test("a tag taken out of the map and put back is announced again with the same topics and unique ids")
    func tagComesBack() throws {
        var harness = try PipelineHarness()
        let original = harness.map
        let first = announced(harness.pipeline.connected(now: start))
        let tag = try alice().description
        let aliceConfigs = first.filter { $0.topic.name.contains(tag) }
        #expect(aliceConfigs.count == 5 + original.zones.count * 2)
        let without = try HomeAssistantPipelineTests().demoMap { object in
            object["tags"] = (object["tags"] as? [[String: Any]])?.filter { ($0["name"] as? String) != "Alice" }
        }
        let removal = harness.pipeline.replaceMap(without, now: start + 1)
        let removed = removal.compactMap { action -> String? in
            if case .publish(let publication) = action, publication.payload.isEmpty { return publication.topic.name }
            return nil
        }
        #expect(Set(removed) == Set(aliceConfigs.map(\.topic.name)))
        let back = announced(harness.pipeline.replaceMap(original, now: start + 2)).filter {
            $0.topic.name.contains(tag)
        }
        #expect(back.map(\.topic) == aliceConfigs.map(\.topic))
        #expect(back.map(\.payload) == aliceConfigs.map(\.payload), "same unique ids, names and device")
    }
}

/// A named tag's battery voltage, from the readings' `battery_mv` to its retained topic.
@Suite("Locator pipeline: tag batteries")
struct TagBatteryTests {
    let start = 1_764_000_000.0

    /// One batch of the map's first agent, with one reading of `tag` carrying `millivolts`.
    func batch(
        _ harness: inout PipelineHarness, tag: TagIdentity, millivolts: Int?, seq: Int, now: Double
    ) throws -> [ServiceAction<LocatorEffect>] {
        let agent = try #require(AgentID(harness.map.agents[0].id))
        let reading = ReadingBatch.Reading(tag: tag, time: now, rssi: -60, batteryMillivolts: millivolts)
        let payload = ReadingBatch(agent: agent, epoch: 1, seq: seq, sent: now, readings: [reading]).payload
        return harness.pipeline.receive(
            topic: harness.pipeline.topics.readings(agent: agent).name, payload: Array(payload.utf8), now: now)
    }

    @Test("published retained in millivolts when first heard, again only after a change of 20 mV or more")
    func publishedOnChange() throws {
        var harness = try PipelineHarness()
        let topic = harness.pipeline.topics.tagBattery(tag: try alice()).name
        var published: [String] = []
        for (seq, millivolts) in [2950, 2945, nil, 2931, 2930, 2990].enumerated() {
            let actions = try batch(&harness, tag: try alice(), millivolts: millivolts, seq: seq, now: start + 1)
            harness.perform(actions)
            published += harness.publications.filter { $0.topic.name == topic }.map(\.payload).dropFirst(
                published.count)
        }
        #expect(published == ["2950", "2930", "2990"])
        #expect(harness.publications.filter { $0.topic.name == topic }.allSatisfy { $0.retain })
        let last = try #require(harness.publications.last { $0.topic.name == topic })
        #expect(harness.pipeline.connected(now: start + 2).contains(.publish(last)), "said again on a reconnection")
    }

    @Test("a tag the map does not name publishes no battery")
    func unnamed() throws {
        var harness = try PipelineHarness()
        let stranger = try #require(TagIdentity("ibeacon-\(site)-1000-1"))
        harness.perform(try batch(&harness, tag: stranger, millivolts: 3000, seq: 0, now: start))
        #expect(!harness.publications.contains { $0.topic.name.hasSuffix("/battery") })
    }

    /// An agent's GATT job result, as the pipeline receives it.
    func gattResult(
        _ harness: inout PipelineHarness, _ payload: String, now: Double
    ) throws -> [ServiceAction<LocatorEffect>] {
        let agent = try #require(AgentID(harness.map.agents[0].id))
        return harness.pipeline.receive(
            topic: harness.pipeline.topics.gattResults(agent: agent).name, payload: Array(payload.utf8), now: now)
    }

    @Test("a GATT battery level of a named tag is published retained in percent, and said again on a reconnection")
    func gattLevel() throws {
        var harness = try PipelineHarness()
        #expect(harness.pipeline.subscriptions.contains { $0.filter == harness.pipeline.topics.allGATTResults })
        let tag = try alice()
        let stranger = try #require(TagIdentity("ibeacon-\(site)-1000-1"))
        let ok = { (tag: TagIdentity, battery: Int) in
            #"{"id":"j","tag":"\#(tag)","status":"ok","values":{"battery":\#(battery)}}"#
        }
        for payload in [
            ok(stranger, 40), #"{"id":"j","tag":"\#(tag)","status":"timeout"}"#,
            #"{"id":"j","tag":"\#(tag)","status":"ok","values":{"manufacturer":"Acme"}}"#, ok(tag, 87),
        ] {
            harness.perform(try gattResult(&harness, payload, now: start))
        }
        let topic = harness.pipeline.topics.tagBatteryLevel(tag: tag)
        let levels = harness.publications.filter { $0.topic.name.hasSuffix("/battery_level") }
        #expect(
            levels == [Publication(topic: topic, payload: "87", qos: .atLeastOnce, retain: true, priority: .background)]
        )
        #expect(
            harness.pipeline.connected(now: start + 1).contains(.publish(levels[0])), "said again on a reconnection")
        #expect(harness.pipeline.counters.rejected.isEmpty, "valid results, all but one not a named tag's level")
    }

    @Test("a malformed GATT result is dropped and counted as bad_gatt_result, and logged")
    func malformedResult() throws {
        var harness = try PipelineHarness()
        let bad = [
            #"{"id":"j","tag":"\#(try alice())","status":"ok","values":{"battery":101}}"#, "not json", "",
            #"{"id":"j","status":"ok","values":{"battery":50},"extra":1}"#,
            String(repeating: " ", count: 5000) + #"{"id":"j","status":"ok"}"#,
        ]
        var logged: [String] = []
        for payload in bad {
            for case .log(_, let line) in try gattResult(&harness, payload, now: start) { logged.append(line) }
        }
        #expect(harness.pipeline.counters.rejected == [.badGATTResult: bad.count])
        #expect(logged.count == 1, "once a minute per reason")
        #expect(logged.first?.contains("dropped a GATT job result from agent") == true)
        #expect(!harness.publications.contains { $0.topic.name.hasSuffix("/battery_level") })
    }
}

/// What the locator sees of each agent, once a minute.
@Suite("Locator pipeline: agent activity")
struct AgentActivityTests {
    let start = 1_764_000_000.0

    @Test("once a minute, each agent's last batch and readings a second over that minute")
    func everyMinute() throws {
        var harness = try PipelineHarness()
        harness.perform(harness.pipeline.connected(now: start))
        harness.run(tag: try alice(), at: Point(x: 5, y: 4), from: start, seconds: 62)
        let topics = harness.pipeline.topics
        let agent = try #require(AgentID(harness.map.agents[0].id))
        let reports = harness.publications.filter { $0.topic == topics.agentActivity(agent: agent) }
        #expect(reports.count == 1, "the first tick starts the count, a report 60 s later")
        let activity = try AgentActivity(payload: try #require(reports.first).payload)
        #expect(activity.time == start + 60)
        #expect(activity.lastBatch == start + 60)
        // One reading a second from an agent that hears the tag: 60 in 60 s.
        #expect(activity.readingsPerSecond == 1)
        #expect(reports.allSatisfy { $0.retain })
        let reported = harness.map.agents.indices.compactMap { index -> AgentActivity? in
            guard let id = AgentID(harness.map.agents[index].id),
                let report = harness.publications.last(where: { $0.topic == topics.agentActivity(agent: id) })
            else { return nil }
            return try? AgentActivity(payload: report.payload)
        }
        #expect(reported.count == harness.map.agents.count, "every agent reported")
    }
}
