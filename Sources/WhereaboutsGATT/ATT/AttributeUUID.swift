/// An attribute type: a 16-bit Bluetooth SIG number (0x2A19, Battery Level) or a full 128-bit UUID.
///
/// Kept as the 128 bits, so that a 16-bit UUID and its long form on the Bluetooth base UUID
/// (0000xxxx-0000-1000-8000-00805F9B34FB) are equal. On the wire ATT carries it little-endian, in 2 or 16 bytes.
public struct AttributeUUID: Sendable, Hashable, CustomStringConvertible {
    /// The 16 bytes, most significant first (as printed).
    public let bytes: [UInt8]

    /// The Bluetooth base UUID's bytes, with the 16-bit value at bytes 2 and 3.
    static let base: [UInt8] = [0, 0, 0, 0, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]

    /// A 16-bit SIG-assigned UUID.
    public init(_ short: UInt16) {
        var bytes = Self.base
        bytes[2] = UInt8(truncatingIfNeeded: short >> 8)
        bytes[3] = UInt8(truncatingIfNeeded: short)
        self.init(bytes: bytes)
    }

    /// Sixteen bytes, most significant first.
    init(bytes: [UInt8]) { self.bytes = bytes }

    /// Reads a UUID as ATT carries it: 2 or 16 bytes, little-endian; nil for any other length.
    public init?(wire: ArraySlice<UInt8>) {
        switch wire.count {
        case 2: self.init(Bytes.uint16(wire, wire.startIndex))
        case 16: self.init(bytes: Array(wire.reversed()))
        default: return nil
        }
    }

    /// The 16-bit value, if this UUID is on the base UUID.
    public var short: UInt16? {
        guard bytes[0] == 0, bytes[1] == 0, bytes[4...] == Self.base[4...] else { return nil }
        return UInt16(bytes[2]) << 8 | UInt16(bytes[3])
    }

    /// The bytes ATT sends: 2 for a 16-bit UUID, else 16, little-endian.
    public var wire: [UInt8] {
        if let short { return Bytes.le(short) }
        return bytes.reversed()
    }

    public var description: String {
        if let short { return "0x" + Self.hex(UInt64(short), digits: 4) }
        let text = bytes.map { Self.hex(UInt64($0), digits: 2) }.joined()
        let cuts = [8, 12, 16, 20]
        var result = ""
        for (index, character) in text.enumerated() {
            if cuts.contains(index) { result.append("-") }
            result.append(character)
        }
        return result
    }

    static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// Primary Service declaration (0x2800).
    public static let primaryService = AttributeUUID(0x2800)
    /// Characteristic declaration (0x2803).
    public static let characteristic = AttributeUUID(0x2803)
    /// Client Characteristic Configuration descriptor (0x2902).
    public static let clientConfiguration = AttributeUUID(0x2902)
    /// Battery Service (0x180F).
    public static let batteryService = AttributeUUID(0x180F)
    /// Battery Level (0x2A19): one byte, percent.
    public static let batteryLevel = AttributeUUID(0x2A19)
    /// Device Information service (0x180A).
    public static let deviceInformation = AttributeUUID(0x180A)
    /// Manufacturer Name String (0x2A29).
    public static let manufacturerName = AttributeUUID(0x2A29)
    /// Model Number String (0x2A24).
    public static let modelNumber = AttributeUUID(0x2A24)
    /// Firmware Revision String (0x2A26).
    public static let firmwareRevision = AttributeUUID(0x2A26)
}
