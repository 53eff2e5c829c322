/// Sends L2CAP frames as ACL packets within the controller's buffers (Bluetooth Core Vol 4 Part E §4.1.1).
///
/// The controller holds `packetCount` packets of at most `packetLength` bytes for all connections together: each
/// packet sent spends a credit, and Number of Completed Packets gives them back. Frames longer than a packet are cut
/// into a start fragment and continuations. Packets that find no credit wait in order in a bounded queue; past its
/// bound they are dropped and counted (the ATT layer's timeout then reports the loss). A disconnection gives back
/// the link's credits: the controller flushes its packets without counting them.
public struct ACLWriter: Sendable, Hashable {
    /// The controller's buffers.
    public let buffers: ACLBufferSize
    /// Packets the controller can take now.
    public private(set) var credits: Int
    /// Packets dropped because the queue was full.
    public private(set) var droppedPackets = 0
    /// How many packets may wait for credits.
    public let queueLimit: Int

    private var inFlight: [UInt16: Int] = [:]
    private var queue: [Waiting] = []

    private struct Waiting: Sendable, Hashable {
        var handle: UInt16
        var packet: [UInt8]
    }

    public init(buffers: ACLBufferSize, queueLimit: Int = 64) {
        self.buffers = ACLBufferSize(
            packetLength: max(buffers.packetLength, 1), packetCount: max(buffers.packetCount, 1))
        credits = self.buffers.packetCount
        self.queueLimit = queueLimit
    }

    /// Packets waiting for credits.
    public var queued: Int { queue.count }

    /// Cuts an L2CAP frame into H4 ACL packets for `handle` and returns those that may be written now.
    public mutating func send(frame: [UInt8], on handle: UInt16) -> [[UInt8]] {
        var offset = 0
        var first = true
        repeat {
            let end = min(offset + buffers.packetLength, frame.count)
            // Host to controller: 0b00 starts a frame (non-flushable), 0b01 continues it.
            let packet = Self.packet(handle: handle, boundary: first ? 0b00 : 0b01, payload: frame[offset..<end])
            if queue.count < queueLimit {
                queue.append(Waiting(handle: handle, packet: packet))
            } else {
                droppedPackets += 1
            }
            offset = end
            first = false
        } while offset < frame.count
        return flush()
    }

    /// Takes back the credits of packets the controller sent; returns packets that may be written now.
    public mutating func completed(_ counts: [CompletedPackets]) -> [[UInt8]] {
        for entry in counts {
            // A controller that counts more than was sent (or for a link we do not know) gives no extra credits.
            let returned = min(entry.count, inFlight[entry.handle] ?? 0)
            inFlight[entry.handle, default: 0] -= returned
            credits += returned
        }
        return flush()
    }

    /// Forgets a link: its credits come back and its waiting packets are dropped; returns packets now writable.
    public mutating func disconnected(_ handle: UInt16) -> [[UInt8]] {
        credits += inFlight.removeValue(forKey: handle) ?? 0
        queue.removeAll { $0.handle == handle }
        return flush()
    }

    private mutating func flush() -> [[UInt8]] {
        var ready: [[UInt8]] = []
        while credits > 0, !queue.isEmpty {
            let next = queue.removeFirst()
            credits -= 1
            inFlight[next.handle, default: 0] += 1
            ready.append(next.packet)
        }
        return ready
    }

    /// An H4 ACL packet: type 0x02, handle with the packet-boundary flag, length, payload.
    static func packet(handle: UInt16, boundary: UInt16, payload: ArraySlice<UInt8>) -> [UInt8] {
        [0x02] + Bytes.le(handle & 0x0FFF | boundary << 12) + Bytes.le(UInt16(payload.count)) + payload
    }
}
