public import WhereaboutsCore
public import WhereaboutsJSON

/// One message from an agent to the locator: the readings of one batching window, with its sequence numbers.
///
/// ```json
/// {"v":1,"agent":"hall-1","epoch":1764475200123,"seq":42,"sent":1764475201,
///  "readings":[{"tag":"ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-7","t":1764475200.5,"rssi":-67.5,
///               "n":9,"var":4.2,"power":-59}]}
/// ```
///
/// `epoch` changes each time the agent process starts (its start time in milliseconds, say) and `seq` counts
/// batches within an epoch from 0, so that the locator can drop the duplicates QoS 1 delivers after a
/// reconnect (see ``BatchDeduplicator``). Times are Unix seconds, RSSI in dBm.
public struct ReadingBatch: Sendable, Equatable {
    /// The format version this module writes and reads.
    public static let formatVersion = 1

    /// The agent that heard the readings.
    public var agent: AgentID
    /// Identifies the agent process run; changes on every start.
    public var epoch: Int
    /// The batch number within the epoch, from 0, one more per batch.
    public var seq: Int
    /// When the agent sent the batch (Unix seconds).
    public var sent: Double
    /// The readings, in the order the agent wrote them.
    public var readings: [Reading]

    /// Makes a batch.
    public init(agent: AgentID, epoch: Int, seq: Int, sent: Double, readings: [Reading]) {
        self.agent = agent
        self.epoch = epoch
        self.seq = seq
        self.sent = sent
        self.readings = readings
    }

    /// One tag heard by the agent: a single advert, or the aggregate of a window of adverts.
    public struct Reading: Sendable, Equatable {
        /// The tag heard.
        public var tag: TagIdentity
        /// When: the advert's time or the window's end (Unix seconds).
        public var time: Double
        /// The RSSI in dBm; the mean RSSI for an aggregate.
        public var rssi: Double
        /// How many adverts the reading stands for (at least 1).
        public var count: Int
        /// The variance of the aggregated RSSI values in dB², when known.
        public var variance: Double?
        /// The measured power at 1 m the tag advertises, in dBm, when it does.
        public var power: Int?
        /// The tag's battery voltage in millivolts, when it reports it.
        public var batteryMillivolts: Int?
        /// The tag's temperature in °C, when it reports it.
        public var temperature: Double?

        /// Makes a reading.
        public init(
            tag: TagIdentity, time: Double, rssi: Double, count: Int = 1, variance: Double? = nil,
            power: Int? = nil, batteryMillivolts: Int? = nil, temperature: Double? = nil
        ) {
            self.tag = tag
            self.time = time
            self.rssi = rssi
            self.count = count
            self.variance = variance
            self.power = power
            self.batteryMillivolts = batteryMillivolts
            self.temperature = temperature
        }

        /// The reading as a JSON object: `tag`, `t`, `rssi`, then `n` (only when not 1), `var`, `power`,
        /// `battery_mv`, `temp_c` (each only when present).
        public var json: JSONValue {
            var members: [(key: String, value: JSONValue)] = [
                ("tag", .string(tag.description)), ("t", .number(time)), ("rssi", .number(rssi)),
            ]
            if count != 1 { members.append(("n", .number(Double(count)))) }
            if let variance { members.append(("var", .number(variance))) }
            if let power { members.append(("power", .number(Double(power)))) }
            if let batteryMillivolts { members.append(("battery_mv", .number(Double(batteryMillivolts)))) }
            if let temperature { members.append(("temp_c", .number(temperature))) }
            return .object(JSONObject(members))
        }
    }

    /// The batch as a JSON object, members in the fixed order `v`, `agent`, `epoch`, `seq`, `sent`, `readings`.
    public var json: JSONValue {
        .object(
            JSONObject([
                ("v", .number(Double(Self.formatVersion))), ("agent", .string(agent.rawValue)),
                ("epoch", .number(Double(epoch))), ("seq", .number(Double(seq))), ("sent", .number(sent)),
                ("readings", .array(readings.map(\.json))),
            ]))
    }

    /// The payload to publish: compact, deterministic JSON.
    public var payload: String { JSONWriter().string(json) }
}
