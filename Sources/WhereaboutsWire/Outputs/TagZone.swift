public import WhereaboutsCore
public import WhereaboutsJSON

/// Which zone a tag is in, for people and Home Assistant: the retained payload of `…/tags/<tag>/zone`.
///
/// ```json
/// {"tag":"ibeacon-…-1-7","name":"Keys","state":"known","floor":1,"floor_name":"Ground floor","zone":7,
///  "zone_name":"Kitchen"}
/// ```
///
/// Unlike the position it carries no coordinates, accuracy or time, so it is published again only when the tag
/// changes zone or floor, or its state changes: a dashboard that records every change (Home Assistant's recorder)
/// writes a row per zone change, not per reading.
///
/// - `known`: the tag is heard; `zone` is where it is, null when it is in no zone.
/// - `unknown`: the agents that would hear it are offline; `floor` and `zone` are where it was last seen.
/// - `lost`: its agents are up but none heard it within the tag timeout; `floor` and `zone` are null.
///
/// ``location`` is the same fact as plain text, the payload of `…/tags/<tag>/location`, which Home Assistant's MQTT
/// device tracker takes as it is.
public struct TagZone: JSONPayload, Equatable {
    /// Whether the zone is current.
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// Heard: the zone is current.
        case known
        /// The agents that would hear it are offline: where it is cannot be known.
        case unknown
        /// Not heard within the tag timeout while its agents are up: it has left.
        case lost
    }

    /// The tag.
    public var tag: TagIdentity
    /// Its name from the map, if any.
    public var name: String?
    /// Whether the zone is current.
    public var state: State
    /// The floor (major), if known.
    public var floor: UInt16?
    /// The floor's name, if known.
    public var floorName: String?
    /// The zone (minor), when the tag is in one.
    public var zone: UInt16?
    /// The zone's name, when the tag is in one.
    public var zoneName: String?

    /// Makes a zone summary.
    public init(
        tag: TagIdentity, name: String?, state: State, floor: UInt16?, floorName: String?, zone: UInt16?,
        zoneName: String?
    ) {
        self.tag = tag
        self.name = name
        self.state = state
        self.floor = floor
        self.floorName = floorName
        self.zone = zone
        self.zoneName = zoneName
    }

    /// The device tracker's location: the zone's name, `home` when heard in no zone, `not_home` when lost, and
    /// `None` (Home Assistant's reset payload: state `unknown`) when it cannot be known.
    public var location: String {
        switch state {
        case .unknown: return Self.unknownLocation
        case .lost: return Self.lostLocation
        case .known:
            guard zone != nil, let zoneName, !zoneName.isEmpty else { return Self.noZoneLocation }
            return zoneName
        }
    }

    /// The location of a tag heard in no zone (Home Assistant's `home`: it is at the site).
    public static let noZoneLocation = "home"
    /// The location of a lost tag (Home Assistant's `not_home`).
    public static let lostLocation = "not_home"
    /// The location when it cannot be known (Home Assistant's device tracker `payload_reset`).
    public static let unknownLocation = "None"

    public var json: JSONValue {
        .object(
            JSONObject([
                ("tag", .string(tag.description)), ("name", .optionalString(name)), ("state", .string(state.rawValue)),
                ("floor", .optionalInteger(floor)), ("floor_name", .optionalString(floorName)),
                ("zone", .optionalInteger(zone)), ("zone_name", .optionalString(zoneName)),
            ]))
    }

    public init(json: JSONValue) throws(PayloadError) {
        let reader = try FieldReader(json: json)
        self = try decodingMembers { () throws(FieldProblem) -> TagZone in
            guard let tag = TagIdentity(wire: try reader.string("tag")) else { throw .invalid("tag") }
            guard let state = State(rawValue: try reader.string("state")) else { throw .invalid("state") }
            return TagZone(
                tag: tag, name: try reader.optionalString("name"), state: state,
                floor: try reader.optionalUInt16("floor"), floorName: try reader.optionalString("floor_name"),
                zone: try reader.optionalUInt16("zone"), zoneName: try reader.optionalString("zone_name"))
        }
    }
}
