public import WhereaboutsCore
public import WhereaboutsJSON

/// A tag entering or leaving a zone: the payload of `…/events`, and a line of an events recording.
///
/// Published: `{"t","tag","name","floor","zone","zone_name","event"}`. Recorded (JSON Lines, see
/// ``recordingJSON``): the subset `{"t","tag","floor","zone","event"}`. Decoding accepts both.
public struct ZoneEvent: JSONPayload, Equatable {
    /// Which way the tag crossed the zone's boundary (CoreLocation's region enter/exit).
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The tag entered the zone.
        case enter
        /// The tag left the zone.
        case exit
    }

    /// When (Unix seconds).
    public var time: Double
    /// The tag.
    public var tag: TagIdentity
    /// The tag's name from the map, if any.
    public var name: String?
    /// The floor (major).
    public var floor: UInt16
    /// The zone (minor).
    public var zone: UInt16
    /// The zone's name, if known.
    public var zoneName: String?
    /// Enter or exit.
    public var kind: Kind

    /// Makes an event.
    public init(
        time: Double, tag: TagIdentity, name: String? = nil, floor: UInt16, zone: UInt16, zoneName: String? = nil,
        kind: Kind
    ) {
        self.time = time
        self.tag = tag
        self.name = name
        self.floor = floor
        self.zone = zone
        self.zoneName = zoneName
        self.kind = kind
    }

    /// The published form, with names.
    public var json: JSONValue {
        .object(
            JSONObject([
                ("t", .number(time)), ("tag", .string(tag.description)), ("name", .optionalString(name)),
                ("floor", .number(Double(floor))), ("zone", .number(Double(zone))),
                ("zone_name", .optionalString(zoneName)), ("event", .string(kind.rawValue)),
            ]))
    }

    /// The recording form: `t`, `tag`, `floor`, `zone`, `event`, without names.
    public var recordingJSON: JSONValue {
        .object(
            JSONObject([
                ("t", .number(time)), ("tag", .string(tag.description)), ("floor", .number(Double(floor))),
                ("zone", .number(Double(zone))), ("event", .string(kind.rawValue)),
            ]))
    }

    public init(json: JSONValue) throws(PayloadError) {
        let reader = try FieldReader(json: json)
        self = try decodingMembers { () throws(FieldProblem) -> ZoneEvent in
            guard let tag = TagIdentity(wire: try reader.string("tag")) else { throw .invalid("tag") }
            guard let kind = Kind(rawValue: try reader.string("event")) else { throw .invalid("event") }
            return ZoneEvent(
                time: try reader.number("t"), tag: tag, name: try reader.optionalString("name"),
                floor: try reader.uint16("floor"), zone: try reader.uint16("zone"),
                zoneName: try reader.optionalString("zone_name"), kind: kind)
        }
    }
}
