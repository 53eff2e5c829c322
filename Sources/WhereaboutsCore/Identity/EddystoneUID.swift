/// An Eddystone-UID beacon's id: a 10-byte namespace and a 6-byte instance.
///
/// Sixteen bytes in two words rather than two arrays: with an array anywhere in it, every ``TagIdentity`` (and every
/// reading that carries one) was copied and destroyed through the runtime, with reference counting, on every step of
/// the locator's hot path, iBeacons included. The words are kept as ``BeaconUUID`` keeps a UUID's 16 bytes, which
/// orders them byte by byte.
public struct EddystoneUID: Sendable, Hashable, Comparable {
    /// The namespace's 10 bytes, then the instance's 6.
    private let bytes: BeaconUUID

    /// Makes the id from exactly 10 namespace bytes and 6 instance bytes, most significant first; nil for other
    /// lengths.
    public init?(namespace: some Collection<UInt8>, instance: some Collection<UInt8>) {
        guard namespace.count == 10, instance.count == 6,
            let bytes = BeaconUUID(bytes: Array(namespace) + Array(instance))
        else { return nil }
        self.bytes = bytes
    }

    /// The namespace's 10 bytes.
    public var namespace: [UInt8] { Array(bytes.bytes[0..<10]) }

    /// The instance's 6 bytes.
    public var instance: [UInt8] { Array(bytes.bytes[10..<16]) }

    /// Byte by byte, namespace first.
    public static func < (lhs: EddystoneUID, rhs: EddystoneUID) -> Bool {
        lhs.bytes < rhs.bytes
    }
}
