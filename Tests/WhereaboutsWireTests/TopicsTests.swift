import Testing
import WhereaboutsCore
import WhereaboutsWire

@Suite("Topics")
struct TopicsTests {
    let topics = WireFixtures.topics
    let prefix = "whereabouts/v1/\(WireFixtures.siteText)"

    @Test("builds every site topic under the lower-case site prefix")
    func buildsSiteTopics() {
        let agent = WireFixtures.agent
        #expect(topics.prefix == prefix)
        #expect(topics.readings(agent: agent).name == "\(prefix)/agents/hall-1/readings")
        #expect(topics.agentStatus(agent: agent).name == "\(prefix)/agents/hall-1/status")
        #expect(topics.occupancy(floor: 1, zone: 65535).name == "\(prefix)/floors/1/zones/65535/occupancy")
        #expect(topics.position(tag: WireFixtures.tag).name == "\(prefix)/tags/\(WireFixtures.tagText)/position")
        #expect(topics.events.name == "\(prefix)/events")
        #expect(topics.locatorStatus.name == "\(prefix)/locator/status")
        #expect(topics.locatorMetrics.name == "\(prefix)/locator/metrics")
        #expect(topics.calibration.name == "\(prefix)/calibration")
        #expect(topics.allReadings.filter == "\(prefix)/agents/+/readings")
        #expect(topics.allAgentStatuses.filter == "\(prefix)/agents/+/status")
        #expect(topics.tagZone(tag: WireFixtures.tag).name == "\(prefix)/tags/\(WireFixtures.tagText)/zone")
        #expect(topics.tagLocation(tag: WireFixtures.tag).name == "\(prefix)/tags/\(WireFixtures.tagText)/location")
        #expect(topics.allTagZones.filter == "\(prefix)/tags/+/zone")
        #expect(topics.allDiscoveryConfigs.filter == "homeassistant/+/whereabouts_\(WireFixtures.siteHex)/+/config")
    }

    @Test("prints the site in lower case whatever case it was parsed from")
    func lowerCasesTheSite() throws {
        let upper = try #require(BeaconUUID(WireFixtures.siteText.uppercased()))
        #expect(Topics(site: upper).events.name == "\(prefix)/events")
    }

    @Test("builds Home Assistant discovery and birth topics")
    func buildsHomeAssistantTopics() throws {
        let node = try #require(DiscoveryID("whereabouts_abc"))
        let object = try #require(DiscoveryID("f1_z7_count"))
        #expect(
            Topics.discovery(component: .binarySensor, node: node, object: object).name
                == "homeassistant/binary_sensor/whereabouts_abc/f1_z7_count/config")
        #expect(Topics.homeAssistantStatus.name == "homeassistant/status")
    }

    @Test("parses the topics the locator subscribes to back into kind and agent")
    func parsesReceivedTopics() {
        let agent = WireFixtures.agent
        #expect(topics.parse(topics.readings(agent: agent).name) == .readings(agent))
        #expect(topics.parse(topics.agentStatus(agent: agent).name) == .agentStatus(agent))
        #expect(topics.parse("homeassistant/status") == .homeAssistantStatus)
        #expect(topics.parse(topics.tagZone(tag: WireFixtures.tag).name) == .tagZone(WireFixtures.tag))
        #expect(topics.parse(topics.position(tag: WireFixtures.tag).name) == .position(WireFixtures.tag))
        let config = DiscoveryConfig.tagTracker(topics: topics, tag: WireFixtures.tag, tagName: nil)
        #expect(topics.parse(config.topic.name) == .discoveryConfig(config.topic))
        // A locator of a pair (`--role auto`) reads the lease and the site's locator status.
        #expect(topics.parse(topics.locatorLease.name) == .locatorLease)
        #expect(topics.parse(topics.locatorStatus.name) == .locatorStatus)
    }

    @Test(
        "reads back only this site's discovery configs, with ids Home Assistant accepts",
        arguments: [
            "homeassistant/sensor/whereabouts_00000000000000000000000000000000/f1_z1_count/config",
            "homeassistant/sensor/whereabouts_e2c56db5dffb48d2b060d0f5a71096e0/f1_z1_count",
            "homeassistant/light/whereabouts_e2c56db5dffb48d2b060d0f5a71096e0/f1_z1_count/config",
            "homeassistant/sensor/whereabouts_e2c56db5dffb48d2b060d0f5a71096e0/f1+z1/config",
            "homeassistant/sensor/whereabouts_e2c56db5dffb48d2b060d0f5a71096e0//config",
            "homeassistant/sensor/whereabouts_e2c56db5dffb48d2b060d0f5a71096e0/a/b/config",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/tags/x/zone",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/tags/ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-7/location",
            // The same tag spelled otherwise than this side writes it.
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/tags/ibeacon-E2C56DB5-DFFB-48D2-B060-D0F5A71096E0-1-7/zone",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/tags/ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-01-7/position",
        ])
    func rejectsForeignConfigs(_ topic: String) {
        #expect(topics.parse(topic) == nil)
    }

    @Test(
        "rejects received topics that are not exactly ours",
        arguments: [
            "", "/", "whereabouts", "whereabouts/v1", "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agents/hall-1",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agents/hall-1/readings/",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agents/hall-1/readings/extra",
            "/whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agents/hall-1/readings",
            "whereabouts/v2/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agents/hall-1/readings",
            "whereabouts/v1/E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/agents/hall-1/readings",
            "whereabouts/v1/00000000-0000-0000-0000-000000000000/agents/hall-1/readings",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agent/hall-1/readings",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agents/hall-1/position",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agents//readings",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agents/+/readings",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agents/#/readings",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agents/../readings",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agents/a/../b/readings",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agents/$SYS/readings",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agents/h\u{0}l/readings",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agents/hall 1/readings",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agents/hällé/readings",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/agents/\(String(repeating: "a", count: 65))/readings",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/locator/metrics",
            "whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/locator/lease/extra",
            "whereabouts/v1/00000000-0000-0000-0000-000000000000/locator/lease",
            "homeassistant/status/extra", "homeassistant/Status", "$SYS/broker/uptime",
        ])
    func rejectsForeignTopics(_ topic: String) {
        #expect(topics.parse(topic) == nil)
    }
}

@Suite("Identifiers")
struct IdentifierTests {
    @Test(
        "accepts agent ids of 1 to 64 characters from [A-Za-z0-9_-]",
        arguments: ["a", "hall-1", "Kitchen_Pi_2", "0", "-", "_", String(repeating: "Z", count: 64)])
    func acceptsAgentIDs(_ text: String) throws {
        #expect(try #require(AgentID(text)).rawValue == text)
    }

    @Test(
        "refuses agent ids with anything else",
        arguments: [
            "", "a/b", "+", "#", "a+", "a#b", "$SYS", "..", "a.b", "a b", " a", "a\u{0}", "\u{0}", "é", "ｈａｌｌ",
            "hall\u{301}", "a\n", "a\t", "🙂", "\u{202E}abc", String(repeating: "a", count: 65),
            String(repeating: "a", count: 300),
        ])
    func refusesAgentIDs(_ text: String) {
        #expect(AgentID(text) == nil)
    }

    @Test(
        "refuses Home Assistant ids outside [a-zA-Z0-9_-]+",
        arguments: ["", "a/b", "a b", "a.b", "+", "#", "é", "a\u{0}", String(repeating: "a", count: 201)])
    func refusesDiscoveryIDs(_ text: String) {
        #expect(DiscoveryID(text) == nil)
    }

    @Test(
        "parses tag identities from the wire only in their canonical alphabet",
        arguments: [
            ("ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-7", true),
            ("IBEACON-e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-7", false),
            ("ibeacon-E2C56DB5-DFFB-48D2-B060-D0F5A71096E0-1-7", true),
            ("mac-001122aabbcc", true), ("eddystone-00112233445566778899-aabbccddeeff", true),
            ("ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-65536", false),
            ("ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-01-7", false),
            ("ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-7/x", false),
            ("ibeacon-" + String(repeating: "é", count: 19), false),
            ("ibeacon-" + String(repeating: "é", count: 40), false), ("ibeacon_e2c56db5", false), ("mac-", false),
            ("", false), ("mac-001122aabbc\u{0}", false),
        ])
    func parsesWireTags(_ text: String, valid: Bool) {
        #expect((TagIdentity(wire: text) != nil) == valid)
    }
}
