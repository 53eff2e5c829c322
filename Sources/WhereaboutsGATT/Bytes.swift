/// Little-endian reading and writing, as HCI, L2CAP and ATT carry their fields. Readers take an index the caller
/// has checked against the slice's bounds.
enum Bytes {
    static func uint16(_ bytes: ArraySlice<UInt8>, _ at: Int) -> UInt16 {
        UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    static func uint48(_ bytes: ArraySlice<UInt8>, _ at: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in (at..<at + 6).reversed() { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    static func append(_ value: UInt16, to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    static func le(_ value: UInt16) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
    }
}
