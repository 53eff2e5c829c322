/// Who a tag is: one canonical, topic-safe string per tag.
///
/// | Kind | Canonical form |
/// |---|---|
/// | iBeacon | `ibeacon-<uuid lower case>-<major>-<minor>` |
/// | AltBeacon | `altbeacon-<first 16 bytes of the beacon id as a UUID>-<major>-<minor>` |
/// | Eddystone-UID | `eddystone-<20 hex namespace>-<12 hex instance>` |
/// | Device address | `mac-<12 hex>` |
///
/// Every canonical string uses only `[a-z0-9-]`, so it can stand as an MQTT topic level.
public enum TagIdentity: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// An iBeacon: proximity UUID (the site), major (the floor), minor.
    case iBeacon(uuid: BeaconUUID, major: UInt16, minor: UInt16)
    /// An AltBeacon whose 20-byte id is read as UUID, major and minor.
    case altBeacon(uuid: BeaconUUID, major: UInt16, minor: UInt16)
    /// An Eddystone-UID beacon: a 10-byte namespace and a 6-byte instance.
    case eddystone(EddystoneUID)
    /// A device known by its public or random static address (48 bits).
    case address(UInt64)

    /// The canonical string.
    public var description: String {
        switch self {
        case .iBeacon(let uuid, let major, let minor): Self.beaconText("ibeacon-", uuid, major, minor)
        case .altBeacon(let uuid, let major, let minor): Self.beaconText("altbeacon-", uuid, major, minor)
        case .eddystone(let id):
            "eddystone-\(hexString(id.namespace))-\(hexString(id.instance))"
        case .address(let address):
            "mac-\(hexString((0..<6).reversed().map { UInt8(truncatingIfNeeded: address >> (8 * UInt64($0))) }))"
        }
    }

    /// `<kind>-<uuid>-<major>-<minor>`, written as bytes: the locator names a tag in two or three topics per
    /// estimate, and string interpolation of the UUID cost more than the rest of building those topics.
    private static func beaconText(_ kind: StaticString, _ uuid: BeaconUUID, _ major: UInt16, _ minor: UInt16)
        -> String
    {
        var text: [UInt8] = []
        text.reserveCapacity(56)
        kind.withUTF8Buffer { text.append(contentsOf: $0) }
        uuid.appendCanonical(to: &text)
        text.append(UInt8(ascii: "-"))
        text.append(contentsOf: String(major).utf8)
        text.append(UInt8(ascii: "-"))
        text.append(contentsOf: String(minor).utf8)
        return String(decoding: text, as: UTF8.self)
    }

    /// Parses a canonical string; also accepts upper-case hex. Nil for anything else.
    public init?(_ text: String) {
        guard let dash = text.firstIndex(of: "-") else { return nil }
        let kind = text[..<dash]
        let rest = text[text.index(after: dash)...]
        switch kind {
        case "ibeacon", "altbeacon":
            // Work on bytes so multi-byte text cannot mislead an index computed from a byte count.
            guard let identity = Array(text.utf8).withUnsafeBufferPointer({ Self.beacon($0) }) ?? nil else {
                return nil
            }
            self = identity
        case "eddystone":
            let parts = rest.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let namespace = parseHexBytes(parts[0], count: 10),
                let instance = parseHexBytes(parts[1], count: 6),
                let id = EddystoneUID(namespace: namespace, instance: instance)
            else { return nil }
            self = .eddystone(id)
        case "mac":
            guard let bytes = parseHexBytes(rest, count: 6) else { return nil }
            self = .address(bytes.reduce(0) { $0 << 8 | UInt64($1) })
        default:
            return nil
        }
    }

    /// What a text of a beacon kind names (`ibeacon-<uuid>-<major>-<minor>`, `altbeacon-…`, the hex in either
    /// case), read straight from its bytes: the identity, `.some(nil)` when it names none, and nil when the text is
    /// not of a beacon kind. Every byte of a text it accepts is in `[A-Za-z0-9-]`, and there are at most 59.
    package static func beacon(_ utf8: UnsafeBufferPointer<UInt8>) -> TagIdentity?? {
        let iBeacon: StaticString = "ibeacon-"
        let altBeacon: StaticString = "altbeacon-"
        func starts(with prefix: StaticString) -> Bool {
            prefix.withUTF8Buffer { prefix in
                utf8.count >= prefix.count && prefix.indices.allSatisfy { utf8[$0] == prefix[$0] }
            }
        }
        let isIBeacon = starts(with: iBeacon)
        guard isIBeacon || starts(with: altBeacon) else { return nil }
        let rest = UnsafeBufferPointer(
            rebasing: utf8[(isIBeacon ? iBeacon.utf8CodeUnitCount : altBeacon.utf8CodeUnitCount)...])
        // <uuid: 36 characters>-<major>-<minor>
        guard rest.count > 37, rest.count <= 49, rest[36] == UInt8(ascii: "-"),
            let uuid = BeaconUUID(canonical: UnsafeBufferPointer(rebasing: rest[0..<36])),
            let dash = rest[37...].firstIndex(of: UInt8(ascii: "-")),
            let major = parseDecimalUInt16(rest[37..<dash]), let minor = parseDecimalUInt16(rest[(dash + 1)...])
        else { return .some(nil) }
        return isIBeacon
            ? .iBeacon(uuid: uuid, major: major, minor: minor) : .altBeacon(uuid: uuid, major: major, minor: minor)
    }

    /// The proximity UUID, major and minor, for the kinds that have them.
    public var beaconFields: (uuid: BeaconUUID, major: UInt16, minor: UInt16)? {
        switch self {
        case .iBeacon(let uuid, let major, let minor), .altBeacon(let uuid, let major, let minor):
            (uuid, major, minor)
        case .eddystone, .address: nil
        }
    }

    /// Orders by kind, then by fields (numerically), without building the canonical strings: occupancy lists are
    /// sorted on every update, so this is on a hot path.
    public static func < (lhs: TagIdentity, rhs: TagIdentity) -> Bool {
        switch (lhs, rhs) {
        case (.iBeacon(let a, let b, let c), .iBeacon(let d, let e, let f)),
            (.altBeacon(let a, let b, let c), .altBeacon(let d, let e, let f)):
            return (a, b, c) < (d, e, f)
        case (.eddystone(let a), .eddystone(let b)):
            return a < b
        case (.address(let a), .address(let b)):
            return a < b
        default:
            return lhs.kindRank < rhs.kindRank
        }
    }

    private var kindRank: Int {
        switch self {
        case .altBeacon: 0
        case .eddystone: 1
        case .iBeacon: 2
        case .address: 3
        }
    }
}

/// Which tags to track, like CoreLocation's `CLBeaconIdentityConstraint`: a UUID, optionally a major, optionally
/// a minor.
///
/// It selects iBeacons and AltBeacons by their fields. Eddystone and address tags carry no UUID; they are tracked
/// only when named one by one (the map's known tags, the agent's address list).
public struct BeaconIdentityConstraint: Sendable, Hashable, CustomStringConvertible {
    /// The proximity UUID every selected tag carries.
    public var uuid: BeaconUUID
    /// The major the tag must carry, or nil for any.
    public var major: UInt16?
    /// The minor the tag must carry, or nil for any. Only meaningful with a major.
    public var minor: UInt16?

    /// Selects every tag with this UUID.
    public init(uuid: BeaconUUID) {
        self.uuid = uuid
    }

    /// Makes a constraint; a minor without a major is not a CoreLocation constraint and is refused.
    public init?(uuid: BeaconUUID, major: UInt16?, minor: UInt16?) {
        guard minor == nil || major != nil else { return nil }
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    /// Parses `UUID`, `UUID:MAJOR` or `UUID:MAJOR:MINOR`.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let uuid = BeaconUUID(String(parts[0])) else { return nil }
        var major: UInt16?
        var minor: UInt16?
        if parts.count >= 2 {
            guard let value = parseDecimalUInt16(parts[1]) else { return nil }
            major = value
        }
        if parts.count == 3 {
            guard let value = parseDecimalUInt16(parts[2]) else { return nil }
            minor = value
        }
        self.init(uuid: uuid, major: major, minor: minor)
    }

    /// Whether the tag falls under this constraint.
    public func matches(_ tag: TagIdentity) -> Bool {
        guard let fields = tag.beaconFields, fields.uuid == uuid else { return false }
        if let major, fields.major != major { return false }
        if let minor, fields.minor != minor { return false }
        return true
    }

    /// `UUID`, `UUID:MAJOR` or `UUID:MAJOR:MINOR`.
    public var description: String {
        var text = uuid.description
        if let major { text += ":\(major)" }
        if let minor { text += ":\(minor)" }
        return text
    }
}

/// Parses a decimal number in 0...65535 with no sign, no spaces and no leading zeros (except "0").
func parseDecimalUInt16(_ text: Substring) -> UInt16? { parseDecimalUInt16(text.utf8) }

/// The same, from ASCII bytes.
func parseDecimalUInt16(_ utf8: some Collection<UInt8>) -> UInt16? {
    guard !utf8.isEmpty, utf8.count <= 5, utf8.first != UInt8(ascii: "0") || utf8.count == 1 else { return nil }
    var value = 0
    for byte in utf8 {
        guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
        value = value * 10 + Int(byte - UInt8(ascii: "0"))
    }
    return value <= 65535 ? UInt16(value) : nil
}

func hexString(_ bytes: [UInt8]) -> String {
    var text: [UInt8] = []
    text.reserveCapacity(2 * bytes.count)
    for byte in bytes { appendHex(byte, to: &text) }
    return String(decoding: text, as: UTF8.self)
}
