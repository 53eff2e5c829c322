public import WhereaboutsCore
public import WhereaboutsJSON

/// Which zone a tag is in, for people and Home Assistant: the retained payload of `…/tags/<tag>/zone`.
///
/// ```json
/// {"tag":"ibeacon-…-1-7","name":"Keys","state":"known","floor":1,"floor_name":"Ground floor","zone":7,
///  "zone_name":"Kitchen"}
/// ```
///
/// It is published again only when the tag changes zone or floor, or its state changes: a dashboard that records
/// every change (Home Assistant's recorder) writes a row per zone change, not per reading. A `known` summary also
/// says where in the zone the tag was at that moment: `x`, `y` (metres), `accuracy` (metres) and `p` (the
/// probability that it is in `zone`), each only when known, and not updated while it stays in the zone:
///
/// ```json
/// {"tag":"…","name":"Keys","state":"known","floor":1,"floor_name":"Ground floor","zone":7,"zone_name":"Kitchen",
///  "x":4.2,"y":7.9,"accuracy":1.5,"p":0.87}
/// ```
///
/// - `known`: the tag is heard; `zone` is where it is, null when it is in no zone.
/// - `unknown`: the agents that would hear it are offline; `floor` and `zone` are where it was last seen.
/// - `lost`: its agents are up but none heard it within the tag timeout; `floor` and `zone` are null.
///
/// ``location`` is its presence as plain text, the payload of `…/tags/<tag>/location`, which Home Assistant's MQTT
/// device tracker takes as it is: `home` while heard (in whichever zone), `not_home` when lost.
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
    /// Where the tag was when the summary was made (metres, the floor's frame), if known.
    public var x: Double?
    /// Where the tag was when the summary was made (metres), if known.
    public var y: Double?
    /// The position's accuracy then (metres), if known.
    public var accuracy: Double?
    /// The probability then that the tag is in `zone` (in no zone, when `zone` is nil), if known.
    public var probability: Double?

    /// Makes a zone summary.
    public init(
        tag: TagIdentity, name: String?, state: State, floor: UInt16?, floorName: String?, zone: UInt16?,
        zoneName: String?, x: Double? = nil, y: Double? = nil, accuracy: Double? = nil, probability: Double? = nil
    ) {
        self.x = x
        self.y = y
        self.accuracy = accuracy
        self.probability = probability
        self.tag = tag
        self.name = name
        self.state = state
        self.floor = floor
        self.floorName = floorName
        self.zone = zone
        self.zoneName = zoneName
    }

    /// The device tracker's location: `home` while heard, in a zone or not, `not_home` when lost, and `None`
    /// (Home Assistant's reset payload: state `unknown`) when it cannot be known.
    ///
    /// Never the room's name: Home Assistant counts a person in `zone.home` only while its state is exactly `home`,
    /// so a room's name made everyone in a room count as away. The room is the tag's zone sensor, and an attribute.
    public var location: String {
        switch state {
        case .unknown: return Self.unknownLocation
        case .lost: return Self.lostLocation
        case .known: return Self.homeLocation
        }
    }

    /// The location of a tag heard at the site (Home Assistant's `home`).
    public static let homeLocation = "home"
    /// The location of a lost tag (Home Assistant's `not_home`).
    public static let lostLocation = "not_home"
    /// The location when it cannot be known (Home Assistant's device tracker `payload_reset`).
    public static let unknownLocation = "None"

    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("tag", .string(tag.description)), ("name", .optionalString(name)), ("state", .string(state.rawValue)),
            ("floor", .optionalInteger(floor)), ("floor_name", .optionalString(floorName)),
            ("zone", .optionalInteger(zone)), ("zone_name", .optionalString(zoneName)),
        ]
        // Where the tag was: only when known, so that older payloads and lost or unknown summaries stay as they were.
        for (key, value) in [("x", x), ("y", y), ("accuracy", accuracy), ("p", probability)] {
            if let value { members.append((key, .number(value))) }
        }
        return .object(JSONObject(members))
    }

    public init(json: JSONValue) throws(PayloadError) {
        let reader = try FieldReader(json: json)
        self = try decodingMembers { () throws(FieldProblem) -> TagZone in
            guard let tag = TagIdentity(wire: try reader.string("tag")) else { throw .invalid("tag") }
            guard let state = State(rawValue: try reader.string("state")) else { throw .invalid("state") }
            return TagZone(
                tag: tag, name: try reader.optionalString("name"), state: state,
                floor: try reader.optionalUInt16("floor"), floorName: try reader.optionalString("floor_name"),
                zone: try reader.optionalUInt16("zone"), zoneName: try reader.optionalString("zone_name"),
                x: try reader.optionalNumber("x"), y: try reader.optionalNumber("y"),
                accuracy: try reader.optionalNumber("accuracy"), probability: try reader.optionalNumber("p"))
        }
    }
}
