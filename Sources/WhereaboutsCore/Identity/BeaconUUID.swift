/// A 128-bit UUID as beacons carry it: the iBeacon proximity UUID that names a site.
///
/// Parsed from and printed as the canonical 8-4-4-4-12 form; printed in lower case.
public struct BeaconUUID: Sendable, Hashable, Comparable, CustomStringConvertible {
    // Two words rather than an array: tags are looked up by identity on every reading, so hashing must be cheap.
    @usableFromInline let high: UInt64
    @usableFromInline let low: UInt64

    /// Makes a UUID from exactly 16 bytes, most significant first.
    @inlinable
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.high = high
        self.low = low
    }

    /// The 16 bytes, most significant first, as they appear in the advert.
    public var bytes: [UInt8] {
        (0..<16).map { index in
            let word = index < 8 ? high : low
            return UInt8(truncatingIfNeeded: word >> UInt64(8 * (7 - index % 8)))
        }
    }

    /// Parses the canonical form `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, in either case.
    public init?(_ text: String) {
        guard let uuid = Array(text.utf8).withUnsafeBufferPointer({ BeaconUUID(canonical: $0) }) else { return nil }
        self = uuid
    }

    /// Parses the canonical form from its ASCII bytes, in either case.
    package init?(canonical utf8: UnsafeBufferPointer<UInt8>) {
        guard utf8.count == 36 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var byteCount = 0
        var index = 0
        while index < 36 {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard utf8[index] == UInt8(ascii: "-") else { return nil }
                index += 1
                continue
            }
            guard let upper = hexValue(utf8[index]), let lower = hexValue(utf8[index + 1]) else { return nil }
            let byte = UInt64(upper << 4 | lower)
            if byteCount < 8 { high = high << 8 | byte } else { low = low << 8 | byte }
            byteCount += 1
            index += 2
        }
        self.high = high
        self.low = low
    }

    /// The canonical lower-case form.
    public var description: String {
        var text: [UInt8] = []
        text.reserveCapacity(36)
        appendCanonical(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends the canonical lower-case form as ASCII bytes (topics name a tag by it on every publication).
    func appendCanonical(to text: inout [UInt8]) {
        for index in 0..<16 {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            let word = index < 8 ? high : low
            appendHex(UInt8(truncatingIfNeeded: word >> UInt64(8 * (7 - index % 8))), to: &text)
        }
    }

    public static func < (lhs: BeaconUUID, rhs: BeaconUUID) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }
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
func appendHex(_ byte: UInt8, to text: inout [UInt8]) {
    let digits: StaticString = "0123456789abcdef"
    text.append(digits.utf8Start[Int(byte >> 4)])
    text.append(digits.utf8Start[Int(byte & 0x0F)])
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
