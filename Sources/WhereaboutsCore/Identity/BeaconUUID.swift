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
    ///
    /// Eight or four digits at a time (every batch reading names its tag by this text): each group is loaded as one
    /// word, checked to be all hex digits and turned into its bytes with word arithmetic (`hexBytes`).
    package init?(canonical utf8: UnsafeBufferPointer<UInt8>) {
        guard utf8.count == 36, let base = utf8.baseAddress else { return nil }
        let dash = UInt8(ascii: "-")
        guard utf8[8] == dash, utf8[13] == dash, utf8[18] == dash, utf8[23] == dash else { return nil }
        let raw = UnsafeRawPointer(base)
        func eight(_ offset: Int) -> UInt32? {
            Self.hexBytes(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
        }
        func four(_ offset: Int) -> UInt16? {
            Self.hexBytes(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        }
        guard let a = eight(0), let b = four(9), let c = four(14), let d = four(19), let e = eight(24),
            let f = four(32)
        else { return nil }
        high = UInt64(a) << 32 | UInt64(b) << 16 | UInt64(c)
        low = UInt64(d) << 48 | UInt64(e) << 16 | UInt64(f)
    }

    /// The four bytes that eight ASCII hex digits (either case) write, the first digit in the lowest byte of `word`
    /// and most significant in the result; nil unless all eight are hex digits.
    static func hexBytes(_ word: UInt64) -> UInt32? {
        guard let nibbles = hexValues(word) else { return nil }
        // Each 16-bit lane j: digit 2j's value above digit 2j + 1's, then the lanes' low bytes side by side.
        let lanes: UInt64 = 0x000F_000F_000F_000F
        let pairs = ((nibbles & lanes) << 4) | ((nibbles >> 8) & lanes)
        let halves = (pairs | (pairs >> 8)) & 0x0000_FFFF_0000_FFFF
        return UInt32(truncatingIfNeeded: halves | (halves >> 16)).byteSwapped
    }

    /// The two bytes that four ASCII hex digits write, as the eight-digit `hexBytes` does.
    static func hexBytes(_ word: UInt32) -> UInt16? {
        guard let nibbles = hexValues(word) else { return nil }
        let lanes: UInt32 = 0x000F_000F
        let pairs = ((nibbles & lanes) << 4) | ((nibbles >> 8) & lanes)
        return UInt16(truncatingIfNeeded: pairs | (pairs >> 8)).byteSwapped
    }

    /// Each byte of `word`, an ASCII hex digit of either case, replaced by its value; nil unless every byte is one.
    ///
    /// Per byte b, all below 0x80: adding 0x80 − n sets its top bit exactly when b ≥ n, without a carry into the
    /// next byte. A digit is in 0x30…0x39; a letter, with the case bit set, in 0x61…0x66. Its value is the low
    /// nibble, plus 9 for a letter. (`&` binds like `*` in Swift, hence the parentheses.)
    @inline(__always)
    static func hexValues<Word: FixedWidthInteger & UnsignedInteger>(_ word: Word) -> Word? {
        let ones = Word.max / 0xFF  // 0x01 in every byte
        let tops = ones &* 0x80
        guard word & tops == 0 else { return nil }
        let digit = (word &+ (ones &* (0x80 - 0x30))) & ~(word &+ (ones &* (0x80 - 0x3A)))
        let lower = word | (ones &* 0x20)
        let letter = (lower &+ (ones &* (0x80 - 0x61))) & ~(lower &+ (ones &* (0x80 - 0x67)))
        guard (digit | letter) & tops == tops else { return nil }
        return (word & (ones &* 0x0F)) &+ (((letter & tops) >> 7) &* 9)
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
