/// An HCI command: opcode group and command, plus the parameter bytes (Bluetooth Core Vol 4 Part E §7.8).
///
/// Built here, in pure code, so the bytes are tested; the HCI adapter only sends them.
public struct HCICommand: Sendable, Hashable {
    /// The opcode group (OGF); 0x08 for LE controller commands.
    public var group: UInt8
    /// The opcode command (OCF).
    public var command: UInt16
    /// The parameters, at most 255 bytes.
    public var parameters: [UInt8]

    /// The LE controller command group.
    public static let leGroup: UInt8 = 0x08

    /// A command from its opcode group and command and its parameters (at most 255 bytes, which the caller keeps
    /// to: the connection commands in WhereaboutsGATT are built with this).
    public init(group: UInt8, command: UInt16, parameters: [UInt8]) {
        self.group = group
        self.command = command
        self.parameters = parameters
    }

    /// The 16-bit opcode: OGF in the top 6 bits, OCF in the low 10.
    public var opcode: UInt16 { UInt16(group & 0x3F) << 10 | command & 0x3FF }

    /// The H4 packet: type 0x01, opcode (little-endian), parameter length, parameters.
    public var packet: [UInt8] {
        [0x01, UInt8(truncatingIfNeeded: opcode), UInt8(truncatingIfNeeded: opcode >> 8), UInt8(parameters.count)]
            + parameters
    }

    /// LE Set Scan Parameters (0x000B).
    public static func leSetScanParameters(_ scan: LEScanParameters) -> HCICommand {
        var parameters: [UInt8] = [scan.active ? 0x01 : 0x00]
        appendLittleEndian(scan.interval, to: &parameters)
        appendLittleEndian(scan.window, to: &parameters)
        parameters += [0x00, 0x00]  // own address type public; accept all advertisers
        return HCICommand(group: leGroup, command: 0x000B, parameters: parameters)
    }

    /// LE Set Scan Enable (0x000C). Scanning for positioning keeps duplicates: every advert is a reading.
    public static func leSetScanEnable(_ enabled: Bool, filterDuplicates: Bool = false) -> HCICommand {
        HCICommand(
            group: leGroup,
            command: 0x000C,
            parameters: [enabled ? 0x01 : 0x00, filterDuplicates ? 0x01 : 0x00]
        )
    }

    /// LE Set Advertising Parameters (0x0006) for non-connectable undirected advertising on all three channels.
    public static func leSetAdvertisingParameters(_ advertising: LEAdvertisingParameters) -> HCICommand {
        var parameters: [UInt8] = []
        appendLittleEndian(advertising.interval, to: &parameters)  // minimum
        appendLittleEndian(advertising.interval, to: &parameters)  // maximum
        parameters += [
            0x03,  // ADV_NONCONN_IND
            0x00,  // own address type: public
            0x00, 0, 0, 0, 0, 0, 0,  // peer address type and address: unused when undirected
            0x07,  // channels 37, 38 and 39
            0x00,  // no filter
        ]
        return HCICommand(group: leGroup, command: 0x0006, parameters: parameters)
    }

    /// LE Set Advertising Data (0x0008): the length, then the data padded to 31 bytes. Nil if over 31 bytes.
    public static func leSetAdvertisingData(_ data: [UInt8]) -> HCICommand? {
        guard data.count <= 31 else { return nil }
        let parameters = [UInt8(data.count)] + data + Array(repeating: 0, count: 31 - data.count)
        return HCICommand(group: leGroup, command: 0x0008, parameters: parameters)
    }

    /// LE Set Advertising Enable (0x000A).
    public static func leSetAdvertisingEnable(_ enabled: Bool) -> HCICommand {
        HCICommand(group: leGroup, command: 0x000A, parameters: [enabled ? 0x01 : 0x00])
    }
}

/// How the controller scans: passive or active, how often and for how long (Vol 4 Part E §7.8.10).
public struct LEScanParameters: Sendable, Hashable {
    /// Whether to send scan requests (active) or only listen (passive, the default).
    public var active: Bool
    /// Time between scan starts, in units of 0.625 ms (0x0004…0x4000).
    public let interval: UInt16
    /// Time spent listening per interval, in units of 0.625 ms; at most the interval.
    public let window: UInt16

    /// Makes parameters from milliseconds: each in 2.5…10240 ms, the window no longer than the interval.
    /// Nil when out of range.
    public init?(active: Bool = false, intervalMilliseconds: Double = 100, windowMilliseconds: Double = 100) {
        guard let interval = bluetoothUnits(intervalMilliseconds, 0x0004...0x4000),
            let window = bluetoothUnits(windowMilliseconds, 0x0004...0x4000), window <= interval
        else { return nil }
        self.active = active
        self.interval = interval
        self.window = window
    }
}

/// How the controller advertises (Vol 4 Part E §7.8.5).
public struct LEAdvertisingParameters: Sendable, Hashable {
    /// Time between adverts, in units of 0.625 ms (0x0020…0x4000).
    public let interval: UInt16

    /// Makes parameters from milliseconds in 20…10240 ms; nil when out of range.
    public init?(intervalMilliseconds: Double = 100) {
        guard let interval = bluetoothUnits(intervalMilliseconds, 0x0020...0x4000) else { return nil }
        self.interval = interval
    }
}

/// Milliseconds in units of 0.625 ms, if inside `range`.
func bluetoothUnits(_ milliseconds: Double, _ range: ClosedRange<UInt16>) -> UInt16? {
    let units = (milliseconds / 0.625).rounded()
    guard units.isFinite, units >= Double(range.lowerBound), units <= Double(range.upperBound) else { return nil }
    return UInt16(units)
}

/// Appends a little-endian 16-bit value (also for WhereaboutsGATT's connection commands).
package func appendLittleEndian(_ value: UInt16, to bytes: inout [UInt8]) {
    bytes.append(UInt8(truncatingIfNeeded: value))
    bytes.append(UInt8(truncatingIfNeeded: value >> 8))
}
