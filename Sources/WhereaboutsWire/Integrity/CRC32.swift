/// CRC-32 (IEEE 802.3, the polynomial of zlib and Ethernet), computed a byte at a time from a table: it
/// guards the files the services keep (the agent's outbox journal, the locator's batch ledger).
public struct CRC32: Sendable {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0xEDB8_8320 : value >> 1 }
        return value
    }

    private var state: UInt32 = 0xFFFF_FFFF

    public init() {}

    /// Adds bytes.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes { state = Self.table[Int((state ^ UInt32(byte)) & 0xFF)] ^ (state >> 8) }
    }

    /// The CRC of the bytes so far.
    public var value: UInt32 { state ^ 0xFFFF_FFFF }
}
