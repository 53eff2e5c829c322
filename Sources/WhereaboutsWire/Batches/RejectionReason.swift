/// Why the locator refused a reading batch or one reading in it.
///
/// A closed set; each case's raw value is a stable snake_case name for metrics (`readings_rejected`) and logs.
/// Renaming one breaks dashboards: add cases, never rename them.
public enum RejectionReason: String, Error, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    // MARK: Whole batch

    /// The payload is larger than the decoder's byte limit; it was not parsed.
    case payloadTooLarge = "payload_too_large"
    /// The payload is not JSON: bad syntax, invalid UTF-8, `NaN`, duplicate keys.
    case malformedJSON = "malformed_json"
    /// Arrays and objects nest deeper than the decoder's depth limit.
    case tooDeep = "too_deep"
    /// A known member (or the document, or a reading) has the wrong JSON type.
    case wrongType = "wrong_type"
    /// A required member is absent or `null`.
    case missingField = "missing_field"
    /// `v` is not a format version this decoder understands.
    case unknownVersion = "unknown_version"
    /// `agent` is not a valid agent id.
    case badAgent = "bad_agent"
    /// The agent is not in the map.
    case unknownAgent = "unknown_agent"
    /// `agent` differs from the agent named by the topic (a spoofing attempt or a misconfigured agent).
    case agentTopicMismatch = "agent_topic_mismatch"
    /// `epoch` or `seq` is not an integer in 0...2^53.
    case badSequence = "bad_sequence"
    /// `sent` is not a plausible Unix time: negative, or later than the receive time plus the allowed clock skew.
    case badSentTime = "bad_sent_time"
    /// `epoch` is later than the receive time plus the allowed clock skew, in milliseconds: no agent process can
    /// have started in the future.
    case epochInFuture = "epoch_in_future"
    /// More readings than the decoder's limit.
    case tooManyReadings = "too_many_readings"
    /// The (agent, epoch, seq) was taken already.
    case duplicateBatch = "duplicate_batch"
    /// The batch is left over from an earlier run of the agent: its epoch is older than the agent's newest and it
    /// was sent before that run started.
    case supersededEpoch = "superseded_epoch"

    // MARK: One reading

    /// `tag` is not a canonical tag identity.
    case badTag = "bad_tag"
    /// `rssi` is outside -127...20 dBm.
    case rssiOutOfRange = "rssi_out_of_range"
    /// A number is NaN or infinite: a JSON number beyond `Double`'s range, or a value built in code.
    case nonFinite = "non_finite"
    /// `n` is not an integer ≥ 1.
    case badCount = "bad_count"
    /// `var` is negative or larger than any set of RSSI values in range can produce.
    case badVariance = "bad_variance"
    /// `power` is not an integer in -127...20 dBm.
    case badPower = "bad_power"
    /// `battery_mv` or `temp_c` is out of range.
    case badTelemetry = "bad_telemetry"
    /// `t` is later than the receive time plus the allowed clock skew.
    case timeInFuture = "time_in_future"
    /// `t` is earlier than the receive time minus the maximum age (60 s by default).
    case timeTooOld = "time_too_old"
    /// The reading passed the wire checks (so it is recorded) but is older than the map's `reading_max_age`
    /// (10 s by default): too old to count toward a position. Decided by the engine, not by ``BatchDecoder``.
    case tooOldToTrack = "too_old_to_track"
    /// The locator's engine does not track the tag: no identity constraint selects it and the map does not name
    /// it. Decided after decoding, by the engine, not by ``BatchDecoder``.
    case untrackedTag = "untracked_tag"

    // MARK: Other messages

    /// A GATT job result (`…/agents/<agent>/gatt/results`) that is not a valid ``GATTJobResult``: too long, not
    /// UTF-8, not JSON, or a member missing or out of range. The locator reads these for the battery levels they
    /// carry; a bad one is dropped and counted like a bad reading.
    case badGATTResult = "bad_gatt_result"

    /// The metric name.
    public var description: String { rawValue }

    public static func < (lhs: RejectionReason, rhs: RejectionReason) -> Bool { lhs.rawValue < rhs.rawValue }
}
