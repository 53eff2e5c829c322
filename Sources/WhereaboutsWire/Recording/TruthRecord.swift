public import WhereaboutsCore
public import WhereaboutsJSON

/// Where a tag really was, in a simulated or surveyed recording: `{"t","tag","x","y","floor"}`.
public struct TruthRecord: JSONPayload, RecordingLine, Equatable {
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

    /// Makes a truth record.
    public init(time: Double, tag: TagIdentity, x: Double, y: Double, floor: UInt16) {
        self.time = time
        self.tag = tag
        self.x = x
        self.y = y
        self.floor = floor
    }

    public var json: JSONValue {
        .object(
            JSONObject([
                ("t", .number(time)), ("tag", .string(tag.description)), ("x", .number(x)), ("y", .number(y)),
                ("floor", .number(Double(floor))),
            ]))
    }

    public init(json: JSONValue) throws(PayloadError) {
        let reader = try FieldReader(json: json)
        self = try decodingMembers { () throws(FieldProblem) -> TruthRecord in
            guard let tag = TagIdentity(wire: try reader.string("tag")) else { throw .invalid("tag") }
            return TruthRecord(
                time: try reader.number("t"), tag: tag, x: try reader.number("x"), y: try reader.number("y"),
                floor: try reader.uint16("floor"))
        }
    }
}
