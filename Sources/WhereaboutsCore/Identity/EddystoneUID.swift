/// An Eddystone-UID beacon's id: a 10-byte namespace and a 6-byte instance.
///
/// Sixteen bytes in two words rather than two arrays, as ``BeaconUUID``: with an array anywhere in it, every
/// ``TagIdentity`` (and every reading that carries one) was copied and destroyed through the runtime, with reference
/// counting, on every step of the locator's hot path, iBeacons included.
public struct EddystoneUID: Sendable, Hashable, Comparable {
    /// The namespace's first eight bytes, most significant first.
    private let high: UInt64
    /// The namespace's last two bytes, then the instance's six.
    private let low: UInt64

    /// Makes the id from exactly 10 namespace bytes and 6 instance bytes, most significant first; nil for other
    /// lengths.
    public init?(namespace: some Collection<UInt8>, instance: some Collection<UInt8>) {
        guard namespace.count == 10, instance.count == 6 else { return nil }
        var words: (UInt64, UInt64) = (0, 0)
        for (index, byte) in (Array(namespace) + Array(instance)).enumerated() {
            if index < 8 { words.0 = words.0 << 8 | UInt64(byte) } else { words.1 = words.1 << 8 | UInt64(byte) }
        }
        (high, low) = words
    }

    /// The namespace's 10 bytes.
    public var namespace: [UInt8] { Array(bytes[0..<10]) }

    /// The instance's 6 bytes.
    public var instance: [UInt8] { Array(bytes[10..<16]) }

    /// The 16 bytes, namespace then instance.
    private var bytes: [UInt8] {
        (0..<16).map { index in
            UInt8(truncatingIfNeeded: (index < 8 ? high : low) >> UInt64(8 * (7 - index % 8)))
        }
    }

    /// Byte by byte, namespace first: the order of the two words.
    public static func < (lhs: EddystoneUID, rhs: EddystoneUID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}
