/// The retained plain-text status of an agent or of the locator; `offline` is also the last will.
public enum Availability: String, Sendable, Hashable, CaseIterable {
    /// Connected and working.
    case online
    /// Connected and working, but without a safeguard it should have: an agent whose outbox journal cannot be
    /// written (a full disk) publishes from memory, so a crash now would lose what the broker has not acknowledged.
    /// Readers count it as online; it is there to be seen and alerted on.
    case degraded
    /// Stopped, or gone without saying (the broker published the last will).
    case offline

    /// The payload to publish: the bare word.
    public var payload: String { rawValue }

    /// Whether the service is there and working (`online` or `degraded`).
    public var isAvailable: Bool { self != .offline }

    /// Reads a received status payload; exactly `online`, `degraded` or `offline`, anything else is nil.
    public init?(payload: some Collection<UInt8>) {
        guard payload.count <= 8, let text = String(validating: Array(payload), as: UTF8.self),
            let value = Availability(rawValue: text)
        else { return nil }
        self = value
    }
}
