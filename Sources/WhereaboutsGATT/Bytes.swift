/// Little-endian reading and writing, as HCI, L2CAP and ATT carry their fields. Readers take an index the caller
/// has checked against the slice's bounds. Appending to a buffer (`appendLittleEndian`) and reading an address
/// (`DeviceAddress(wire:at:)`) are WhereaboutsAdvertising's.
enum Bytes {
    static func uint16(_ bytes: ArraySlice<UInt8>, _ at: Int) -> UInt16 {
        UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    static func le(_ value: UInt16) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
    }
}
