/// Which HCI events are about connections, by event code and LE subevent (Bluetooth Core Vol 4 Part E §7.7): the
/// one list of them. The host routes these to the task that drives connections instead of the scan, and the link
/// layer reads them (WhereaboutsGATT's `LinkEvent`) and counts one that does not add up as malformed.
///
/// Only the codes are read here; whether the event's lengths add up is the reader's business.
public enum LinkEventKind: Sendable, Hashable, CaseIterable {
    /// Disconnection Complete (0x05).
    case disconnectionComplete
    /// Number of Completed Packets (0x13).
    case completedPackets
    /// LE Connection Complete (LE Meta 0x3E, subevent 0x01).
    case connectionComplete
    /// LE Connection Update Complete (subevent 0x03).
    case connectionUpdateComplete
    /// LE Remote Connection Parameter Request (subevent 0x06).
    case remoteParameterRequest
    /// LE Enhanced Connection Complete (subevent 0x0A).
    case enhancedConnectionComplete

    /// The kind of an H4 event packet (type 0x04, event code, parameter length, parameters); nil for an event that
    /// is not about connections (advertising reports, command answers, …) or too short to have a code or subevent.
    public init?(packet: [UInt8]) {
        guard packet.count >= 2, packet[0] == 0x04 else { return nil }
        switch packet[1] {
        case 0x05: self = .disconnectionComplete
        case 0x13: self = .completedPackets
        case 0x3E where packet.count >= 4:
            switch packet[3] {
            case 0x01: self = .connectionComplete
            case 0x03: self = .connectionUpdateComplete
            case 0x06: self = .remoteParameterRequest
            case 0x0A: self = .enhancedConnectionComplete
            default: return nil
            }
        default: return nil
        }
    }
}
