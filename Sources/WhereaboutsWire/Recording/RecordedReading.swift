public import WhereaboutsCore
public import WhereaboutsJSON

/// One reading in a readings recording: `{"t","agent","tag","rssi"}` plus `power`, and `n`, `var` for aggregates.
///
/// Members are written in that order; `power` and `var` only when present, `n` only when not 1.
public struct RecordedReading: JSONPayload, RecordingLine, Equatable {
    /// When (Unix seconds).
    public var time: Double
    /// The agent that heard it.
    public var agent: AgentID
    /// The tag heard.
    public var tag: TagIdentity
    /// RSSI in dBm (the mean for an aggregate).
    public var rssi: Double
    /// The advertised measured power at 1 m, dBm, if any.
    public var power: Int?
    /// How many adverts the reading stands for.
    public var count: Int
    /// The variance of the aggregated RSSI, dB², if known.
    public var variance: Double?

    /// Makes a recorded reading.
    public init(
        time: Double, agent: AgentID, tag: TagIdentity, rssi: Double, power: Int? = nil, count: Int = 1,
        variance: Double? = nil
    ) {
        self.time = time
        self.agent = agent
        self.tag = tag
        self.rssi = rssi
        self.power = power
        self.count = count
        self.variance = variance
    }

    /// The recording line of a batch reading, with the batch's agent.
    public init(_ reading: ReadingBatch.Reading, agent: AgentID) {
        self.init(
            time: reading.time, agent: agent, tag: reading.tag, rssi: reading.rssi, power: reading.power,
            count: reading.count, variance: reading.variance)
    }

    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("t", .number(time)), ("agent", .string(agent.rawValue)), ("tag", .string(tag.description)),
            ("rssi", .number(rssi)),
        ]
        if let power { members.append(("power", .number(Double(power)))) }
        if count != 1 { members.append(("n", .number(Double(count)))) }
        if let variance { members.append(("var", .number(variance))) }
        return .object(JSONObject(members))
    }

    public init(json: JSONValue) throws(PayloadError) {
        let reader = try FieldReader(json: json)
        self = try decodingMembers { () throws(FieldProblem) -> RecordedReading in
            guard let agent = AgentID(try reader.string("agent")) else { throw .invalid("agent") }
            guard let tag = TagIdentity(wire: try reader.string("tag")) else { throw .invalid("tag") }
            let variance = try reader.optionalNumber("var")
            if let variance, variance < 0 { throw .invalid("var") }
            return RecordedReading(
                time: try reader.number("t"), agent: agent, tag: tag, rssi: try reader.number("rssi"),
                power: try reader.optionalInteger("power", in: -127...20),
                count: try reader.optionalInteger("n", in: 1...BatchDecoder.maximumCount) ?? 1, variance: variance)
        }
    }
}
