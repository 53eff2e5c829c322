public import WhereaboutsJSON

/// What the locator sees of one agent: the retained payload of `…/locator/agents/<agent>/activity`, published once a
/// minute for Home Assistant's agent devices.
///
/// ```json
/// {"agent":"hall-1","t":1764475260,"last_batch":1764475259.5,"readings_per_s":12.4}
/// ```
///
/// `last_batch` is when the locator last took a batch of the agent (Unix seconds; null for none since it started),
/// `readings_per_s` the readings it took from it per second over the last minute, to one decimal.
public struct AgentActivity: JSONPayload, Equatable {
    /// The agent.
    public var agent: AgentID
    /// When the activity was read (Unix seconds).
    public var time: Double
    /// When the locator last took a batch of the agent (Unix seconds), if it has.
    public var lastBatch: Double?
    /// Readings taken per second over the last period.
    public var readingsPerSecond: Double

    /// Makes an activity report.
    public init(agent: AgentID, time: Double, lastBatch: Double?, readingsPerSecond: Double) {
        self.agent = agent
        self.time = time
        self.lastBatch = lastBatch
        self.readingsPerSecond = readingsPerSecond
    }

    public var json: JSONValue {
        .object(
            JSONObject([
                ("agent", .string(agent.rawValue)), ("t", .number(time)), ("last_batch", .optionalNumber(lastBatch)),
                ("readings_per_s", .number(readingsPerSecond)),
            ]))
    }

    public init(json: JSONValue) throws(PayloadError) {
        let reader = try FieldReader(json: json)
        self = try decodingMembers { () throws(FieldProblem) -> AgentActivity in
            guard let agent = AgentID(try reader.string("agent")) else { throw .invalid("agent") }
            return AgentActivity(
                agent: agent, time: try reader.number("t"), lastBatch: try reader.optionalNumber("last_batch"),
                readingsPerSecond: try reader.number("readings_per_s"))
        }
    }
}
