import Testing
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsWire

@Suite("Home Assistant discovery: events, device triggers, agents and batteries")
struct DiscoveryEventsTests {
    let topics = WireFixtures.topics
    let node = "whereabouts_\(WireFixtures.siteHex)"
    let prefix = "whereabouts/v1/\(WireFixtures.siteText)"

    func object(_ config: DiscoveryConfig) throws -> JSONObject {
        try #require(JSONParser().parse(config.payload).object)
    }

    @Test("topics of one zone's and one tag's events")
    func eventTopics() {
        #expect(topics.zoneEvents(floor: 1, zone: 7).name == "\(prefix)/floors/1/zones/7/events")
        #expect(topics.tagEvents(tag: WireFixtures.tag).name == "\(prefix)/tags/\(WireFixtures.tagText)/events")
        #expect(topics.parse(topics.zoneEvents(floor: 1, zone: 7).name) == nil, "the locator does not read them")
        #expect(topics.parse(topics.tagEvents(tag: WireFixtures.tag).name) == nil)
    }

    @Test("zone event entity: enter and exit from the zone's events topic, on the zone's device, follows the locator")
    func zoneEvents() throws {
        let config = DiscoveryConfig.zoneEvents(
            topics: topics, floor: 1, zone: 7, zoneName: "Kitchen", floorName: "Ground floor", siteName: "Office")
        #expect(config.topic.name == "homeassistant/event/\(node)/f1_z7_events/config")
        let object = try object(config)
        #expect(object["name"] == "Events")
        #expect(object["unique_id"] == .string("\(node)_f1_z7_events"))
        #expect(object["state_topic"] == .string("\(prefix)/floors/1/zones/7/events"))
        #expect(object["event_types"] == ["enter", "exit"])
        #expect(object["value_template"] == .string(DiscoveryConfig.eventTemplate))
        #expect(object["availability_topic"] == .string("\(prefix)/locator/status"))
        let zoneDevice = try self.object(
            .zoneCount(
                topics: topics, floor: 1, zone: 7, zoneName: "Kitchen", floorName: "Ground floor", siteName: "Office"))
        #expect(object["device"] == zoneDevice["device"])
    }

    @Test("tag event entity: the tag's events topic, on the tag's device")
    func tagEvents() throws {
        let config = DiscoveryConfig.tagEvents(topics: topics, tag: WireFixtures.tag, tagName: "Keys")
        #expect(config.topic.name == "homeassistant/event/\(node)/\(WireFixtures.tagText)_events/config")
        let object = try object(config)
        #expect(object["name"] == "Events")
        #expect(object["unique_id"] == .string("\(node)_\(WireFixtures.tagText)_events"))
        #expect(object["state_topic"] == .string("\(prefix)/tags/\(WireFixtures.tagText)/events"))
        #expect(object["event_types"] == ["enter", "exit"])
        #expect(object["device"]?.object?["name"] == "Keys")
    }

    @Test("the event template makes event_type from the event's way and keeps who and where as attributes")
    func eventTemplate() {
        #expect(
            DiscoveryConfig.eventTemplate
                == "{% if value_json is defined and value_json.event is defined %}{{ {'event_type': value_json.event, "
                + "'tag': value_json.tag, 'name': value_json.get('name'), 'floor': value_json.floor, "
                + "'zone': value_json.zone, 'zone_name': value_json.get('zone_name')} | tojson }}{% endif %}")
        #expect(DiscoveryConfig.eventTypes == ZoneEvent.Kind.allCases.map(\.rawValue))
    }

    @Test("device trigger: golden payload; type entered or left, subtype the zone's name, payload way floor zone")
    func trigger() throws {
        let config = DiscoveryConfig.tagZoneTrigger(
            topics: topics, tag: WireFixtures.tag, tagName: "Alice", floor: 1, zone: 7, zoneName: "Kitchen",
            kind: .enter)
        #expect(
            config.topic.name == "homeassistant/device_automation/\(node)/\(WireFixtures.tagText)_f1_z7_enter/config")
        let golden =
            #"{"automation_type":"trigger","topic":"\#(prefix)/tags/\#(WireFixtures.tagText)/events","#
            + #""type":"entered","subtype":"Kitchen","value_template":"\#(DiscoveryConfig.triggerTemplate)","#
            + #""payload":"enter 1 7","qos":1,"device":{"identifiers":["\#(node)_\#(WireFixtures.tagText)"],"#
            + #""name":"Alice","manufacturer":"Whereabouts","model":"BLE tag","via_device":"\#(node)"},"#
            + #""origin":{"name":"Whereabouts"}}"#
        #expect(config.payload == golden)
        let exit = try object(
            .tagZoneTrigger(
                topics: topics, tag: WireFixtures.tag, tagName: "Alice", floor: 2, zone: 3, zoneName: "", kind: .exit))
        #expect(exit["type"] == "left" && exit["subtype"] == "Zone 2/3" && exit["payload"] == "exit 2 3")
        #expect(exit["unique_id"] == nil && exit["availability_topic"] == nil)
    }

    @Test("what the trigger template renders for an event equals exactly one trigger's payload")
    func triggerTemplate() {
        // The template joins the event's members with spaces; the payloads are built the same way.
        #expect(
            DiscoveryConfig.triggerTemplate
                == "{% if value_json is defined and value_json.event is defined %}"
                + "{{ value_json.event }} {{ value_json.floor }} {{ value_json.zone }}{% endif %}")
        var payloads: Set<String> = []
        for kind in ZoneEvent.Kind.allCases {
            for zone: UInt16 in [7, 17, 71] {
                let config = DiscoveryConfig.tagZoneTrigger(
                    topics: topics, tag: WireFixtures.tag, tagName: nil, floor: 1, zone: zone, zoneName: "Z",
                    kind: kind)
                payloads.insert((try? object(config))?["payload"]?.string ?? "")
            }
        }
        #expect(payloads.count == 6)
    }

    @Test("agent: a connectivity sensor on its own status topic, degraded counts as connected, its own device")
    func agent() throws {
        let config = DiscoveryConfig.agentStatus(
            topics: topics, agent: WireFixtures.agent, floorName: "Ground floor", siteName: "Office")
        #expect(config.topic.name == "homeassistant/binary_sensor/\(node)/agent_hall-1_status/config")
        let golden =
            #"{"name":"Status","unique_id":"\#(node)_agent_hall-1_status","#
            + #""state_topic":"\#(prefix)/agents/hall-1/status","#
            + #""value_template":"{{ 'OFF' if value == 'offline' else 'ON' }}","device_class":"connectivity","#
            + #""payload_on":"ON","payload_off":"OFF","entity_category":"diagnostic","#
            + #""device":{"identifiers":["\#(node)_agent_hall-1"],"name":"Agent hall-1","manufacturer":"Whereabouts","#
            + #""model":"Agent on Ground floor, Office","via_device":"\#(node)"},"origin":{"name":"Whereabouts"}}"#
        #expect(config.payload == golden)
    }

    @Test("battery: a voltage sensor in mV from the tag's plain-text battery topic, on the tag's device")
    func battery() {
        let config = DiscoveryConfig.tagBattery(topics: topics, tag: WireFixtures.tag, tagName: "Keys")
        #expect(config.topic.name == "homeassistant/sensor/\(node)/\(WireFixtures.tagText)_battery/config")
        #expect(topics.tagBattery(tag: WireFixtures.tag).name == "\(prefix)/tags/\(WireFixtures.tagText)/battery")
        let golden =
            #"{"name":"Battery","unique_id":"\#(node)_\#(WireFixtures.tagText)_battery","#
            + #""state_topic":"\#(prefix)/tags/\#(WireFixtures.tagText)/battery","device_class":"voltage","#
            + #""unit_of_measurement":"mV","state_class":"measurement","entity_category":"diagnostic","#
            + #""device":{"identifiers":["\#(node)_\#(WireFixtures.tagText)"],"name":"Keys","#
            + #""manufacturer":"Whereabouts","model":"BLE tag","via_device":"\#(node)"},"#
            + #""availability_topic":"\#(prefix)/locator/status","payload_available":"online","#
            + #""payload_not_available":"offline","origin":{"name":"Whereabouts"}}"#
        #expect(config.payload == golden)
    }

    @Test("battery level: a battery sensor in % from the tag's plain-text battery_level topic, on the tag's device")
    func batteryLevel() {
        let config = DiscoveryConfig.tagBatteryLevel(topics: topics, tag: WireFixtures.tag, tagName: "Keys")
        #expect(config.topic.name == "homeassistant/sensor/\(node)/\(WireFixtures.tagText)_battery_level/config")
        #expect(
            topics.tagBatteryLevel(tag: WireFixtures.tag).name
                == "\(prefix)/tags/\(WireFixtures.tagText)/battery_level")
        let golden =
            #"{"name":"Battery level","unique_id":"\#(node)_\#(WireFixtures.tagText)_battery_level","#
            + #""state_topic":"\#(prefix)/tags/\#(WireFixtures.tagText)/battery_level","device_class":"battery","#
            + #""unit_of_measurement":"%","state_class":"measurement","entity_category":"diagnostic","#
            + #""device":{"identifiers":["\#(node)_\#(WireFixtures.tagText)"],"name":"Keys","#
            + #""manufacturer":"Whereabouts","model":"BLE tag","via_device":"\#(node)"},"#
            + #""availability_topic":"\#(prefix)/locator/status","payload_available":"online","#
            + #""payload_not_available":"offline","origin":{"name":"Whereabouts"}}"#
        #expect(config.payload == golden)
        // The same device as the voltage sensor's, so Home Assistant shows both on the tag.
        let voltage = DiscoveryConfig.tagBattery(topics: topics, tag: WireFixtures.tag, tagName: "Keys")
        #expect(config.json.object?["device"] == voltage.json.object?["device"])
    }

    @Test("agent activity sensors: last batch as a timestamp and readings a second, on the agent's device")
    func agentActivity() throws {
        let last = try object(.agentLastBatch(topics: topics, agent: WireFixtures.agent, floorName: nil))
        let rate = try object(.agentReadings(topics: topics, agent: WireFixtures.agent, floorName: nil))
        let status = try object(.agentStatus(topics: topics, agent: WireFixtures.agent, floorName: nil))
        for object in [last, rate] {
            #expect(object["state_topic"] == .string("\(prefix)/locator/agents/hall-1/activity"))
            #expect(object["device"] == status["device"])
            #expect(object["entity_category"] == "diagnostic")
            #expect(object["availability_topic"] == .string("\(prefix)/locator/status"), "the locator publishes it")
        }
        #expect(last["name"] == "Last batch" && last["unique_id"] == .string("\(node)_agent_hall-1_last_batch"))
        #expect(last["device_class"] == "timestamp")
        #expect(
            last["value_template"]?.string
                == "{{ (value_json.last_batch | float) | timestamp_custom('%Y-%m-%dT%H:%M:%S+00:00', false) "
                + "if value_json is defined and value_json.last_batch is number else None }}")
        #expect(rate["name"] == "Readings" && rate["unique_id"] == .string("\(node)_agent_hall-1_readings"))
        #expect(rate["unit_of_measurement"] == "readings/s" && rate["state_class"] == "measurement")
        #expect(
            rate["value_template"]?.string
                == "{{ value_json.readings_per_s if value_json is defined and value_json.readings_per_s is number "
                + "else None }}")
        #expect(
            AgentActivity(agent: WireFixtures.agent, time: 0, lastBatch: nil, readingsPerSecond: 0).payload.contains(
                #""last_batch":null"#), "what the template's `is number` guards against")
    }
}
