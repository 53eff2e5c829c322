/// The commands a controller says it supports: the 64-octet bit mask of Read Local Supported Commands (0x1002;
/// Bluetooth Core Vol 4 Part E §6.27), read to choose between extended and legacy scanning.
public struct SupportedCommands: Sendable, Hashable {
    /// The 64 octets as the controller returned them.
    public var mask: [UInt8]

    /// The mask from a Command Complete's return parameters (status first, then 64 octets); nil unless status 0
    /// and all 64 octets are there.
    public init?(returnParameters: ArraySlice<UInt8>) {
        guard returnParameters.count >= 65, returnParameters.first == 0 else { return nil }
        mask = Array(returnParameters.dropFirst().prefix(64))
    }

    /// Whether octet `octet`, bit `bit` is set.
    public func has(octet: Int, bit: Int) -> Bool {
        octet >= 0 && octet < mask.count && bit >= 0 && bit < 8 && mask[octet] & (1 << bit) != 0
    }

    /// LE Set Extended Scan Parameters (octet 37 bit 5) and LE Set Extended Scan Enable (octet 37 bit 6).
    public var extendedScanning: Bool { has(octet: 37, bit: 5) && has(octet: 37, bit: 6) }
}

extension HCICommand {
    /// HCI Reset (0x0C03).
    public static let reset = HCICommand(group: 0x03, command: 0x0003, parameters: [])
    /// Read Local Supported Commands (0x1002).
    public static let readLocalSupportedCommands = HCICommand(group: 0x04, command: 0x0002, parameters: [])

    /// Set Event Mask (0x0C01): the default events plus LE Meta, which a controller after Reset may hold back.
    public static let setEventMask = HCICommand(
        group: 0x03, command: 0x0001, parameters: [0xFF, 0xFF, 0xFB, 0xFF, 0x07, 0xF8, 0xBF, 0x3D])

    /// LE Set Event Mask (0x2001): every LE meta event, extended advertising reports included.
    public static let leSetEventMask = HCICommand(
        group: leGroup, command: 0x0001, parameters: [0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x00, 0x00, 0x00])

    /// LE Set Extended Scan Parameters (0x2041) on the 1M PHY, with the same settings as the legacy command.
    public static func leSetExtendedScanParameters(_ scan: LEScanParameters) -> HCICommand {
        var parameters: [UInt8] = [0x00, 0x00, 0x01, scan.active ? 0x01 : 0x00]  // own public, accept all, 1M
        appendLittleEndian(scan.interval, to: &parameters)
        appendLittleEndian(scan.window, to: &parameters)
        return HCICommand(group: leGroup, command: 0x0041, parameters: parameters)
    }

    /// LE Set Extended Scan Enable (0x2042), duplicates kept, no duration or period.
    public static func leSetExtendedScanEnable(_ enabled: Bool) -> HCICommand {
        HCICommand(group: leGroup, command: 0x0042, parameters: [enabled ? 0x01 : 0x00, 0x00, 0, 0, 0, 0])
    }
}
