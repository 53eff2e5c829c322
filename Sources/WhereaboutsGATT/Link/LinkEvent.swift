public import WhereaboutsAdvertising

/// An HCI event about a connection, read from an H4 event packet (type 0x04): the events a host needs to follow its
/// links (Bluetooth Core Vol 4 Part E §7.7).
///
/// Every length is checked: an event whose parameter length does not match the bytes, or is too short for its
/// fields, is not a link event (nil), and the caller counts it.
public enum LinkEvent: Sendable, Hashable {
    /// LE Connection Complete (subevent 0x01) or LE Enhanced Connection Complete (0x0A).
    case connectionComplete(ConnectionComplete)
    /// Disconnection Complete (0x05): status, handle, reason.
    case disconnectionComplete(status: UInt8, handle: UInt16, reason: UInt8)
    /// Number of Completed Packets (0x13): for each handle, how many ACL packets the controller has sent.
    case completedPackets([CompletedPackets])
    /// LE Connection Update Complete (subevent 0x03).
    case connectionUpdateComplete(status: UInt8, handle: UInt16, parameters: ConnectionParameters)
    /// LE Remote Connection Parameter Request (subevent 0x06): the peer asked for other parameters at the link
    /// layer, and the controller waits for this host to reply (or the link times out).
    case remoteParameterRequest(handle: UInt16, ConnectionParameterRequest)

    /// Reads one H4 event packet; nil if it is not a link event (``LinkEventKind``) or does not add up.
    public init?(packet: [UInt8]) {
        guard let kind = LinkEventKind(packet: packet), packet.count >= 3, Int(packet[2]) == packet.count - 3 else {
            return nil
        }
        let body = packet[3...]
        switch kind {
        case .disconnectionComplete:
            guard body.count == 4 else { return nil }
            self = .disconnectionComplete(status: body[3], handle: Bytes.uint16(body, 4) & 0x0FFF, reason: body[6])
        case .completedPackets:
            guard let pairs = Self.completedPackets(body) else { return nil }
            self = .completedPackets(pairs)
        case .connectionComplete, .enhancedConnectionComplete, .connectionUpdateComplete, .remoteParameterRequest:
            guard let event = Self.leMeta(kind, body) else { return nil }
            self = event
        }
    }

    /// Number_of_Handles, then (handle, count) pairs, as controllers send them and Linux reads them.
    private static func completedPackets(_ body: ArraySlice<UInt8>) -> [CompletedPackets]? {
        guard let number = body.first, body.count == 1 + 4 * Int(number) else { return nil }
        return (0..<Int(number)).map { index in
            let at = body.startIndex + 1 + 4 * index
            return CompletedPackets(handle: Bytes.uint16(body, at) & 0x0FFF, count: Int(Bytes.uint16(body, at + 2)))
        }
    }

    /// An LE Meta event's body: the subevent (already read into `kind`), then its parameters.
    private static func leMeta(_ kind: LinkEventKind, _ body: ArraySlice<UInt8>) -> LinkEvent? {
        let start = body.startIndex + 1
        switch kind {
        case .connectionComplete where body.count == 19, .enhancedConnectionComplete where body.count == 31:
            let enhanced = kind == .enhancedConnectionComplete
            // Enhanced inserts the local and peer resolvable private addresses (12 bytes) before the interval.
            let timing = start + 11 + (enhanced ? 12 : 0)
            let complete = ConnectionComplete(
                status: body[start], handle: Bytes.uint16(body, start + 1) & 0x0FFF,
                role: body[start + 3] == 0 ? .central : .peripheral,
                peerAddressType: AddressType(rawValue: body[start + 4]),
                peerAddress: DeviceAddress(wire: body, at: start + 5),
                parameters: ConnectionParameters(
                    interval: Bytes.uint16(body, timing), latency: Bytes.uint16(body, timing + 2),
                    supervisionTimeout: Bytes.uint16(body, timing + 4)),
                enhanced: enhanced)
            return .connectionComplete(complete)
        case .connectionUpdateComplete where body.count == 10:
            return .connectionUpdateComplete(
                status: body[start], handle: Bytes.uint16(body, start + 1) & 0x0FFF,
                parameters: ConnectionParameters(
                    interval: Bytes.uint16(body, start + 3), latency: Bytes.uint16(body, start + 5),
                    supervisionTimeout: Bytes.uint16(body, start + 7)))
        case .remoteParameterRequest where body.count == 11:
            return .remoteParameterRequest(
                handle: Bytes.uint16(body, start) & 0x0FFF,
                ConnectionParameterRequest(
                    minimumInterval: Bytes.uint16(body, start + 2), maximumInterval: Bytes.uint16(body, start + 4),
                    latency: Bytes.uint16(body, start + 6), supervisionTimeout: Bytes.uint16(body, start + 8)))
        default:
            return nil
        }
    }
}

/// How many of a connection's ACL packets the controller has sent (and so freed its buffers for).
public struct CompletedPackets: Sendable, Hashable {
    public var handle: UInt16
    public var count: Int

    public init(handle: UInt16, count: Int) {
        self.handle = handle
        self.count = count
    }
}

/// Which side of a connection this host is.
public enum LinkRole: Sendable, Hashable {
    /// The initiator: it connected to an advertiser.
    case central
    /// The advertiser that was connected to.
    case peripheral
}

/// A connection's timing (Vol 4 Part E §7.7.65.1): interval in units of 1.25 ms, peripheral latency in connection
/// events, supervision timeout in units of 10 ms.
public struct ConnectionParameters: Sendable, Hashable {
    public var interval: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16

    public init(interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }
}

/// LE (Enhanced) Connection Complete's fields; `status` other than 0 means the connection failed (0x3E: it could
/// not be established, as to an advertiser that takes no connections).
public struct ConnectionComplete: Sendable, Hashable {
    public var status: UInt8
    public var handle: UInt16
    public var role: LinkRole
    public var peerAddressType: AddressType
    public var peerAddress: DeviceAddress
    public var parameters: ConnectionParameters
    /// Whether it came as the enhanced subevent (0x0A).
    public var enhanced: Bool
}
