public import WhereaboutsCore
import WhereaboutsJSON

/// The enter/exit events as Home Assistant knows them: an `event` entity per zone and per tag (event types `enter` and
/// `exit`), and per tag a device trigger for each zone and way ("Alice: \"Kitchen\" entered"), which Home Assistant
/// offers in its automation editor under the tag's device.
///
/// Each reads the events of its one zone or tag (``Topics/zoneEvents(floor:zone:)``, ``Topics/tagEvents(tag:)``),
/// so that an event renders only the templates of the entities it concerns.
extension DiscoveryConfig {
    /// The event types of the event entities, as the events' `event` member spells them.
    public static let eventTypes = ZoneEvent.Kind.allCases.map(\.rawValue)

    /// An event entity's payload from a ``ZoneEvent``: `event_type` and the tag, its name and the zone's name as the
    /// event's attributes; nothing (Home Assistant ignores an empty result) for a payload that is not an event.
    public static let eventTemplate =
        "{% if value_json is defined and value_json.event is defined %}{{ {'event_type': value_json.event, "
        + "'tag': value_json.tag, 'name': value_json.get('name'), 'floor': value_json.floor, "
        + "'zone': value_json.zone, 'zone_name': value_json.get('zone_name')} | tojson }}{% endif %}"

    /// What a device trigger compares with its `payload`: the event's way, floor and zone (`enter 1 7`).
    public static let triggerTemplate =
        "{% if value_json is defined and value_json.event is defined %}"
        + "{{ value_json.event }} {{ value_json.floor }} {{ value_json.zone }}{% endif %}"

    /// The `event` entity of a zone's enters and exits (`event.kitchen_events`), on the zone's device.
    public static func zoneEvents(
        topics: Topics, floor: UInt16, zone: UInt16, zoneName: String, floorName: String? = nil,
        siteName: String = "Whereabouts", availability: Topic? = nil
    ) -> DiscoveryConfig {
        DiscoveryConfig(
            component: .event, topics: topics, object: "f\(floor)_z\(zone)_events", availability: availability
        ) { uniqueID in
            [
                ("name", "Events"), ("unique_id", .string(uniqueID.rawValue)),
                ("state_topic", .string(topics.zoneEvents(floor: floor, zone: zone).name)),
                ("event_types", .array(eventTypes.map { .string($0) })),
                ("value_template", .string(eventTemplate)), ("icon", "mdi:door-open"),
                (
                    "device",
                    zoneDevice(
                        topics: topics, floor: floor, zone: zone, name: zoneName, floorName: floorName,
                        siteName: siteName)
                ),
            ]
        }
    }

    /// The `event` entity of a tag's enters and exits, whichever the zone (`event.alice_events`), on its device.
    public static func tagEvents(topics: Topics, tag: TagIdentity, tagName: String?) -> DiscoveryConfig {
        DiscoveryConfig(component: .event, topics: topics, object: "\(tag)_events") { uniqueID in
            [
                ("name", "Events"), ("unique_id", .string(uniqueID.rawValue)),
                ("state_topic", .string(topics.tagEvents(tag: tag).name)),
                ("event_types", .array(eventTypes.map { .string($0) })),
                ("value_template", .string(eventTemplate)), ("icon", "mdi:map-marker-path"),
                ("device", tagDevice(topics: topics, tag: tag, name: tagName)),
            ]
        }
    }

    /// A device trigger of the tag's device that fires when the tag enters (or leaves) one zone: type `entered` (or
    /// `left`), subtype the zone's name, so Home Assistant offers "\"Kitchen\" entered" under the tag's device.
    ///
    /// A trigger has no entity, availability or `unique_id`: Home Assistant keys it by its topic's object id.
    public static func tagZoneTrigger(
        topics: Topics, tag: TagIdentity, tagName: String?, floor: UInt16, zone: UInt16, zoneName: String,
        kind: ZoneEvent.Kind
    ) -> DiscoveryConfig {
        let way = kind == .enter ? "entered" : "left"
        return DiscoveryConfig(
            component: .deviceAutomation, topics: topics, object: "\(tag)_f\(floor)_z\(zone)_\(kind.rawValue)",
            followsLocator: false
        ) { _ in
            [
                ("automation_type", "trigger"), ("topic", .string(topics.tagEvents(tag: tag).name)),
                ("type", .string(way)), ("subtype", .string(zoneName.isEmpty ? "Zone \(floor)/\(zone)" : zoneName)),
                ("value_template", .string(triggerTemplate)),
                ("payload", .string("\(kind.rawValue) \(floor) \(zone)")), ("qos", 1),
                ("device", tagDevice(topics: topics, tag: tag, name: tagName)),
            ]
        }
    }
}
