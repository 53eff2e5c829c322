/// Why an event, a report or an AD structure produced no sighting.
///
/// Reasons marked malformed mean the bytes broke the format; the others are ordinary traffic that is not ours to
/// publish (other events, weak signals, beacons outside the identity constraints).
public enum DropReason: Int, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    // MARK: Whole events

    /// Not an HCI event, or an event other than LE Meta (0x3E). Not malformed: the socket filter lets others by.
    case notLEMetaEvent
    /// An LE Meta event other than an advertising report (0x02) or extended advertising report (0x0D).
    case otherSubevent
    /// Too few bytes for the event header, the subevent code or the report count.
    case truncatedEvent
    /// The parameter length byte disagrees with the number of bytes present.
    case lengthMismatch
    /// The report count is zero.
    case noReports
    /// A report, or its data, runs past the end of the event (the report count lied or a data length did).
    case reportOverrun
    /// The reports end before the event does.
    case trailingBytes
    /// A legacy report claims more than 31 bytes of advertising data.
    case legacyDataTooLong

    // MARK: Single reports

    /// The controller could not measure the RSSI (the value 127).
    case rssiUnavailable
    /// An RSSI above +20 dBm, which no receiver reports for a real signal.
    case rssiImplausible
    /// An extended report whose data is incomplete or truncated; fragments are not reassembled.
    case incompleteData
    /// An AD structure's length runs past the end of the advertising data.
    case adStructureOverrun
    /// A zero-length AD structure followed by bytes that are not zero padding.
    case adZeroLength

    // MARK: Single AD structures

    /// Manufacturer-specific data shorter than its 2-byte company identifier.
    case shortManufacturerData
    /// Apple data announcing an iBeacon (type 0x02) without all 21 iBeacon bytes.
    case truncatedIBeacon
    /// An AltBeacon or Eddystone frame shorter than its format.
    case truncatedBeaconFrame

    // MARK: Filtering

    /// A report below the filter's RSSI floor.
    case belowRSSIFloor
    /// A beacon outside the identity constraints, from an address that is not configured.
    case notSelected
    /// A report with no beacon in it, from an address that is not configured.
    case noBeacon

    /// Whether the bytes broke the format, as opposed to being traffic we do not publish.
    public var isMalformed: Bool {
        switch self {
        case .notLEMetaEvent, .otherSubevent, .rssiUnavailable, .incompleteData, .belowRSSIFloor, .notSelected,
            .noBeacon:
            false
        default: true
        }
    }

    public var description: String {
        switch self {
        case .notLEMetaEvent: "not-le-meta-event"
        case .otherSubevent: "other-subevent"
        case .truncatedEvent: "truncated-event"
        case .lengthMismatch: "length-mismatch"
        case .noReports: "no-reports"
        case .reportOverrun: "report-overrun"
        case .trailingBytes: "trailing-bytes"
        case .legacyDataTooLong: "legacy-data-too-long"
        case .rssiUnavailable: "rssi-unavailable"
        case .rssiImplausible: "rssi-implausible"
        case .incompleteData: "incomplete-data"
        case .adStructureOverrun: "ad-structure-overrun"
        case .adZeroLength: "ad-zero-length"
        case .shortManufacturerData: "short-manufacturer-data"
        case .truncatedIBeacon: "truncated-ibeacon"
        case .truncatedBeaconFrame: "truncated-beacon-frame"
        case .belowRSSIFloor: "below-rssi-floor"
        case .notSelected: "not-selected"
        case .noBeacon: "no-beacon"
        }
    }
}

/// How many events, reports and AD structures were dropped, by reason, so the agent can report them.
public struct DropCounters: Sendable, Hashable, CustomStringConvertible {
    private var counts: [Int]

    /// All counts zero.
    public init() {
        counts = Array(repeating: 0, count: DropReason.allCases.count)
    }

    /// The count for one reason.
    public subscript(reason: DropReason) -> Int {
        counts[reason.rawValue]
    }

    /// Counts one more drop for a reason.
    public mutating func record(_ reason: DropReason) {
        counts[reason.rawValue] &+= 1
    }

    /// Adds another set of counts to this one.
    public mutating func add(_ other: DropCounters) {
        for index in counts.indices { counts[index] &+= other.counts[index] }
    }

    /// Drops whose bytes broke the format.
    public var malformed: Int {
        DropReason.allCases.reduce(0) { $1.isMalformed ? $0 &+ counts[$1.rawValue] : $0 }
    }

    /// All drops.
    public var total: Int { counts.reduce(0, &+) }

    /// The reasons with a non-zero count, in declaration order.
    public var nonZero: [(reason: DropReason, count: Int)] {
        DropReason.allCases.compactMap { counts[$0.rawValue] == 0 ? nil : ($0, counts[$0.rawValue]) }
    }

    /// `reason=count` pairs for the non-zero counts, space separated; empty when nothing was dropped.
    public var description: String {
        nonZero.map { "\($0.reason)=\($0.count)" }.joined(separator: " ")
    }
}
