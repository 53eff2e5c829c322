public import WhereaboutsCore
public import WhereaboutsJSON

/// Where the locator put a tag, in a positions recording: `{"t","tag","x","y","floor","zone","accuracy"}`, and
/// when the locator said them `"p"` and `"zones"`, as in ``TagPosition``.
///
/// `zone` is null outside every zone.
public struct PositionRecord: JSONPayload, RecordingLine, Equatable {
    /// When (Unix seconds).
    public var time: Double
    /// The tag.
    public var tag: TagIdentity
    /// East coordinate, metres.
    public var x: Double
    /// North coordinate, metres.
    public var y: Double
    /// The floor (major).
    public var floor: UInt16
    /// The zone (minor), if any.
    public var zone: UInt16?
    /// The estimated error radius, metres.
    public var accuracy: Double
    /// The probability that the tag is in `zone` (in no zone when `zone` is nil), when the locator said.
    public var probability: Double?
    /// The zones the tag may be in, most likely first (empty when the locator did not say).
    public var zones: [ZoneShare]

    /// Makes a position record.
    public init(
        time: Double, tag: TagIdentity, x: Double, y: Double, floor: UInt16, zone: UInt16?, accuracy: Double,
        probability: Double? = nil, zones: [ZoneShare] = []
    ) {
        self.probability = probability
        self.zones = zones
        self.time = time
        self.tag = tag
        self.x = x
        self.y = y
        self.floor = floor
        self.zone = zone
        self.accuracy = accuracy
    }

    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("t", .number(time)), ("tag", .string(tag.description)), ("x", .number(x)), ("y", .number(y)),
            ("floor", .number(Double(floor))), ("zone", .optionalInteger(zone)), ("accuracy", .number(accuracy)),
        ]
        if let probability { members.append(("p", .number(probability.rounded(toDecimals: 3)))) }
        if !zones.isEmpty { members.append(("zones", .array(zones.map(\.json)))) }
        return .object(JSONObject(members))
    }

    public init(json: JSONValue) throws(PayloadError) {
        let reader = try FieldReader(json: json)
        self = try decodingMembers { () throws(FieldProblem) -> PositionRecord in
            guard let tag = TagIdentity(wire: try reader.string("tag")) else { throw .invalid("tag") }
            return PositionRecord(
                time: try reader.number("t"), tag: tag, x: try reader.number("x"), y: try reader.number("y"),
                floor: try reader.uint16("floor"), zone: try reader.optionalUInt16("zone"),
                accuracy: try reader.number("accuracy"), probability: try reader.optionalNumber("p"),
                zones: try ZoneShare.list(reader, key: "zones"))
        }
    }
}
