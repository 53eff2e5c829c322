/// The retained plain-text status of an agent or of the locator; `offline` is also the last will.
public enum Availability: String, Sendable, Hashable, CaseIterable {
    /// Connected and working.
    case online
    /// Stopped, or gone without saying (the broker published the last will).
    case offline

    /// The payload to publish: the bare word.
    public var payload: String { rawValue }

    /// Reads a received status payload; exactly `online` or `offline`, anything else is nil.
    public init?(payload: some Collection<UInt8>) {
        guard payload.count <= 7, let text = String(validating: Array(payload), as: UTF8.self),
            let value = Availability(rawValue: text)
        else { return nil }
        self = value
    }
}
