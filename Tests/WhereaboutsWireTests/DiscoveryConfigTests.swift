import Testing
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsWire

@Suite("Home Assistant discovery")
struct DiscoveryConfigTests {
    let topics = WireFixtures.topics
    let node = "whereabouts_\(WireFixtures.siteHex)"

    @Test("zone count sensor: golden topic and payload")
    func zoneCountGolden() {
        let config = DiscoveryConfig.zoneCount(topics: topics, floor: 1, zone: 7, zoneName: "Kitchen")
        #expect(config.topic.name == "homeassistant/sensor/\(node)/f1_z7_count/config")
        let prefix = "whereabouts/v1/\(WireFixtures.siteText)"
        let golden =
            #"{"name":"Kitchen occupancy","unique_id":"\#(node)_f1_z7_count","#
            + #""state_topic":"\#(prefix)/floors/1/zones/7/occupancy","value_template":"{{ value_json.count }}","#
            + #""state_class":"measurement","icon":"mdi:account-group","device":{"identifiers":["\#(node)_f1"],"#
            + #""name":"Floor 1","manufacturer":"Whereabouts","model":"Zone occupancy"},"#
            + #""availability_topic":"\#(prefix)/locator/status","payload_available":"online","#
            + #""payload_not_available":"offline"}"#
        #expect(config.payload == golden)
    }

    @Test("zone occupied binary sensor: occupancy class and ON/OFF template")
    func zoneOccupied() throws {
        let config = DiscoveryConfig.zoneOccupied(
            topics: topics, floor: 2, zone: 3, zoneName: "Lab", floorName: "Level 2")
        #expect(config.topic.name == "homeassistant/binary_sensor/\(node)/f2_z3_occupied/config")
        let object = try #require(JSONParser().parse(config.payload).object)
        #expect(object["device_class"] == "occupancy")
        #expect(object["value_template"] == "{{ 'ON' if value_json.count > 0 else 'OFF' }}")
        #expect(object["state_topic"] == .string(topics.occupancy(floor: 2, zone: 3).name))
        #expect(object["device"]?.object?["name"] == "Level 2")
    }

    @Test("tag sensor reads its zone name from the tag's position topic")
    func tagZone() throws {
        let config = DiscoveryConfig.tagZone(topics: topics, tag: WireFixtures.tag, tagName: "Keys")
        #expect(config.topic.name == "homeassistant/sensor/\(node)/\(WireFixtures.tagText)_zone/config")
        let object = try #require(JSONParser().parse(config.payload).object)
        #expect(object["state_topic"] == .string(topics.position(tag: WireFixtures.tag).name))
        #expect(object["json_attributes_topic"] == object["state_topic"])
        #expect(object["name"] == "Keys zone")
        #expect(object["availability_topic"] == .string(topics.locatorStatus.name))
    }

    @Test("hostile names stay inside JSON strings; ids and topic levels stay whitelisted")
    func hostileNames() throws {
        let names = ["Kitchen\"}/+#", "../../$SYS", "日本\u{0}\n", String(repeating: "x", count: 300), ""]
        let tags: [TagIdentity] = [WireFixtures.tag, WireFixtures.eddystone, .address(0xFFFF_FFFF_FFFF)]
        var configs: [DiscoveryConfig] = []
        for name in names {
            configs.append(.zoneCount(topics: topics, floor: 65535, zone: 0, zoneName: name, floorName: name))
            configs.append(.zoneOccupied(topics: topics, floor: 0, zone: 65535, zoneName: name))
            for tag in tags { configs.append(.tagZone(topics: topics, tag: tag, tagName: name)) }
        }
        for config in configs {
            let object = try #require(JSONParser().parse(config.payload).object)
            let levels = config.topic.levels
            #expect(levels.count == 5)
            #expect(levels.first == "homeassistant" && levels.last == "config")
            #expect(levels.allSatisfy(WireFixtures.isSafeLevel))
            for id in [config.node.rawValue, config.object.rawValue, config.uniqueID.rawValue] {
                #expect(DiscoveryID(id) != nil, "id \(id) is not in [a-zA-Z0-9_-]+")
            }
            #expect(object["unique_id"] == .string(config.uniqueID.rawValue))
            for identifier in object["device"]?.object?["identifiers"]?.array ?? [] {
                #expect(DiscoveryID(identifier.string ?? "") != nil)
            }
            #expect(object["payload_available"] == "online")
        }
        #expect(Set(configs.map(\.uniqueID)).count == configs.count / names.count)
    }
}
