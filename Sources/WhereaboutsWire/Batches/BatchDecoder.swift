import WhereaboutsCore
public import WhereaboutsJSON

/// Decodes and checks reading batches: the locator's front door, built for hostile input.
///
/// The order of checks is fixed and cheap first: the byte count before any parsing, then strict JSON with a
/// small depth limit, then the batch members, then each reading. A batch-level problem rejects the whole
/// batch; a reading-level problem rejects that reading only, and the rest of the batch still counts.
///
/// Forward compatibility: members this version does not know are ignored, in the batch and in readings,
/// because agents may be upgraded before the locator. Known members with the wrong type are rejected, and
/// a `v` other than 1 rejects the batch. `null` counts as absent for the optional reading members.
///
/// Pure: the time (`now`, Unix seconds at the locator) and the set of known agents are parameters.
/// Duplicates are not detected here; feed accepted batches to a ``BatchDeduplicator``.
public struct BatchDecoder: Sendable {
    /// Size limits, checked before the work they bound.
    public struct Limits: Sendable, Equatable {
        /// The largest payload accepted, in bytes; checked before parsing.
        public var maximumPayloadBytes: Int
        /// The deepest JSON nesting accepted. A batch needs 3 (batch, readings array, reading).
        public var maximumDepth: Int
        /// The most readings one batch may carry.
        public var maximumReadings: Int

        /// Limits; the defaults fit a busy agent's batch many times over.
        public init(maximumPayloadBytes: Int = 262_144, maximumDepth: Int = 8, maximumReadings: Int = 10_000) {
            self.maximumPayloadBytes = maximumPayloadBytes
            self.maximumDepth = maximumDepth
            self.maximumReadings = maximumReadings
        }
    }

    /// How far a reading's time may stray from the locator's clock.
    public struct TimeTolerance: Sendable, Equatable {
        /// How far in the future a reading may be (agent clocks run a little ahead), in seconds.
        public var futureSkew: Double
        /// How old a reading may be and still count, in seconds.
        public var maximumAge: Double

        /// Tolerances; defaults 5 s ahead and 60 s behind.
        public init(futureSkew: Double = 5, maximumAge: Double = 60) {
            self.futureSkew = futureSkew
            self.maximumAge = maximumAge
        }
    }

    /// The largest `n` accepted: a day of adverts at 10 Hz, far beyond any batching window.
    public static let maximumCount = 1_000_000
    /// The largest `var` accepted, in dB²: half the RSSI range squared, the most any values in range can spread.
    public static let maximumVariance = (147.0 / 2) * (147.0 / 2)
    /// The valid RSSI and measured-power range, in dBm.
    public static let rssiRange = -127.0...20.0
    /// The valid `battery_mv` range.
    public static let batteryRange = 0...65_535
    /// The valid `temp_c` range, in °C.
    public static let temperatureRange = -100.0...200.0
    /// The largest `epoch` or `seq`: the largest integer a JSON number carries exactly.
    public static let maximumSequence = 9_007_199_254_740_992

    /// The size limits.
    public var limits: Limits
    /// Tag identities already parsed from the bytes agents send (shared by copies of the decoder; bounded).
    let tags = TagIdentityCache()
    /// The time tolerances.
    public var tolerance: TimeTolerance

    /// A decoder with the given limits and tolerances.
    public init(limits: Limits = Limits(), tolerance: TimeTolerance = TimeTolerance()) {
        self.limits = limits
        self.tolerance = tolerance
    }

    /// Decodes a payload received on `topicAgent`'s readings topic.
    ///
    /// - Parameters:
    ///   - payload: The raw MQTT payload.
    ///   - topicAgent: The agent named by the topic (see ``Topics/parse(_:)``); the payload's `agent` must match.
    ///   - isKnownAgent: Whether the map lists an agent.
    ///   - now: The locator's receive time, Unix seconds.
    /// - Returns: A whole-batch rejection, or the batch with each reading accepted or rejected.
    public func decode(
        _ payload: some Collection<UInt8>, topicAgent: AgentID, isKnownAgent: (AgentID) -> Bool, now: Double
    ) -> BatchDecodeResult {
        guard payload.count <= limits.maximumPayloadBytes else { return .rejected(.payloadTooLarge) }
        // What agents send is read straight from the bytes; anything unusual goes through the JSON tree below.
        if limits.maximumDepth >= 3,
            let decoded = payload.withContiguousStorageIfAvailable({ buffer -> BatchDecodeResult? in
                var reader = BatchFastPath(buffer)
                return reader.decode(topicAgent: topicAgent, isKnownAgent: isKnownAgent, now: now, decoder: self)
            }) ?? nil
        {
            return decoded
        }
        return decodeThroughTree(payload, topicAgent: topicAgent, isKnownAgent: isKnownAgent, now: now)
    }

    /// The general path: strict JSON into a tree, then the members; every rejection reason comes from here. ``decode``
    /// uses it for whatever the fast path does not take; the benchmarks call it to compare.
    public func decodeThroughTree(
        _ payload: some Collection<UInt8>, topicAgent: AgentID, isKnownAgent: (AgentID) -> Bool, now: Double
    ) -> BatchDecodeResult {
        guard payload.count <= limits.maximumPayloadBytes else { return .rejected(.payloadTooLarge) }
        // A number beyond Double's range becomes an infinity, so that it costs its reading only (`non_finite`),
        // not the whole batch.
        let parser = JSONParser(
            maximumBytes: limits.maximumPayloadBytes, maximumDepth: limits.maximumDepth, keepsOverflowingNumbers: true)
        let value: JSONValue
        do {
            value = try parser.parse(payload)
        } catch {
            switch error.reason {
            case .tooLarge: return .rejected(.payloadTooLarge)
            case .tooDeep: return .rejected(.tooDeep)
            default: return .rejected(.malformedJSON)
            }
        }
        return decode(value: value, topicAgent: topicAgent, isKnownAgent: isKnownAgent, now: now)
    }

    /// Decodes a payload, with the known agents as a set.
    public func decode(
        _ payload: some Collection<UInt8>, topicAgent: AgentID, knownAgents: Set<AgentID>, now: Double
    ) -> BatchDecodeResult {
        decode(payload, topicAgent: topicAgent, isKnownAgent: { knownAgents.contains($0) }, now: now)
    }

    /// Decodes a batch that is already a JSON value (the members, types and ranges are checked; not the size).
    public func decode(
        value: JSONValue, topicAgent: AgentID, isKnownAgent: (AgentID) -> Bool, now: Double
    ) -> BatchDecodeResult {
        do throws(RejectionReason) {
            guard let object = value.object else { throw .wrongType }
            guard try Self.number(object, "v") == Double(ReadingBatch.formatVersion) else {
                throw .unknownVersion
            }
            guard let agent = AgentID(try Self.string(object, "agent")) else { throw .badAgent }
            guard agent == topicAgent else { throw .agentTopicMismatch }
            guard isKnownAgent(agent) else { throw .unknownAgent }
            let epoch = try Self.sequence(object, "epoch")
            let seq = try Self.sequence(object, "seq")
            let sent = try Self.number(object, "sent")
            // The batch's time checks, then the readings: `retimed` depends on this order.
            guard sent >= 0 else { throw .badSentTime }
            if let reason = batchTimeVerdict(sent: sent, epoch: epoch, now: now) { throw reason }
            guard case .array(let elements) = try Self.member(object, "readings") else { throw .wrongType }
            guard elements.count <= limits.maximumReadings else { throw .tooManyReadings }
            let outcomes = elements.map { element -> ReadingOutcome in
                do throws(RejectionReason) {
                    let reading = try Self.reading(element)
                    if let reason = validate(reading, now: now) { throw reason }
                    return .accepted(reading)
                } catch {
                    return .rejected(error)
                }
            }
            return .decoded(DecodedBatch(agent: agent, epoch: epoch, seq: seq, sent: sent, outcomes: outcomes))
        } catch {
            return .rejected(error)
        }
    }

    /// Checks the values of a reading (ranges, finiteness, time window); nil when it is acceptable.
    ///
    /// The decoder applies this to every decoded reading; callers holding readings built in code (a replay,
    /// the simulator) can apply it too, so that every path into the engine passes the same checks.
    public func validate(_ reading: ReadingBatch.Reading, now: Double) -> RejectionReason? {
        guard reading.time.isFinite, reading.rssi.isFinite, reading.variance?.isFinite ?? true,
            reading.temperature?.isFinite ?? true
        else { return .nonFinite }
        guard Self.rssiRange.contains(reading.rssi) else { return .rssiOutOfRange }
        guard (1...Self.maximumCount).contains(reading.count) else { return .badCount }
        if let variance = reading.variance, !(0...Self.maximumVariance).contains(variance) { return .badVariance }
        if let power = reading.power, !Self.rssiRange.contains(Double(power)) { return .badPower }
        if let battery = reading.batteryMillivolts, !Self.batteryRange.contains(battery) { return .badTelemetry }
        if let temperature = reading.temperature, !Self.temperatureRange.contains(temperature) {
            return .badTelemetry
        }
        // The time checks last: `retimed` depends on it.
        return timeVerdict(of: reading.time, now: now)
    }

    /// A reading's time checks alone, the last of ``validate(_:now:)``.
    func timeVerdict(of time: Double, now: Double) -> RejectionReason? {
        guard time <= now + tolerance.futureSkew else { return .timeInFuture }
        guard time >= now - tolerance.maximumAge else { return .timeTooOld }
        return nil
    }

    /// A batch's time checks alone, on a `sent` that is not negative.
    func batchTimeVerdict(sent: Double, epoch: Int, now: Double) -> RejectionReason? {
        guard sent <= now + tolerance.futureSkew else { return .badSentTime }
        guard Double(epoch) <= (now + tolerance.futureSkew) * 1000 else { return .epochInFuture }
        return nil
    }

    /// What a decode made at `decodedAt` would have come out as at `now`, or nil when only decoding again can tell.
    ///
    /// The locator decodes a batch off its loop and takes it a little later (``BatchDecoder`` is pure, but the clock
    /// moves, and a simulation's by up to a thousand times). The time checks come last, of the batch's checks and of
    /// each reading's, so a verdict reached before them holds at any time: only these need looking at again. A reading
    /// accepted then is checked again for its time; a batch accepted then, for its `sent` and `epoch`. A rejection by
    /// a time check, or by a batch check that comes after the time checks (the readings' type and count), says
    /// nothing of the checks after it: for those, nil.
    public func retimed(_ result: BatchDecodeResult, decodedAt: Double, now: Double) -> BatchDecodeResult? {
        guard decodedAt != now else { return result }
        switch result {
        case .rejected(let reason):
            return Self.decidedAfterTimeChecks.contains(reason) ? nil : result
        case .decoded(var batch):
            guard batchTimeVerdict(sent: batch.sent, epoch: batch.epoch, now: now) == nil else { return nil }
            for index in batch.outcomes.indices {
                switch batch.outcomes[index] {
                case .rejected(let reason) where reason == .timeInFuture || reason == .timeTooOld:
                    return nil
                case .rejected:
                    continue
                case .accepted(let reading):
                    if let reason = timeVerdict(of: reading.time, now: now) {
                        batch.outcomes[index] = .rejected(reason)
                    }
                }
            }
            return .decoded(batch)
        }
    }

    /// Whole-batch rejections that a check at or after the batch's time checks can give (`wrongType` and
    /// `missingField` also come earlier; the set errs toward decoding again).
    private static let decidedAfterTimeChecks: Set<RejectionReason> = [
        .badSentTime, .epochInFuture, .wrongType, .missingField, .tooManyReadings,
    ]

    // MARK: - Members

    /// Reads the members of one reading; types and integrality only, ranges are `validate`'s job.
    private static func reading(_ value: JSONValue) throws(RejectionReason) -> ReadingBatch.Reading {
        guard let object = value.object else { throw .wrongType }
        guard let tag = TagIdentity(wire: try string(object, "tag")) else { throw .badTag }
        let time = try number(object, "t")
        let rssi = try number(object, "rssi")
        let count = try optionalInteger(object, "n", else: .badCount) ?? 1
        let variance = try optionalNumber(object, "var")
        let power = try optionalInteger(object, "power", else: .badPower)
        let battery = try optionalInteger(object, "battery_mv", else: .badTelemetry)
        let temperature = try optionalNumber(object, "temp_c")
        return ReadingBatch.Reading(
            tag: tag, time: time, rssi: rssi, count: count, variance: variance, power: power,
            batteryMillivolts: battery, temperature: temperature)
    }

    private static func member(_ object: JSONObject, _ key: String) throws(RejectionReason) -> JSONValue {
        guard let value = object[key], value != .null else { throw .missingField }
        return value
    }

    private static func string(_ object: JSONObject, _ key: String) throws(RejectionReason) -> String {
        guard case .string(let text) = try member(object, key) else { throw .wrongType }
        return text
    }

    private static func number(_ object: JSONObject, _ key: String) throws(RejectionReason) -> Double {
        guard case .number(let number) = try member(object, key) else { throw .wrongType }
        guard number.isFinite else { throw .nonFinite }
        return number
    }

    private static func optionalNumber(_ object: JSONObject, _ key: String) throws(RejectionReason) -> Double? {
        guard let value = object[key], value != .null else { return nil }
        return try number(object, key)
    }

    /// An optional integral member; a non-integral or out-of-`Int` number is `reason`.
    private static func optionalInteger(
        _ object: JSONObject, _ key: String, else reason: RejectionReason
    ) throws(RejectionReason) -> Int? {
        guard let value = object[key], value != .null else { return nil }
        guard case .number(let number) = value else { throw .wrongType }
        guard number.isFinite else { throw .nonFinite }
        guard let integer = value.integer else { throw reason }
        return integer
    }

    private static func sequence(_ object: JSONObject, _ key: String) throws(RejectionReason) -> Int {
        let value = try member(object, key)
        guard case .number(let number) = value else { throw .wrongType }
        guard number.isFinite else { throw .nonFinite }
        guard let integer = value.integer, (0...maximumSequence).contains(integer) else { throw .badSequence }
        return integer
    }
}

/// What ``BatchDecoder`` made of a payload.
public enum BatchDecodeResult: Sendable, Equatable {
    /// The whole batch is refused, for this reason.
    case rejected(RejectionReason)
    /// The batch is sound; its readings are each accepted or rejected.
    case decoded(DecodedBatch)

    /// The decoded batch, or nil when rejected.
    public var batch: DecodedBatch? {
        if case .decoded(let batch) = self { return batch }
        return nil
    }

    /// The whole-batch rejection reason, or nil when decoded.
    public var rejection: RejectionReason? {
        if case .rejected(let reason) = self { return reason }
        return nil
    }
}

/// A batch whose members passed the checks, with the verdict on each reading.
public struct DecodedBatch: Sendable, Equatable {
    /// The sending agent (equal to the topic's).
    public var agent: AgentID
    /// The agent's process epoch.
    public var epoch: Int
    /// The batch's sequence number within the epoch.
    public var seq: Int
    /// When the agent sent it (Unix seconds, the agent's clock).
    public var sent: Double
    /// One outcome per reading, in payload order.
    public var outcomes: [ReadingOutcome]

    /// Makes a decoded batch.
    public init(agent: AgentID, epoch: Int, seq: Int, sent: Double, outcomes: [ReadingOutcome]) {
        self.agent = agent
        self.epoch = epoch
        self.seq = seq
        self.sent = sent
        self.outcomes = outcomes
    }

    /// The accepted readings, in payload order.
    public var accepted: [ReadingBatch.Reading] {
        outcomes.compactMap { if case .accepted(let reading) = $0 { reading } else { nil } }
    }

    /// The reasons of the rejected readings, in payload order.
    public var rejections: [RejectionReason] {
        outcomes.compactMap { if case .rejected(let reason) = $0 { reason } else { nil } }
    }
}

/// The verdict on one reading of a batch.
public enum ReadingOutcome: Sendable, Equatable {
    /// The reading passed every check.
    case accepted(ReadingBatch.Reading)
    /// The reading is dropped, for this reason.
    case rejected(RejectionReason)
}
