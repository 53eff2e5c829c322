public import WhereaboutsCore

/// A 48-bit Bluetooth device address, printed as `AA:BB:CC:DD:EE:FF` (most significant byte first).
public struct DeviceAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 48 bits; the top 16 bits of the integer are always zero.
    public let value: UInt64

    /// Makes an address from 48 bits; nil if any higher bit is set.
    public init?(value: UInt64) {
        guard value >> 48 == 0 else { return nil }
        self.value = value
    }

    /// Reads the six bytes as HCI carries them, least significant first. The caller has checked the bounds.
    package init(wire bytes: ArraySlice<UInt8>, at start: Int) {
        var value: UInt64 = 0
        for index in (start..<start + 6).reversed() {
            value = value << 8 | UInt64(bytes[index])
        }
        self.value = value
    }

    /// Parses `AA:BB:CC:DD:EE:FF` in either case.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var value: UInt64 = 0
        for part in parts {
            // `UInt8(_:radix:)` alone would take a sign ("+f"), so check the digits first.
            guard part.utf8.count == 2, part.utf8.allSatisfy(isHexDigit), let byte = UInt8(part, radix: 16) else {
                return nil
            }
            value = value << 8 | UInt64(byte)
        }
        self.value = value
    }

    /// The six bytes, least significant first, as HCI commands carry them.
    public var wireBytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// The tag that stands for this device when it is tracked by address.
    public var tag: TagIdentity { .address(value) }

    public var description: String {
        let digits: [Character] = Array("0123456789ABCDEF")
        var text = ""
        for shift in stride(from: 40, through: 0, by: -8) {
            let byte = Int(truncatingIfNeeded: value >> UInt64(shift)) & 0xFF
            if !text.isEmpty { text.append(":") }
            text.append(digits[byte >> 4])
            text.append(digits[byte & 0x0F])
        }
        return text
    }

    public static func < (lhs: DeviceAddress, rhs: DeviceAddress) -> Bool { lhs.value < rhs.value }
}

/// The kind of address an advertising report carries (Bluetooth Core Vol 4 Part E §7.7.65.2 and .13).
public struct AddressType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The byte as the controller sends it.
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// A public device address (an IEEE-assigned MAC).
    public static let publicDevice = AddressType(rawValue: 0x00)
    /// A random device address: static, resolvable private or non-resolvable private.
    public static let randomDevice = AddressType(rawValue: 0x01)
    /// A public identity address the controller resolved from a private address.
    public static let publicIdentity = AddressType(rawValue: 0x02)
    /// A random static identity address the controller resolved from a private address.
    public static let randomIdentity = AddressType(rawValue: 0x03)
    /// No address was sent (extended reports of anonymous advertising).
    public static let anonymous = AddressType(rawValue: 0xFF)

    /// Whether an address of this type names one device for good: public, or random static.
    ///
    /// A random static address has its two top bits set; resolvable and non-resolvable private addresses change
    /// every few minutes, so tracking them by address would follow nothing.
    public func isStable(_ address: DeviceAddress) -> Bool {
        switch self {
        case .publicDevice, .publicIdentity, .randomIdentity: true
        case .randomDevice: address.value >> 46 == 0b11
        default: false
        }
    }

    public var description: String {
        switch self {
        case .publicDevice: "public"
        case .randomDevice: "random"
        case .publicIdentity: "public-identity"
        case .randomIdentity: "random-identity"
        case .anonymous: "anonymous"
        default: "type-\(rawValue)"
        }
    }
}

/// Whether an ASCII byte is a hex digit.
func isHexDigit(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
        UInt8(ascii: "A")...UInt8(ascii: "F"):
        true
    default: false
    }
}
