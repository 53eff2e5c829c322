public import WhereaboutsCore
public import WhereaboutsJSON

/// One retained Home Assistant MQTT discovery config, with the topic it is published on.
///
/// Ids are built only from whitelisted parts: the fixed word `whereabouts`, the site UUID's 32 hex digits,
/// floor and zone numbers, and canonical tag identities (`[a-z0-9-]`). Names from the map appear only as
/// JSON string values, never in a topic or an id. Every entity but the locator's own connectivity sensor is
/// available while the locator's status topic says `online` (its last will says `offline`). Republish all configs
/// when Home Assistant sends `online` on ``Topics/homeAssistantStatus``.
///
/// What Home Assistant shows (MQTT entity names are the device's name followed by the entity's):
/// - a device for the site (the map's site name) with a `Locator` connectivity sensor;
/// - a device per zone, named after the zone and suggested to the area of that name, with `Count` (tags, a
///   sensor whose attributes list `who` is in the zone) and `Occupied` (a binary sensor);
/// - a device per tag the map names, with `Zone` (a sensor: the zone's name, `outside`, `lost`) and a device
///   tracker (`home`, `not_home`; the room, floor and position as attributes) that a `person` can follow, and
///   its `Battery` (voltage, Eddystone-TLM) and `Battery level` (percent, a GATT job's) diagnostic sensors;
/// - enter/exit `event` entities per zone and per tag, and device triggers per tag and zone (the `+Events` file);
/// - a device per agent of the map with its connectivity (the `+Agents` file).
///
/// Every template gives `None` (Home Assistant's `unknown`) unless the payload's `state` is `known`, and never reads
/// `value_json` without checking it is defined, so an empty or foreign payload never raises a template error.
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

    /// The `origin` block: who published the config (Home Assistant logs it with discovery problems).
    public static let origin: JSONValue = .object(JSONObject([("name", "Whereabouts")]))

    /// The unit of the zone counts.
    public static let countUnit = "tags"

    /// A config of `component` under the site's node; `body` gives its members from its `unique_id`, and the
    /// availability (unless `followsLocator` is false) and `origin` members follow.
    init(
        component: DiscoveryComponent, topics: Topics, object: String, followsLocator: Bool = true,
        availability: Topic? = nil, body: (_ uniqueID: DiscoveryID) -> [(key: String, value: JSONValue)]
    ) {
        let node = topics.discoveryNode
        self.component = component
        self.node = node
        self.object = DiscoveryID(assembled: object)
        uniqueID = DiscoveryID(assembled: node.rawValue + "_" + object)
        var members = body(uniqueID)
        if followsLocator {
            members += [
                ("availability_topic", .string((availability ?? topics.locatorStatus).name)),
                ("payload_available", .string(Availability.online.payload)),
                ("payload_not_available", .string(Availability.offline.payload)),
            ]
        }
        members.append(("origin", Self.origin))
        json = .object(JSONObject(members))
    }

    /// `whereabouts_<32 hex digits of the site UUID>`.
    public static func nodeID(site: BeaconUUID) -> DiscoveryID {
        Topics(site: site).discoveryNode
    }

    // MARK: - Templates

    /// `value_json`, guarded: an empty or non-JSON payload leaves it undefined, and reading it then is an error.
    static let knownGuard = "value_json is defined and value_json.state == 'known'"

    /// The count while the zone's state is `known`, otherwise `None`.
    public static let countTemplate = "{{ value_json.count if \(knownGuard) else None }}"

    /// `ON`/`OFF` while the zone's state is `known`, otherwise `None`.
    public static let occupiedTemplate =
        "{{ ('ON' if value_json.count > 0 else 'OFF') if \(knownGuard) else None }}"

    /// The attributes of a zone's count: `who` (names, or tag ids where the map names none) and `tags` (ids).
    public static let whoTemplate =
        "{% if value_json is defined and value_json.tags is defined %}{% set ns = namespace(who=[]) %}"
        + "{% for t in value_json.tags %}{% set ns.who = ns.who + [t.name if t.name else t.id] %}{% endfor %}"
        + "{{ {'who': ns.who, 'tags': value_json.tags | map(attribute='id') | list} | tojson }}"
        + "{% else %}{}{% endif %}"

    /// The zone's name, `outside` (heard, in no zone), `lost`, or `None` when it cannot be known.
    public static let tagZoneTemplate =
        "{% if \(knownGuard) %}{{ value_json.zone_name if value_json.zone_name else 'outside' }}"
        + "{% elif value_json is defined and value_json.state == 'lost' %}lost{% else %}None{% endif %}"

    // MARK: - Site

    /// A `binary_sensor` (device class `connectivity`) on while the locator is online; the site's device.
    public static func locator(topics: Topics, siteName: String) -> DiscoveryConfig {
        DiscoveryConfig(component: .binarySensor, topics: topics, object: "locator", followsLocator: false) {
            uniqueID in
            [
                ("name", "Locator"), ("unique_id", .string(uniqueID.rawValue)),
                ("state_topic", .string(topics.locatorStatus.name)), ("device_class", "connectivity"),
                ("payload_on", .string(Availability.online.payload)),
                ("payload_off", .string(Availability.offline.payload)), ("entity_category", "diagnostic"),
                ("device", siteDevice(topics: topics, name: siteName)),
            ]
        }
    }

    // MARK: - Zones

    /// A `sensor` with the number of tags in a zone, read from the zone's occupancy topic, whose attributes say who
    /// they are.
    ///
    /// - Parameters:
    ///   - topics: The site's topics.
    ///   - floor: The zone's floor (major).
    ///   - zone: The zone (minor).
    ///   - zoneName: The zone's name for people: its device's name and suggested area.
    ///   - floorName: The floor's name for people; defaults to "Floor <major>".
    ///   - siteName: The site's name for people.
    ///   - availability: The status topic of the locator that publishes the zone, when the site is split between
    ///     locators; the site's locator status otherwise.
    public static func zoneCount(
        topics: Topics, floor: UInt16, zone: UInt16, zoneName: String, floorName: String? = nil,
        siteName: String = "Whereabouts", availability: Topic? = nil
    ) -> DiscoveryConfig {
        DiscoveryConfig(
            component: .sensor, topics: topics, object: "f\(floor)_z\(zone)_count", availability: availability
        ) { uniqueID in
            let state = topics.occupancy(floor: floor, zone: zone).name
            return [
                ("name", "Count"), ("unique_id", .string(uniqueID.rawValue)), ("state_topic", .string(state)),
                ("value_template", .string(countTemplate)), ("unit_of_measurement", .string(countUnit)),
                ("state_class", "measurement"), ("icon", "mdi:account-group"),
                ("json_attributes_topic", .string(state)), ("json_attributes_template", .string(whoTemplate)),
                (
                    "device",
                    zoneDevice(
                        topics: topics, floor: floor, zone: zone, name: zoneName, floorName: floorName,
                        siteName: siteName)
                ),
            ]
        }
    }

    /// A `binary_sensor` (device class `occupancy`) that is on while a zone has at least one tag; `availability` as
    /// for ``zoneCount(topics:floor:zone:zoneName:floorName:siteName:availability:)``.
    public static func zoneOccupied(
        topics: Topics, floor: UInt16, zone: UInt16, zoneName: String, floorName: String? = nil,
        siteName: String = "Whereabouts", availability: Topic? = nil
    ) -> DiscoveryConfig {
        DiscoveryConfig(
            component: .binarySensor, topics: topics, object: "f\(floor)_z\(zone)_occupied", availability: availability
        ) { uniqueID in
            [
                ("name", "Occupied"), ("unique_id", .string(uniqueID.rawValue)),
                ("state_topic", .string(topics.occupancy(floor: floor, zone: zone).name)),
                ("value_template", .string(occupiedTemplate)), ("device_class", "occupancy"), ("payload_on", "ON"),
                ("payload_off", "OFF"),
                (
                    "device",
                    zoneDevice(
                        topics: topics, floor: floor, zone: zone, name: zoneName, floorName: floorName,
                        siteName: siteName)
                ),
            ]
        }
    }

    // MARK: - Tags

    /// A `sensor` showing the name of the zone a tag is in (`outside` in no zone, `lost` when not heard), read from
    /// the tag's zone topic, which changes only when the zone does.
    public static func tagZone(topics: Topics, tag: TagIdentity, tagName: String?) -> DiscoveryConfig {
        let state = topics.tagZone(tag: tag).name
        return DiscoveryConfig(component: .sensor, topics: topics, object: "\(tag)_zone") { uniqueID in
            [
                // No attributes: Home Assistant writes state and attributes from one message as two rows.
                ("name", "Zone"), ("unique_id", .string(uniqueID.rawValue)), ("state_topic", .string(state)),
                ("value_template", .string(tagZoneTemplate)), ("icon", "mdi:map-marker"),
                ("device", tagDevice(topics: topics, tag: tag, name: tagName)),
            ]
        }
    }

    /// A `device_tracker` that says `home` while the tag is heard (in any zone, or in none) and `not_home` when lost,
    /// read as plain text from the tag's location topic; `unknown` while its agents are offline. A `person` can
    /// follow it, and Home Assistant counts that person in `zone.home` while it is `home`. It takes its device's name.
    ///
    /// Its source type is `bluetooth_le` and it has no coordinates: the locator knows where a tag is in the building,
    /// not on the globe, and a lost tag has no position at all. Its attributes (from the tag's zone topic, which
    /// changes only with the zone, so the recorder writes a row per zone change) are the `room` (`outside` in no
    /// zone), the `floor`, and `x`, `y`, `accuracy` (metres) and `zone_probability` as of the moment it entered the
    /// room; none while it is lost or unknown.
    public static func tagTracker(topics: Topics, tag: TagIdentity, tagName: String?) -> DiscoveryConfig {
        DiscoveryConfig(component: .deviceTracker, topics: topics, object: "\(tag)_tracker") { uniqueID in
            [
                ("name", .null), ("unique_id", .string(uniqueID.rawValue)),
                ("state_topic", .string(topics.tagLocation(tag: tag).name)),
                ("payload_home", .string(TagZone.homeLocation)),
                ("payload_not_home", .string(TagZone.lostLocation)),
                ("payload_reset", .string(TagZone.unknownLocation)), ("source_type", "bluetooth_le"),
                ("json_attributes_topic", .string(topics.tagZone(tag: tag).name)),
                ("json_attributes_template", .string(trackerAttributesTemplate)),
                ("device", tagDevice(topics: topics, tag: tag, name: tagName)),
            ]
        }
    }

    /// The tracker's attributes while its tag is heard: `room`, `floor` and the position when it entered the room;
    /// `{}` otherwise (lost or unknown), so that no old room stays shown.
    public static let trackerAttributesTemplate =
        "{% if \(knownGuard) %}{{ {'room': value_json.zone_name if value_json.zone_name else 'outside', "
        + "'floor': value_json.get('floor_name'), 'x': value_json.get('x'), 'y': value_json.get('y'), "
        + "'accuracy': value_json.get('accuracy'), 'zone_probability': value_json.get('p')} | tojson }}"
        + "{% else %}{}{% endif %}"

    /// A tag's battery voltage (`sensor.alice_battery`, device class `voltage`, in mV), from the plain-text
    /// millivolts on ``Topics/tagBattery(tag:)``; `unknown` until the tag reports one (an Eddystone-TLM frame).
    public static func tagBattery(topics: Topics, tag: TagIdentity, tagName: String?) -> DiscoveryConfig {
        DiscoveryConfig(component: .sensor, topics: topics, object: "\(tag)_battery") { uniqueID in
            [
                ("name", "Battery"), ("unique_id", .string(uniqueID.rawValue)),
                ("state_topic", .string(topics.tagBattery(tag: tag).name)), ("device_class", "voltage"),
                ("unit_of_measurement", "mV"), ("state_class", "measurement"), ("entity_category", "diagnostic"),
                ("device", tagDevice(topics: topics, tag: tag, name: tagName)),
            ]
        }
    }

    /// A tag's battery level (`sensor.alice_battery_level`, device class `battery`, in %), from the plain-text
    /// percent on ``Topics/tagBatteryLevel(tag:)``; `unknown` until a GATT job reads the tag's Battery Level
    /// (`whereabouts tag battery`, or the daily timer). Beside ``tagBattery(topics:tag:tagName:)``'s voltage, which
    /// a tag with only Eddystone-TLM keeps showing; the voltage sensor is left as it was, so that no existing
    /// entity changes.
    public static func tagBatteryLevel(topics: Topics, tag: TagIdentity, tagName: String?) -> DiscoveryConfig {
        DiscoveryConfig(component: .sensor, topics: topics, object: "\(tag)_battery_level") { uniqueID in
            [
                ("name", "Battery level"), ("unique_id", .string(uniqueID.rawValue)),
                ("state_topic", .string(topics.tagBatteryLevel(tag: tag).name)), ("device_class", "battery"),
                ("unit_of_measurement", "%"), ("state_class", "measurement"), ("entity_category", "diagnostic"),
                ("device", tagDevice(topics: topics, tag: tag, name: tagName)),
            ]
        }
    }

    // MARK: - Devices

    static func siteDevice(topics: Topics, name: String) -> JSONValue {
        .object(
            JSONObject([
                ("identifiers", .array([.string(topics.discoveryNode.rawValue)])),
                ("name", .string(name.isEmpty ? "Whereabouts" : name)), ("manufacturer", "Whereabouts"),
                ("model", "Locator"),
            ]))
    }

    static func zoneDevice(
        topics: Topics, floor: UInt16, zone: UInt16, name: String, floorName: String?, siteName: String
    ) -> JSONValue {
        let label = name.isEmpty ? "Zone \(floor)/\(zone)" : name
        return .object(
            JSONObject([
                ("identifiers", .array([.string("\(topics.discoveryNode)_f\(floor)_z\(zone)")])),
                ("name", .string(label)), ("suggested_area", .string(label)), ("manufacturer", "Whereabouts"),
                ("model", .string("Zone on \(floorName ?? "Floor \(floor)"), \(siteName)")),
                ("via_device", .string(topics.discoveryNode.rawValue)),
            ]))
    }

    static func tagDevice(topics: Topics, tag: TagIdentity, name: String?) -> JSONValue {
        .object(
            JSONObject([
                ("identifiers", .array([.string("\(topics.discoveryNode)_\(tag)")])),
                ("name", .string(name.flatMap { $0.isEmpty ? nil : $0 } ?? tag.description)),
                ("manufacturer", "Whereabouts"), ("model", "BLE tag"),
                ("via_device", .string(topics.discoveryNode.rawValue)),
            ]))
    }
}
