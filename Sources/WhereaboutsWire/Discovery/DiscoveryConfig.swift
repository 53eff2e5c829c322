public import WhereaboutsCore
public import WhereaboutsJSON

/// One retained Home Assistant MQTT discovery config, with the topic it is published on.
///
/// Ids are built only from whitelisted parts: the fixed word `whereabouts`, the site UUID's 32 hex digits,
/// floor and zone numbers, and canonical tag identities (`[a-z0-9-]`). Names from the map appear only as
/// JSON string values, never in a topic or an id. Every entity's availability follows the locator's status
/// topic, whose `offline` is the locator's last will. Republish all configs when Home Assistant sends
/// `online` on ``Topics/homeAssistantStatus``.
public struct DiscoveryConfig: Sendable, Equatable {
    /// The entity kind.
    public let component: DiscoveryComponent
    /// The discovery topic's node id: `whereabouts_<site hex>`.
    public let node: DiscoveryID
    /// The discovery topic's object id.
    public let object: DiscoveryID
    /// The entity's `unique_id`: node and object joined by `_`.
    public let uniqueID: DiscoveryID
    /// The config document.
    public let json: JSONValue

    /// `homeassistant/<component>/<node>/<object>/config`.
    public var topic: Topic { Topics.discovery(component: component, node: node, object: object) }

    /// The retained payload: compact, deterministic JSON.
    public var payload: String { JSONWriter().string(json) }

    private init(
        component: DiscoveryComponent, topics: Topics, object: String,
        body: (_ uniqueID: DiscoveryID) -> [(key: String, value: JSONValue)]
    ) {
        let node = Self.nodeID(site: topics.site)
        self.component = component
        self.node = node
        self.object = DiscoveryID(assembled: object)
        uniqueID = DiscoveryID(assembled: node.rawValue + "_" + object)
        let availability: [(key: String, value: JSONValue)] = [
            ("availability_topic", .string(topics.locatorStatus.name)),
            ("payload_available", .string(Availability.online.payload)),
            ("payload_not_available", .string(Availability.offline.payload)),
        ]
        json = .object(JSONObject(body(uniqueID) + availability))
    }

    /// `whereabouts_<32 hex digits of the site UUID>`.
    public static func nodeID(site: BeaconUUID) -> DiscoveryID {
        DiscoveryID(assembled: "whereabouts_" + site.description.filter { $0 != "-" })
    }

    // MARK: - Zones

    /// A `sensor` with the number of tags in a zone, read from the zone's occupancy topic.
    ///
    /// - Parameters:
    ///   - topics: The site's topics.
    ///   - floor: The zone's floor (major).
    ///   - zone: The zone (minor).
    ///   - zoneName: The zone's name for people.
    ///   - floorName: The floor's name for people; defaults to "Floor <major>".
    public static func zoneCount(
        topics: Topics, floor: UInt16, zone: UInt16, zoneName: String, floorName: String? = nil
    ) -> DiscoveryConfig {
        DiscoveryConfig(component: .sensor, topics: topics, object: "f\(floor)_z\(zone)_count") { uniqueID in
            [
                ("name", .string("\(zoneName) occupancy")), ("unique_id", .string(uniqueID.rawValue)),
                ("state_topic", .string(topics.occupancy(floor: floor, zone: zone).name)),
                ("value_template", "{{ value_json.count }}"), ("state_class", "measurement"),
                ("icon", "mdi:account-group"), ("device", floorDevice(topics: topics, floor: floor, name: floorName)),
            ]
        }
    }

    /// A `binary_sensor` (device class `occupancy`) that is on while a zone has at least one tag.
    public static func zoneOccupied(
        topics: Topics, floor: UInt16, zone: UInt16, zoneName: String, floorName: String? = nil
    ) -> DiscoveryConfig {
        DiscoveryConfig(component: .binarySensor, topics: topics, object: "f\(floor)_z\(zone)_occupied") {
            uniqueID in
            [
                ("name", .string("\(zoneName) occupied")), ("unique_id", .string(uniqueID.rawValue)),
                ("state_topic", .string(topics.occupancy(floor: floor, zone: zone).name)),
                ("value_template", "{{ 'ON' if value_json.count > 0 else 'OFF' }}"), ("device_class", "occupancy"),
                ("payload_on", "ON"), ("payload_off", "OFF"),
                ("device", floorDevice(topics: topics, floor: floor, name: floorName)),
            ]
        }
    }

    // MARK: - Tags

    /// A `sensor` showing the name of the zone a tag is in (`away` outside every zone), with the position
    /// payload as its attributes.
    public static func tagZone(topics: Topics, tag: TagIdentity, tagName: String?) -> DiscoveryConfig {
        let label = tagName ?? tag.description
        let position = topics.position(tag: tag).name
        return DiscoveryConfig(component: .sensor, topics: topics, object: "\(tag)_zone") { uniqueID in
            [
                ("name", .string("\(label) zone")), ("unique_id", .string(uniqueID.rawValue)),
                ("state_topic", .string(position)),
                ("value_template", "{{ value_json.zone_name if value_json.zone_name else 'away' }}"),
                ("json_attributes_topic", .string(position)), ("icon", "mdi:map-marker"),
                (
                    "device",
                    .object(
                        JSONObject([
                            ("identifiers", .array([.string("\(nodeID(site: topics.site))_\(tag)")])),
                            ("name", .string(label)), ("manufacturer", "Whereabouts"), ("model", "BLE tag"),
                        ]))
                ),
            ]
        }
    }

    private static func floorDevice(topics: Topics, floor: UInt16, name: String?) -> JSONValue {
        .object(
            JSONObject([
                ("identifiers", .array([.string("\(nodeID(site: topics.site))_f\(floor)")])),
                ("name", .string(name ?? "Floor \(floor)")), ("manufacturer", "Whereabouts"),
                ("model", "Zone occupancy"),
            ]))
    }
}
