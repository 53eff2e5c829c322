/// The LE signalling channel (CID 5; Bluetooth Core Vol 3 Part A §4): what the host answers.
///
/// A central accepts a peripheral's Connection Parameter Update Request when the parameters are valid (and then
/// asks its controller for them with LE Connection Update), and refuses invalid ones with result 0x0001. Every
/// other request, and a parameter update sent to a peripheral, gets a Command Reject ("command not understood"):
/// the host offers no credit-based channels. Responses and rejects are never answered, so two hosts cannot loop.
public enum SignalingChannel {
    /// The signalling channel's id on LE.
    public static let channel: UInt16 = 0x0005

    /// What to do about one signalling frame.
    public struct Answer: Sendable, Hashable {
        /// The signalling frame to send back, if any.
        public var reply: [UInt8]?
        /// The parameters to ask the controller for, when an update was accepted.
        public var update: ConnectionParameterRequest?
        /// Whether the frame was malformed (counted, and answered with a reject when it had an identifier).
        public var malformed = false
    }

    /// Codes that are responses or indications: never answered.
    static let unanswered: Set<UInt8> = [0x01, 0x07, 0x13, 0x15, 0x16, 0x18, 0x1A]

    /// Answers one signalling frame's payload, received by a host in `role`.
    public static func answer(_ payload: [UInt8], role: LinkRole) -> Answer {
        // Code, identifier, data length, data; LE carries one command per frame.
        guard payload.count >= 4 else { return Answer(malformed: true) }
        let (code, identifier) = (payload[0], payload[1])
        let length = Int(Bytes.uint16(payload[...], 2))
        if unanswered.contains(code) {
            return Answer(malformed: length != payload.count - 4)
        }
        // Identifier 0 is invalid in a request; there is nothing to answer it with.
        guard identifier != 0 else { return Answer(malformed: true) }
        guard length == payload.count - 4 else {
            return Answer(reply: commandReject(identifier: identifier), malformed: true)
        }
        guard code == 0x12, role == .central else { return Answer(reply: commandReject(identifier: identifier)) }
        guard length == 8 else { return Answer(reply: commandReject(identifier: identifier), malformed: true) }
        let request = ConnectionParameterRequest(
            minimumInterval: Bytes.uint16(payload[...], 4), maximumInterval: Bytes.uint16(payload[...], 6),
            latency: Bytes.uint16(payload[...], 8), supervisionTimeout: Bytes.uint16(payload[...], 10))
        let accepted = request.isValid
        // Connection Parameter Update Response: result 0x0000 accepted, 0x0001 rejected.
        let reply: [UInt8] = [0x13, identifier, 0x02, 0x00, accepted ? 0x00 : 0x01, 0x00]
        return Answer(reply: reply, update: accepted ? request : nil)
    }

    /// Command Reject, reason 0x0000 "command not understood".
    static func commandReject(identifier: UInt8) -> [UInt8] { [0x01, identifier, 0x02, 0x00, 0x00, 0x00] }
}

/// A Connection Parameter Update Request's values, in HCI's units (1.25 ms, events, 10 ms).
public struct ConnectionParameterRequest: Sendable, Hashable {
    public var minimumInterval: UInt16
    public var maximumInterval: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16

    public init(minimumInterval: UInt16, maximumInterval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.minimumInterval = minimumInterval
        self.maximumInterval = maximumInterval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }

    /// Whether the values are in the specification's ranges (Vol 3 Part A §4.20): interval 7.5 ms to 4 s, minimum
    /// not above maximum, latency below 500, timeout 100 ms to 32 s and longer than two of the longest latent
    /// intervals (otherwise the link would time out while the peripheral sleeps as allowed).
    public var isValid: Bool {
        guard (6...3200).contains(minimumInterval), (6...3200).contains(maximumInterval),
            minimumInterval <= maximumInterval, latency <= 499, (10...3200).contains(supervisionTimeout)
        else { return false }
        // timeout × 10 ms > (1 + latency) × maximum × 1.25 ms × 2, in units of 0.25 ms.
        return Int(supervisionTimeout) * 40 > (1 + Int(latency)) * Int(maximumInterval) * 10
    }
}
