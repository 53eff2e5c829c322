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
        let config = DiscoveryConfig.zoneCount(
            topics: topics, floor: 1, zone: 7, zoneName: "Kitchen", floorName: "Ground floor", siteName: "Office")
        #expect(config.topic.name == "homeassistant/sensor/\(node)/f1_z7_count/config")
        let prefix = "whereabouts/v1/\(WireFixtures.siteText)"
        let occupancy = "\(prefix)/floors/1/zones/7/occupancy"
        let golden =
            #"{"name":"Count","unique_id":"\#(node)_f1_z7_count","state_topic":"\#(occupancy)","#
            + #""value_template":"{{ value_json.count if value_json is defined and value_json.state == 'known' else None }}","#
            + #""unit_of_measurement":"tags","state_class":"measurement","icon":"mdi:account-group","#
            + #""json_attributes_topic":"\#(occupancy)","json_attributes_template":"\#(DiscoveryConfig.whoTemplate)","#
            + #""device":{"identifiers":["\#(node)_f1_z7"],"name":"Kitchen","suggested_area":"Kitchen","#
            + #""manufacturer":"Whereabouts","model":"Zone on Ground floor, Office","via_device":"\#(node)"},"#
            + #""availability_topic":"\#(prefix)/locator/status","payload_available":"online","#
            + #""payload_not_available":"offline","origin":{"name":"Whereabouts"}}"#
        #expect(config.payload == golden)
    }

    @Test("zone entities give None (unknown in Home Assistant) unless the occupancy's state is known")
    func unknownZoneState() throws {
        let count = try object(DiscoveryConfig.zoneCount(topics: topics, floor: 1, zone: 7, zoneName: "Kitchen"))
        let occupied = try object(
            DiscoveryConfig.zoneOccupied(topics: topics, floor: 1, zone: 7, zoneName: "Kitchen"))
        for template in [count["value_template"], occupied["value_template"]] {
            let text = try #require(template?.string)
            #expect(text.contains("value_json.state == 'known'"))
            #expect(text.hasSuffix("else None }}"))
        }
    }

    @Test("zone occupied binary sensor: occupancy class, ON/OFF, on the zone's device")
    func zoneOccupied() throws {
        let config = DiscoveryConfig.zoneOccupied(
            topics: topics, floor: 2, zone: 3, zoneName: "Lab", floorName: "Level 2", siteName: "Plant")
        #expect(config.topic.name == "homeassistant/binary_sensor/\(node)/f2_z3_occupied/config")
        let object = try object(config)
        #expect(object["device_class"] == "occupancy")
        #expect(object["name"] == "Occupied")
        #expect(object["state_topic"] == .string(topics.occupancy(floor: 2, zone: 3).name))
        #expect(object["device"]?.object?["name"] == "Lab")
        #expect(object["device"]?.object?["suggested_area"] == "Lab")
        #expect(object["device"]?.object?["model"] == "Zone on Level 2, Plant")
    }

    @Test("who is in a zone: the count's attributes come from the occupancy topic")
    func whoIsInTheZone() throws {
        let object = try object(DiscoveryConfig.zoneCount(topics: topics, floor: 1, zone: 7, zoneName: "Kitchen"))
        #expect(object["json_attributes_topic"] == .string(topics.occupancy(floor: 1, zone: 7).name))
        let template = try #require(object["json_attributes_template"]?.string)
        #expect(template.contains("'who'") && template.contains("value_json.tags"))
    }

    @Test("tag sensor reads the tag's zone topic, not its position, and says outside, lost or unknown")
    func tagZone() throws {
        let config = DiscoveryConfig.tagZone(topics: topics, tag: WireFixtures.tag, tagName: "Keys")
        #expect(config.topic.name == "homeassistant/sensor/\(node)/\(WireFixtures.tagText)_zone/config")
        let object = try object(config)
        #expect(object["state_topic"] == .string(topics.tagZone(tag: WireFixtures.tag).name))
        #expect(object["json_attributes_topic"] == nil, "attributes from the same message would be a second row")
        #expect(object["name"] == "Zone")
        #expect(object["device"]?.object?["name"] == "Keys")
        #expect(object["availability_topic"] == .string(topics.locatorStatus.name))
        let template = try #require(object["value_template"]?.string)
        #expect(template.contains("'outside'") && template.contains("lost") && template.hasSuffix("None{% endif %}"))
    }

    @Test("device tracker: home/not_home/None from the location topic, bluetooth_le, attributes from the zone topic")
    func tagTracker() throws {
        let config = DiscoveryConfig.tagTracker(topics: topics, tag: WireFixtures.tag, tagName: "Keys")
        #expect(config.topic.name == "homeassistant/device_tracker/\(node)/\(WireFixtures.tagText)_tracker/config")
        let object = try object(config)
        #expect(object["name"] == .null)
        #expect(object["state_topic"] == .string(topics.tagLocation(tag: WireFixtures.tag).name))
        #expect(object["value_template"] == nil, "Home Assistant's tracker takes the raw payload, not a template's")
        #expect(object["payload_home"] == "home" && object["payload_not_home"] == "not_home")
        #expect(object["payload_reset"] == "None")
        #expect(object["source_type"] == "bluetooth_le", "no coordinates: a gps tracker without them is skipped")
        #expect(object["json_attributes_topic"] == .string(topics.tagZone(tag: WireFixtures.tag).name))
        #expect(object["json_attributes_template"] == .string(DiscoveryConfig.trackerAttributesTemplate))
        #expect(object["latitude"] == nil && object["longitude"] == nil)
        #expect(
            object["device"]
                == (try self.object(.tagZone(topics: topics, tag: WireFixtures.tag, tagName: "Keys")))["device"])
    }

    @Test("device tracker attributes: room, floor, x, y, accuracy and zone probability, only while known")
    func trackerAttributes() {
        let template = DiscoveryConfig.trackerAttributesTemplate
        #expect(template.hasPrefix("{% if value_json is defined and value_json.state == 'known' %}"))
        for key in [
            "'room': value_json.zone_name if value_json.zone_name else 'outside'",
            "'floor': value_json.get('floor_name')", "'x': value_json.get('x')", "'y': value_json.get('y')",
            "'accuracy': value_json.get('accuracy')", "'zone_probability': value_json.get('p')",
        ] {
            #expect(template.contains(key), "\(key)")
        }
        #expect(template.hasSuffix("| tojson }}{% else %}{}{% endif %}"))
    }

    @Test("the site's device carries the site name and the locator's connectivity, with no availability of its own")
    func locator() throws {
        let object = try object(DiscoveryConfig.locator(topics: topics, siteName: "Head Office"))
        #expect(object["device"]?.object?["name"] == "Head Office")
        #expect(object["device"]?.object?["identifiers"] == [.string(node)])
        #expect(object["state_topic"] == .string(topics.locatorStatus.name))
        #expect(object["availability_topic"] == nil)
        #expect(object["device_class"] == "connectivity")
    }

    @Test("no entity name repeats its device's name; every template checks value_json is defined")
    func namesAndTemplates() throws {
        var configs: [DiscoveryConfig] = [.locator(topics: topics, siteName: "Office")]
        for name in ["Alice", "Kitchen", "Alice zone", ""] {
            configs.append(.zoneCount(topics: topics, floor: 1, zone: 2, zoneName: name))
            configs.append(.zoneOccupied(topics: topics, floor: 1, zone: 2, zoneName: name))
            configs.append(.tagZone(topics: topics, tag: WireFixtures.tag, tagName: name))
            configs.append(.tagTracker(topics: topics, tag: WireFixtures.tag, tagName: name))
        }
        for config in configs {
            let object = try object(config)
            let device = try #require(object["device"]?.object?["name"]?.string)
            #expect(!device.isEmpty)
            if let name = object["name"]?.string {
                #expect(!name.lowercased().contains(device.lowercased()), "\(name) repeats \(device)")
            }
            #expect(object["origin"]?.object?["name"] == "Whereabouts")
            for key in ["value_template", "json_attributes_template"] {
                guard let template = object[key]?.string else { continue }
                // Jinja evaluates the condition of `a if c else b` first, so a guard anywhere in the expression
                // keeps an empty payload from reaching `value_json.…` (the real check: scripts/check-home-assistant.sh).
                #expect(template.contains("value_json is defined"), "\(key): \(template)")
            }
            if object["json_attributes_topic"] != nil { #expect(object["json_attributes_template"] != nil) }
        }
    }

    func object(_ config: DiscoveryConfig) throws -> JSONObject {
        try #require(JSONParser().parse(config.payload).object)
    }

    @Test("hostile names stay inside JSON strings; ids and topic levels stay whitelisted")
    func hostileNames() throws {
        let names = ["Kitchen\"}/+#", "../../$SYS", "日本\u{0}\n", String(repeating: "x", count: 300), ""]
        let tags: [TagIdentity] = [WireFixtures.tag, WireFixtures.eddystone, .address(0xFFFF_FFFF_FFFF)]
        var configs: [DiscoveryConfig] = []
        for name in names {
            configs.append(.zoneCount(topics: topics, floor: 65535, zone: 0, zoneName: name, floorName: name))
            configs.append(.zoneOccupied(topics: topics, floor: 0, zone: 65535, zoneName: name))
            for tag in tags {
                configs.append(.tagZone(topics: topics, tag: tag, tagName: name))
                configs.append(.tagTracker(topics: topics, tag: tag, tagName: name))
            }
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
            #expect(object["device"]?.object?["name"]?.string?.isEmpty == false)
        }
        #expect(Set(configs.map(\.uniqueID)).count == configs.count / names.count)
    }
}
