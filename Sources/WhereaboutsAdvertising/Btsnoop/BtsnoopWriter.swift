/// Writes HCI events as btsnoop bytes, so tests and tools can make capture files.
public struct BtsnoopWriter: Sendable, Hashable {
    /// The link type written in the header, which decides how records are framed.
    public var datalink: BtsnoopDatalink

    /// A writer for one link type; `btmon -w` writes `.monitor`.
    public init(datalink: BtsnoopDatalink = .monitor) {
        self.datalink = datalink
    }

    /// The 16-byte file header.
    public func header() -> [UInt8] {
        var bytes = Btsnoop.magic
        appendBigEndian(UInt32(1), to: &bytes)
        appendBigEndian(datalink.rawValue, to: &bytes)
        return bytes
    }

    /// One record holding an HCI event given without its packet-type byte.
    public func record(_ packet: BtsnoopPacket) -> [UInt8] {
        var payload: [UInt8] = []
        let flags: UInt32
        switch datalink {
        case .hciUnencapsulated:
            flags = 0b11
        case .hciUART:
            payload.append(Btsnoop.h4EventType)
            flags = 0b11
        case .monitor:
            flags = UInt32(packet.controllerIndex) << 16 | Btsnoop.monitorEventOpcode
        }
        payload.append(contentsOf: packet.event)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Btsnoop.recordHeaderSize + payload.count)
        appendBigEndian(UInt32(truncatingIfNeeded: payload.count), to: &bytes)
        appendBigEndian(UInt32(truncatingIfNeeded: payload.count), to: &bytes)
        appendBigEndian(flags, to: &bytes)
        appendBigEndian(UInt32(0), to: &bytes)  // cumulative drops
        appendBigEndian(Btsnoop.timestamp(packet.time), to: &bytes)
        bytes.append(contentsOf: payload)
        return bytes
    }

    /// A whole file: the header, then one record per packet.
    public func file(_ packets: [BtsnoopPacket]) -> [UInt8] {
        var bytes = header()
        for packet in packets { bytes.append(contentsOf: record(packet)) }
        return bytes
    }
}
