public import WhereaboutsAdvertising

/// The HCI commands a host needs for connections (Bluetooth Core Vol 4 Part E §7.1 and §7.8), built here in pure
/// code so their bytes are tested.
extension HCICommand {
    /// LE Read Buffer Size [v1] (0x2002): how long an LE ACL packet may be and how many the controller holds.
    public static let leReadBufferSize = HCICommand(group: leGroup, command: 0x0002, parameters: [])
    /// Read Buffer Size (0x1005): the shared buffers, for a controller whose LE buffer size is 0.
    public static let readBufferSize = HCICommand(group: 0x04, command: 0x0005, parameters: [])
    /// LE Create Connection Cancel (0x200E).
    public static let leCreateConnectionCancel = HCICommand(group: leGroup, command: 0x000E, parameters: [])

    /// LE Create Connection (0x200D) to one advertiser, with the host's public address.
    public static func leCreateConnection(to address: DeviceAddress, type: AddressType, _ link: LinkTiming)
        -> HCICommand
    {
        var parameters: [UInt8] = []
        appendLittleEndian(link.scanInterval, to: &parameters)
        appendLittleEndian(link.scanWindow, to: &parameters)
        parameters.append(0x00)  // initiator filter policy: the peer named here, not the accept list
        parameters.append(type.rawValue)
        parameters += address.wireBytes
        parameters.append(0x00)  // own address type: public
        link.appendConnectionParameters(to: &parameters)
        return HCICommand(group: leGroup, command: 0x000D, parameters: parameters)
    }

    /// LE Extended Create Connection (0x2043) on the LE 1M PHY: a controller scanning with the extended commands
    /// refuses the legacy one.
    public static func leExtendedCreateConnection(to address: DeviceAddress, type: AddressType, _ link: LinkTiming)
        -> HCICommand
    {
        var parameters: [UInt8] = [0x00, 0x00, type.rawValue] + address.wireBytes
        parameters.append(0x01)  // initiating PHYs: LE 1M only
        appendLittleEndian(link.scanInterval, to: &parameters)
        appendLittleEndian(link.scanWindow, to: &parameters)
        link.appendConnectionParameters(to: &parameters)
        return HCICommand(group: leGroup, command: 0x0043, parameters: parameters)
    }

    /// Disconnect (0x0406); reason 0x13, "remote user terminated connection", is the usual one.
    public static func disconnect(handle: UInt16, reason: UInt8 = 0x13) -> HCICommand {
        HCICommand(group: 0x01, command: 0x0006, parameters: Bytes.le(handle & 0x0FFF) + [reason])
    }

    /// LE Connection Update (0x2013) to the given parameters, interval minimum and maximum as asked.
    public static func leConnectionUpdate(handle: UInt16, _ request: ConnectionParameterRequest) -> HCICommand {
        var parameters = Bytes.le(handle & 0x0FFF)
        for value in [request.minimumInterval, request.maximumInterval, request.latency, request.supervisionTimeout] {
            appendLittleEndian(value, to: &parameters)
        }
        parameters += [0, 0, 0, 0]  // minimum and maximum connection event length: no preference
        return HCICommand(group: leGroup, command: 0x0013, parameters: parameters)
    }

    /// LE Remote Connection Parameter Request Reply (0x2020): the parameters the peer asked for, accepted.
    public static func leRemoteParameterRequestReply(handle: UInt16, _ request: ConnectionParameterRequest)
        -> HCICommand
    {
        var command = leConnectionUpdate(handle: handle, request)
        command.command = 0x0020
        return command
    }

    /// LE Remote Connection Parameter Request Negative Reply (0x2021), reason 0x3B "unacceptable connection
    /// parameters".
    public static func leRemoteParameterRequestNegativeReply(handle: UInt16) -> HCICommand {
        HCICommand(group: leGroup, command: 0x0021, parameters: Bytes.le(handle & 0x0FFF) + [0x3B])
    }

    /// LE Set Advertising Parameters (0x0006) for connectable undirected advertising (ADV_IND) on all channels.
    public static func leSetConnectableAdvertisingParameters(intervalUnits: UInt16 = 0x00A0) -> HCICommand {
        var parameters = Bytes.le(intervalUnits) + Bytes.le(intervalUnits)
        parameters += [0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0x07, 0x00]  // ADV_IND, public, no peer, channels, no filter
        return HCICommand(group: leGroup, command: 0x0006, parameters: parameters)
    }
}

/// How a central connects: how it scans for the advertiser, and the connection it asks for. Units as HCI has them:
/// scan interval and window in 0.625 ms, connection interval in 1.25 ms, supervision timeout in 10 ms.
public struct LinkTiming: Sendable, Hashable {
    public var scanInterval: UInt16 = 0x0060
    public var scanWindow: UInt16 = 0x0030
    public var minimumInterval: UInt16 = 0x0018
    public var maximumInterval: UInt16 = 0x0028
    public var latency: UInt16 = 0
    /// 4 s: a tag that walks out of range is given up after this long.
    public var supervisionTimeout: UInt16 = 400

    public init() {}

    func appendConnectionParameters(to parameters: inout [UInt8]) {
        for value in [minimumInterval, maximumInterval, latency, supervisionTimeout] {
            appendLittleEndian(value, to: &parameters)
        }
        parameters += [0, 0, 0, 0]  // connection event length: no preference
    }
}

/// The buffers a controller has for LE ACL data, from LE Read Buffer Size (or Read Buffer Size).
public struct ACLBufferSize: Sendable, Hashable {
    /// The longest ACL payload the controller takes in one packet.
    public var packetLength: Int
    /// How many packets it holds at once: the host's credits.
    public var packetCount: Int

    public init(packetLength: Int, packetCount: Int) {
        self.packetLength = packetLength
        self.packetCount = packetCount
    }

    /// Reads LE Read Buffer Size's return parameters (status, length, count); nil if failed or zero (the caller
    /// then reads the shared buffers).
    public init?(leReturnParameters bytes: [UInt8]) {
        guard bytes.count >= 4, bytes[0] == 0 else { return nil }
        let length = Int(Bytes.uint16(bytes[...], 1))
        guard length > 0, bytes[3] > 0 else { return nil }
        self.init(packetLength: length, packetCount: Int(bytes[3]))
    }

    /// Reads Read Buffer Size's return parameters (status, ACL length, SCO length, ACL count, SCO count).
    public init?(sharedReturnParameters bytes: [UInt8]) {
        guard bytes.count >= 8, bytes[0] == 0 else { return nil }
        let length = Int(Bytes.uint16(bytes[...], 1))
        let count = Int(Bytes.uint16(bytes[...], 4))
        guard length > 0, count > 0 else { return nil }
        self.init(packetLength: length, packetCount: count)
    }
}
