import Testing
import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

@testable import WhereaboutsLocator

@Suite("Home Assistant discovery")
struct HomeAssistantDiscoveryTests {
    func published(_ actions: [ServiceAction<LocatorEffect>]) -> [Publication] {
        actions.compactMap {
            guard case .publish(let publication) = $0 else { return nil }
            return publication
        }
    }

    @Test("the site, zones, agents, known tags and their device triggers are announced retained; none when it is off")
    func announcements() throws {
        let map = try PipelineHarness().map
        let topics = Topics(site: map.site.uuid)
        let on = HomeAssistantDiscovery(map: map, share: nil, topics: topics, isEnabled: true)
        let configs = published(on.announcements)
        // The locator; count, occupied and events per zone; status, last batch and readings per agent; zone, tracker,
        // events, battery voltage and battery level per named tag, and its entered/left trigger per zone.
        #expect(
            configs.count
                == 1 + 3 * map.zones.count + 3 * map.agents.count + map.knownTags.count * (5 + 2 * map.zones.count))
        #expect(configs.allSatisfy { $0.retain && $0.qos == .atLeastOnce && !$0.payload.isEmpty })
        let off = HomeAssistantDiscovery(map: map, share: nil, topics: topics, isEnabled: false)
        #expect(off.announcements.isEmpty)
    }

    @Test("an earlier run's config the map no longer has is removed; one it has, or an empty one, is left")
    func leftovers() throws {
        let map = try PipelineHarness().map
        let topics = Topics(site: map.site.uuid)
        let discovery = HomeAssistantDiscovery(map: map, share: nil, topics: topics, isEnabled: true)
        let ours = try #require(published(discovery.announcements).last?.topic)
        guard case .discoveryConfig(let gone) = topics.parse("homeassistant/sensor/\(topics.discoveryNode)/gone/config")
        else {
            Issue.record("not a discovery topic")
            return
        }
        #expect(discovery.retainedConfig(ours, payload: Array("{}".utf8)).isEmpty)
        #expect(discovery.retainedConfig(gone, payload: []).isEmpty)
        let removal = published(discovery.retainedConfig(gone, payload: Array("{}".utf8)))
        #expect(removal == [Publication(topic: gone, payload: "", qos: .atLeastOnce, retain: true)])
    }

    @Test("a tag tracked but not in the map is said once, at info level, for the first 20 such tags")
    func unmappedTags() throws {
        let map = try PipelineHarness().map
        var discovery = HomeAssistantDiscovery(
            map: map, share: nil, topics: Topics(site: map.site.uuid), isEnabled: true)
        var actions: [ServiceAction<LocatorEffect>] = []
        for minor in 1...30 {
            let tag = try #require(TagIdentity("ibeacon-\(site)-200-\(minor)"))
            discovery.noteTracked(tag, actions: &actions)
            discovery.noteTracked(tag, actions: &actions)
        }
        discovery.noteTracked(try alice(), actions: &actions)
        #expect(actions.count == HomeAssistantDiscovery.unmappedLogLimit)
        #expect(
            actions.allSatisfy { if case .log(.info, let line) = $0 { line.contains("not in the map") } else { false } }
        )
    }
}
