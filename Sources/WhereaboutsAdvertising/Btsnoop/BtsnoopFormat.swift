/// The link types of btsnoop files we read and write.
public enum BtsnoopDatalink: UInt32, Sendable, Hashable, CaseIterable {
    /// Un-encapsulated HCI (H1): flags say direction and command/event; no packet-type byte.
    case hciUnencapsulated = 1001
    /// HCI UART (H4): each packet starts with its packet-type byte. Android's HCI snoop log.
    case hciUART = 1002
    /// Linux monitor: flags carry the controller index and an opcode (3 = event). What `btmon -w` writes.
    case monitor = 2001
}

/// One HCI event from a btsnoop file.
public struct BtsnoopPacket: Sendable, Hashable {
    /// When it was captured, Unix seconds (microsecond resolution).
    public var time: Double
    /// The event without a packet-type byte: event code, parameter length, parameters.
    public var event: [UInt8]
    /// The controller index, for monitor files; 0 otherwise.
    public var controllerIndex: UInt16

    /// Makes a packet.
    public init(time: Double, event: [UInt8], controllerIndex: UInt16 = 0) {
        self.time = time
        self.event = event
        self.controllerIndex = controllerIndex
    }
}

/// Why a btsnoop file could not be read.
public enum BtsnoopError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file does not start with `btsnoop\0`.
    case notBtsnoop
    /// A version other than 1.
    case unsupportedVersion(UInt32)
    /// A link type other than 1001, 1002 or 2001.
    case unsupportedDatalink(UInt32)
    /// The input ended inside the 16-byte file header.
    case truncatedHeader(bytes: Int)
    /// The input ended inside the record starting at this byte offset.
    case truncatedRecord(offset: Int)
    /// The record at this offset claims more bytes than any HCI packet holds.
    case recordTooLarge(offset: Int, length: Int)
    /// The record at this offset includes more bytes than it says the packet had.
    case inconsistentLengths(offset: Int)

    public var description: String {
        switch self {
        case .notBtsnoop: "not a btsnoop file (no btsnoop magic)"
        case .unsupportedVersion(let version): "btsnoop version \(version) is not supported (only 1)"
        case .unsupportedDatalink(let link): "btsnoop link type \(link) is not supported (1001, 1002 or 2001)"
        case .truncatedHeader(let bytes): "btsnoop file ends inside its header, after \(bytes) bytes"
        case .truncatedRecord(let offset): "btsnoop file ends inside the record at byte \(offset)"
        case .recordTooLarge(let offset, let length):
            "btsnoop record at byte \(offset) claims \(length) bytes, more than any HCI packet"
        case .inconsistentLengths(let offset):
            "btsnoop record at byte \(offset) includes more bytes than its original length"
        }
    }
}

/// Constants shared by the reader and the writer.
enum Btsnoop {
    static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
    static let headerSize = 16
    static let recordHeaderSize = 24
    /// The largest record accepted; monitor records of ACL data stay well below.
    static let maximumRecordSize = 1 << 16
    /// Microseconds from 0 AD to 1970-01-01, as BlueZ (`btmon`), Android and Wireshark count them: 62,168,256,000 s.
    /// (0x00E0_3AB4_4A67_6000, the constant once here, is 0 AD to 2000-01-01 and read every time 30 years late.)
    static let unixEpochMicroseconds: Int64 = 0x00DC_DDB3_0F2F_8000
    /// The monitor opcode of an HCI event.
    static let monitorEventOpcode: UInt32 = 3
    /// The H4 packet type of an HCI event.
    static let h4EventType: UInt8 = 0x04

    /// Unix seconds from a btsnoop timestamp.
    static func unixSeconds(_ timestamp: UInt64) -> Double {
        Double(Int64(bitPattern: timestamp) &- unixEpochMicroseconds) / 1_000_000
    }

    /// A btsnoop timestamp from Unix seconds; non-finite or out-of-range times become the Unix epoch.
    static func timestamp(_ seconds: Double) -> UInt64 {
        let microseconds = (seconds * 1_000_000).rounded()
        // A year-290000 bound keeps the sum inside Int64.
        guard microseconds.isFinite, abs(microseconds) < 9e18 - Double(unixEpochMicroseconds),
            let value = Int64(exactly: microseconds)
        else { return UInt64(unixEpochMicroseconds) }
        return UInt64(bitPattern: value &+ unixEpochMicroseconds)
    }
}

/// Reads a big-endian 32-bit value at an index the caller has checked.
func bigEndian32(_ bytes: [UInt8], _ index: Int) -> UInt32 {
    UInt32(bytes[index]) << 24 | UInt32(bytes[index + 1]) << 16 | UInt32(bytes[index + 2]) << 8
        | UInt32(bytes[index + 3])
}

/// Appends a big-endian integer.
func appendBigEndian<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
    for shift in stride(from: T.bitWidth - 8, through: 0, by: -8) {
        bytes.append(UInt8(truncatingIfNeeded: value >> shift))
    }
}
