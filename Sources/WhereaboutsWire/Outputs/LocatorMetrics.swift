public import WhereaboutsJSON

/// The locator's counters: the payload of `…/locator/metrics`, published every 10 s.
///
/// ```json
/// {"t":1764475210,"readings_accepted":1200,"readings_rejected":{"bad_tag":2,"time_too_old":5},
///  "tags_tracked":12,"agents_online":4,"batches_missing":3,"latency_ms":{"p50":35,"p99":180},
///  "input_lag_ms":{"p50":240,"p99":610}}
/// ```
///
/// `latency_ms` runs from a batch's arrival at the locator to the outputs it caused; `input_lag_ms` from the moment
/// its agent sent it (the agent's clock) to its arrival: the broker's queue and the locator's own inbox. A lag of
/// seconds means the locator takes fewer readings a second than arrive. Both cover the batches since the last
/// metrics, and are null without any; `input_lag_ms` is absent from payloads of versions before it (read as null).
///
/// `batches_missing` counts the agents' batches that never arrived (gaps in their seqs since the locator started),
/// what a broker that lost messages leaves behind; 0 when absent.
///
/// `outbox` (absent when the locator has none to report, and from payloads of versions before it) is what the
/// locator holds for the broker: `held` publications of `bytes` (as its budget counts them; `peak_bytes` the most
/// since start, `limit_bytes` the budget), and since start how many it dropped over the budget (`shed`: states of tags
/// the map does not name first), dropped as the oldest past its count (`dropped`), and replaced by a newer state of
/// their topic before they were sent (`coalesced`):
///
/// ```json
/// "outbox":{"held":120,"bytes":61440,"peak_bytes":33554000,"limit_bytes":33554432,"shed":812345,"dropped":0,
///           "coalesced":1200}
/// ```
///
/// `readings_rejected` lists the reasons with their stable names, sorted by name. Decoding ignores names this
/// version does not know (a newer locator may count more reasons). Latencies are null without samples.
public struct LocatorMetrics: JSONPayload, Equatable {
    /// When the counters were read (Unix seconds).
    public var time: Double
    /// Readings accepted since the locator started.
    public var readingsAccepted: Int
    /// Readings (or whole batches, counted once per batch) rejected since start, by reason.
    public var readingsRejected: [RejectionReason: Int]
    /// Tags with a current position.
    public var tagsTracked: Int
    /// Agents whose status is `online`.
    public var agentsOnline: Int
    /// Batches missing from the agents' runs (seq gaps), since start.
    public var batchesMissing: Int
    /// Median reading-to-output latency in milliseconds, if measured.
    public var latencyP50: Double?
    /// 99th percentile reading-to-output latency in milliseconds, if measured.
    public var latencyP99: Double?
    /// Median time from an agent sending a batch to the locator taking it, milliseconds, if measured.
    public var inputLagP50: Double?
    /// 99th percentile of the same, milliseconds, if measured.
    public var inputLagP99: Double?
    /// The outbox's state and counts, if reported.
    public var outbox: Outbox?

    /// What the locator holds for the broker, and what it dropped or replaced unsent (`outbox`).
    public struct Outbox: Sendable, Hashable {
        /// Publications held now.
        public var held: Int
        /// The bytes they count against the budget.
        public var bytes: Int
        /// The most bytes held at once since start.
        public var peakBytes: Int
        /// The budget in bytes; nil for none.
        public var limitBytes: Int?
        /// Publications dropped unsent over the budget since start.
        public var shed: Int
        /// Publications dropped as the oldest past the outbox's count since start.
        public var dropped: Int
        /// Retained publications replaced unsent by a newer state of their topic since start.
        public var coalesced: Int

        public init(
            held: Int, bytes: Int, peakBytes: Int, limitBytes: Int?, shed: Int, dropped: Int, coalesced: Int
        ) {
            self.held = held
            self.bytes = bytes
            self.peakBytes = peakBytes
            self.limitBytes = limitBytes
            self.shed = shed
            self.dropped = dropped
            self.coalesced = coalesced
        }

        var json: JSONValue {
            .object(
                JSONObject([
                    ("held", .number(Double(held))), ("bytes", .number(Double(bytes))),
                    ("peak_bytes", .number(Double(peakBytes))),
                    ("limit_bytes", .optionalInteger(limitBytes)),
                    ("shed", .number(Double(shed))), ("dropped", .number(Double(dropped))),
                    ("coalesced", .number(Double(coalesced))),
                ]))
        }

        init(_ reader: FieldReader) throws(FieldProblem) {
            let count = { (key: String) throws(FieldProblem) -> Int in try reader.integer(key, in: 0...Int.max) }
            self.init(
                held: try count("held"), bytes: try count("bytes"), peakBytes: try count("peak_bytes"),
                limitBytes: try reader.optionalInteger("limit_bytes", in: 0...Int.max), shed: try count("shed"),
                dropped: try count("dropped"), coalesced: try count("coalesced"))
        }
    }

    /// Makes a metrics payload.
    public init(
        time: Double, readingsAccepted: Int, readingsRejected: [RejectionReason: Int], tagsTracked: Int,
        agentsOnline: Int, batchesMissing: Int = 0, latencyP50: Double?, latencyP99: Double?,
        inputLagP50: Double? = nil, inputLagP99: Double? = nil, outbox: Outbox? = nil
    ) {
        self.outbox = outbox
        self.inputLagP50 = inputLagP50
        self.inputLagP99 = inputLagP99
        self.batchesMissing = batchesMissing
        self.time = time
        self.readingsAccepted = readingsAccepted
        self.readingsRejected = readingsRejected
        self.tagsTracked = tagsTracked
        self.agentsOnline = agentsOnline
        self.latencyP50 = latencyP50
        self.latencyP99 = latencyP99
    }

    public var json: JSONValue {
        let rejected = readingsRejected.sorted { $0.key < $1.key }.map {
            (key: $0.key.rawValue, value: JSONValue.number(Double($0.value)))
        }
        var members: [(key: String, value: JSONValue)] = [
            ("t", .number(time)), ("readings_accepted", .number(Double(readingsAccepted))),
            ("readings_rejected", .object(JSONObject(rejected))), ("tags_tracked", .number(Double(tagsTracked))),
            ("agents_online", .number(Double(agentsOnline))),
            ("batches_missing", .number(Double(batchesMissing))),
            (
                "latency_ms",
                .object(JSONObject([("p50", .optionalNumber(latencyP50)), ("p99", .optionalNumber(latencyP99))]))
            ),
            (
                "input_lag_ms",
                .object(
                    JSONObject([("p50", .optionalNumber(inputLagP50)), ("p99", .optionalNumber(inputLagP99))]))
            ),
        ]
        if let outbox { members.append(("outbox", outbox.json)) }
        return .object(JSONObject(members))
    }

    public init(json: JSONValue) throws(PayloadError) {
        let reader = try FieldReader(json: json)
        self = try decodingMembers { () throws(FieldProblem) -> LocatorMetrics in
            var rejected: [RejectionReason: Int] = [:]
            let counts = try reader.nested("readings_rejected")
            for key in counts.object.keys {
                guard let reason = RejectionReason(rawValue: key) else { continue }
                rejected[reason] = try counts.integer(key, in: 0...Int.max)
            }
            let latency = try reader.nested("latency_ms")
            let lag = reader.optionalValue("input_lag_ms") == nil ? nil : try reader.nested("input_lag_ms")
            let outbox = reader.optionalValue("outbox") == nil ? nil : try Outbox(reader.nested("outbox"))
            return LocatorMetrics(
                time: try reader.number("t"),
                readingsAccepted: try reader.integer("readings_accepted", in: 0...Int.max),
                readingsRejected: rejected, tagsTracked: try reader.integer("tags_tracked", in: 0...Int.max),
                agentsOnline: try reader.integer("agents_online", in: 0...Int.max),
                batchesMissing: try reader.optionalInteger("batches_missing", in: 0...Int.max) ?? 0,
                latencyP50: try latency.optionalNumber("p50"), latencyP99: try latency.optionalNumber("p99"),
                inputLagP50: try lag?.optionalNumber("p50"), inputLagP99: try lag?.optionalNumber("p99"), outbox: outbox
            )
        }
    }
}
