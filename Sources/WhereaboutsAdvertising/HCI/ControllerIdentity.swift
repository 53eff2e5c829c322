/// What a controller says about itself, for `whereabouts-agent --check`: its public address (Read BD_ADDR), its
/// versions and maker (Read Local Version Information), its LE features (LE Read Local Supported Features) and
/// whether the host scans on it with the extended or the legacy LE commands.
///
/// Each part is nil when the controller refused the command or answered with too few bytes: a check still reports
/// the rest.
public struct ControllerIdentity: Sendable, Hashable {
    /// The controller's name in messages (`hci0`, `h4:/run/btvirt/bt-server-le`).
    public var name: String
    /// Its public device address.
    public var address: DeviceAddress?
    /// Its HCI and LMP versions and its manufacturer.
    public var version: LocalVersion?
    /// The manufacturer's name, when the shell can look the company identifier up (BlueZ's list).
    public var manufacturerName: String?
    /// Its LE features.
    public var leFeatures: LEFeatures?
    /// Whether the host scans with LE Set Extended Scan Parameters/Enable (else the legacy commands).
    public var extendedScanning: Bool

    /// An identity from its parts.
    public init(
        name: String, address: DeviceAddress?, version: LocalVersion?, manufacturerName: String? = nil,
        leFeatures: LEFeatures?, extendedScanning: Bool
    ) {
        self.name = name
        self.address = address
        self.version = version
        self.manufacturerName = manufacturerName
        self.leFeatures = leFeatures
        self.extendedScanning = extendedScanning
    }
}

/// The answer to Read Local Version Information (0x1001; Core Vol 4 Part E §7.4.1).
public struct LocalVersion: Sendable, Hashable {
    /// The HCI version (Assigned Numbers: 9 is Core 5.0).
    public var hciVersion: UInt8
    /// The HCI revision, the maker's own number.
    public var hciRevision: UInt16
    /// The LMP (or, on an LE-only controller, Link Layer) version, numbered as the HCI version.
    public var lmpVersion: UInt8
    /// The LMP subversion, the maker's own number.
    public var lmpSubversion: UInt16
    /// The Bluetooth SIG company identifier of the controller's maker.
    public var manufacturer: UInt16

    /// A version from its parts.
    public init(hciVersion: UInt8, hciRevision: UInt16, lmpVersion: UInt8, lmpSubversion: UInt16, manufacturer: UInt16)
    {
        self.hciVersion = hciVersion
        self.hciRevision = hciRevision
        self.lmpVersion = lmpVersion
        self.lmpSubversion = lmpSubversion
        self.manufacturer = manufacturer
    }

    /// From a Command Complete's return parameters: status, HCI version, HCI revision (2), LMP version,
    /// manufacturer (2), LMP subversion (2), little-endian. Nil unless status 0 and all 9 bytes are there.
    public init?(returnParameters: ArraySlice<UInt8>) {
        guard returnParameters.count >= 9, returnParameters.first == 0 else { return nil }
        let bytes = Array(returnParameters.prefix(9))
        hciVersion = bytes[1]
        hciRevision = UInt16(bytes[2]) | UInt16(bytes[3]) << 8
        lmpVersion = bytes[4]
        manufacturer = UInt16(bytes[5]) | UInt16(bytes[6]) << 8
        lmpSubversion = UInt16(bytes[7]) | UInt16(bytes[8]) << 8
    }

    /// The Core specification a version number stands for ("5.0"), nil for a number this table does not know.
    public static func coreSpecification(_ version: UInt8) -> String? {
        let names = [
            "1.0b", "1.1", "1.2", "2.0", "2.1", "3.0", "4.0", "4.1", "4.2", "5.0", "5.1", "5.2", "5.3", "5.4", "6.0",
        ]
        return Int(version) < names.count ? names[Int(version)] : nil
    }
}

/// The LE features a controller supports: the 64-bit mask of LE Read Local Supported Features (0x2003; Core Vol 6
/// Part B §4.6).
public struct LEFeatures: Sendable, Hashable {
    /// The mask, bit 0 first.
    public var bits: UInt64

    /// The features that matter to the agent, by bit.
    public enum Feature: Int, CaseIterable, Sendable {
        /// LL Privacy: the controller resolves private addresses itself.
        case llPrivacy = 6
        /// LE Coded PHY: long-range advertising (the agent scans the 1M PHY only, so it does not hear it).
        case codedPHY = 11
        /// LE Extended Advertising: extended advertising reports, and the extended scan commands.
        case extendedAdvertising = 12

        /// The name the check prints.
        public var name: String {
            switch self {
            case .llPrivacy: "LL privacy"
            case .codedPHY: "LE Coded PHY (long range)"
            case .extendedAdvertising: "extended advertising"
            }
        }
    }

    /// A mask as is.
    public init(bits: UInt64) { self.bits = bits }

    /// From a Command Complete's return parameters: status, then 8 bytes, little-endian. Nil unless status 0 and all
    /// 8 bytes are there.
    public init?(returnParameters: ArraySlice<UInt8>) {
        guard returnParameters.count >= 9, returnParameters.first == 0 else { return nil }
        bits = returnParameters.dropFirst().prefix(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Whether the controller has `feature`.
    public func has(_ feature: Feature) -> Bool { bits & (1 << UInt64(feature.rawValue)) != 0 }
}

extension DeviceAddress {
    /// From Read BD_ADDR's return parameters: status, then the six bytes least significant first. Nil unless status
    /// 0 and all six bytes are there.
    public init?(readBDAddressReturnParameters parameters: ArraySlice<UInt8>) {
        guard parameters.count >= 7, parameters.first == 0 else { return nil }
        self.init(wire: parameters, at: parameters.startIndex + 1)
    }
}

extension HCICommand {
    /// Read Local Version Information (0x1001).
    public static let readLocalVersionInformation = HCICommand(group: 0x04, command: 0x0001, parameters: [])
    /// Read BD_ADDR (0x1009): the controller's public address.
    public static let readBDAddress = HCICommand(group: 0x04, command: 0x0009, parameters: [])
    /// LE Read Local Supported Features (0x2003).
    public static let leReadLocalSupportedFeatures = HCICommand(group: leGroup, command: 0x0003, parameters: [])
}
