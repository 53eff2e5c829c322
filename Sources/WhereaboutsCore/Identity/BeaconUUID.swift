/// A 128-bit UUID as beacons carry it: the iBeacon proximity UUID that names a site.
///
/// Parsed from and printed as the canonical 8-4-4-4-12 form; printed in lower case.
public struct BeaconUUID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 16 bytes, most significant first, as they appear in the advert.
    public let bytes: [UInt8]

    /// Makes a UUID from exactly 16 bytes.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        self.bytes = Array(bytes)
    }

    /// Parses the canonical form `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, in either case.
    public init?(_ text: String) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        var index = 0
        while index < 36 {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard utf8[index] == UInt8(ascii: "-") else { return nil }
                index += 1
                continue
            }
            guard let high = hexValue(utf8[index]), let low = hexValue(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.bytes = bytes
    }

    /// The canonical lower-case form.
    public var description: String {
        var text = ""
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text += "-" }
            appendHex(byte, to: &text)
        }
        return text
    }

    public static func < (lhs: BeaconUUID, rhs: BeaconUUID) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}

/// The value of one ASCII hex digit, or nil.
func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

/// Appends a byte as two lower-case hex digits.
func appendHex(_ byte: UInt8, to text: inout String) {
    let digits: StaticString = "0123456789abcdef"
    text.unicodeScalars.append(Unicode.Scalar(digits.utf8Start[Int(byte >> 4)]))
    text.unicodeScalars.append(Unicode.Scalar(digits.utf8Start[Int(byte & 0x0F)]))
}

/// Parses an exact number of hex bytes from text such as "0123abcd"; nil on any other input.
func parseHexBytes(_ text: Substring, count: Int) -> [UInt8]? {
    let utf8 = Array(text.utf8)
    guard utf8.count == count * 2 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    for index in stride(from: 0, to: utf8.count, by: 2) {
        guard let high = hexValue(utf8[index]), let low = hexValue(utf8[index + 1]) else { return nil }
        bytes.append(high << 4 | low)
    }
    return bytes
}
