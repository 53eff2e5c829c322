/// Reassembles L2CAP basic frames (Bluetooth Core Vol 3 Part A §3.1) from ACL packets, one frame at a time per
/// connection.
///
/// A frame is a 4-byte header (payload length, channel id) and the payload; the controller may cut it into a start
/// fragment and continuations. Nothing here trusts a length: a frame longer than `maximumPayloadLength` is refused
/// before anything is kept, a continuation with no frame open, a start while a frame is still open, and a fragment
/// that runs past its frame's length each drop what they touch, and each is counted by reason.
public struct L2CAPReassembler: Sendable, Hashable {
    /// The longest payload accepted: an ATT PDU is at most 517 bytes (an MTU of 517), so a little more is plenty.
    public let maximumPayloadLength: Int

    private var open: [UInt16: [UInt8]] = [:]

    public init(maximumPayloadLength: Int = 1024) {
        self.maximumPayloadLength = maximumPayloadLength
    }

    /// A whole frame: the channel and the payload.
    public struct Frame: Sendable, Hashable {
        public var channel: UInt16
        public var payload: [UInt8]
    }

    /// Takes one fragment of `handle`'s traffic; returns the frame it completes, if any.
    public mutating func ingest(
        handle: UInt16, boundary: UInt8, data: ArraySlice<UInt8>, counters: inout LinkCounters
    ) -> Frame? {
        switch boundary {
        case 0b00, 0b10:  // a start (controller to host uses 0b10; 0b00 is accepted from odd controllers)
            if open.removeValue(forKey: handle) != nil { counters.interruptedFrames += 1 }
            return start(handle: handle, data: data, counters: &counters)
        case 0b01:
            guard var bytes = open.removeValue(forKey: handle) else {
                counters.orphanContinuations += 1
                return nil
            }
            bytes += data
            return complete(handle: handle, bytes: bytes, counters: &counters)
        default:
            counters.malformedACL += 1
            return nil
        }
    }

    /// Forgets a link's open frame (it disconnected).
    public mutating func disconnected(_ handle: UInt16) { open[handle] = nil }

    private mutating func start(handle: UInt16, data: ArraySlice<UInt8>, counters: inout LinkCounters) -> Frame? {
        // A start shorter than the length field cannot say how long its frame is; a controller does not do this.
        guard data.count >= 2 else {
            counters.malformedACL += 1
            return nil
        }
        guard Int(Bytes.uint16(data, data.startIndex)) <= maximumPayloadLength else {
            counters.oversizedFrames += 1
            return nil
        }
        return complete(handle: handle, bytes: Array(data), counters: &counters)
    }

    private mutating func complete(handle: UInt16, bytes: [UInt8], counters: inout LinkCounters) -> Frame? {
        let length = Int(Bytes.uint16(bytes[...], 0))
        if bytes.count > 4 + length {
            counters.overlongFragments += 1
            return nil
        }
        guard bytes.count == 4 + length else {
            open[handle] = bytes
            return nil
        }
        return Frame(channel: Bytes.uint16(bytes[...], 2), payload: Array(bytes[4...]))
    }
}

/// What the link layer dropped, by reason. Bad input is normal input: each is counted, none is fatal.
public struct LinkCounters: Sendable, Hashable, CustomStringConvertible {
    /// ACL packets whose header or length did not add up, or with a boundary flag LE does not use.
    public var malformedACL = 0
    /// Continuations with no frame open.
    public var orphanContinuations = 0
    /// Frames abandoned because a new start came before they were whole.
    public var interruptedFrames = 0
    /// Frames longer than the reassembler accepts.
    public var oversizedFrames = 0
    /// Fragments that ran past their frame's length.
    public var overlongFragments = 0
    /// ACL packets for a connection the host does not know.
    public var unknownHandles = 0
    /// Frames on a channel the host does not serve (not ATT or signalling).
    public var unknownChannels = 0
    /// Signalling commands that were too short or whose length did not match.
    public var malformedSignaling = 0
    /// Link events (connection, disconnection, completed packets) that did not add up.
    public var malformedEvents = 0

    public init() {}

    /// All drops together.
    public var total: Int {
        malformedACL + orphanContinuations + interruptedFrames + oversizedFrames + overlongFragments + unknownHandles
            + unknownChannels + malformedSignaling + malformedEvents
    }

    /// Adds another link's counts to these (an agent adds up its GATT jobs' links).
    public mutating func add(_ other: LinkCounters) {
        malformedACL &+= other.malformedACL
        orphanContinuations &+= other.orphanContinuations
        interruptedFrames &+= other.interruptedFrames
        oversizedFrames &+= other.oversizedFrames
        overlongFragments &+= other.overlongFragments
        unknownHandles &+= other.unknownHandles
        unknownChannels &+= other.unknownChannels
        malformedSignaling &+= other.malformedSignaling
        malformedEvents &+= other.malformedEvents
    }

    /// The reasons with a non-zero count, by name (`malformed-acl`, `unknown-channel`, ...), in declaration order.
    public var nonZero: [(reason: String, count: Int)] {
        let named = [
            ("malformed-acl", malformedACL), ("orphan-continuation", orphanContinuations),
            ("interrupted-frame", interruptedFrames), ("oversized-frame", oversizedFrames),
            ("overlong-fragment", overlongFragments), ("unknown-handle", unknownHandles),
            ("unknown-channel", unknownChannels), ("malformed-signaling", malformedSignaling),
            ("malformed-event", malformedEvents),
        ]
        return named.filter { $0.1 > 0 }.map { (reason: $0.0, count: $0.1) }
    }

    public var description: String {
        let nonzero = nonZero.map { "\($0.reason)=\($0.count)" }
        return nonzero.isEmpty ? "none" : nonzero.joined(separator: " ")
    }
}
