/// Whether raw event bytes start with the H4 packet-type byte (0x04), as a raw HCI socket delivers them.
public enum HCIFraming: Sendable, Hashable {
    /// The first byte is the H4 packet type, which must be 0x04 (event).
    case h4
    /// The first byte is the event code, as btmon's monitor format stores events.
    case bare
    /// H4 when the first byte is 0x04, bare otherwise.
    ///
    /// Unambiguous for our purpose: a bare event starting with 0x04 would be a Connection Request, which is
    /// dropped either way.
    case automatic
}

/// Reads LE Advertising Reports (0x02) and LE Extended Advertising Reports (0x0D) out of raw HCI event bytes.
///
/// Every length is checked against the bytes that remain, and the event as a whole must add up: the parameter
/// length must equal the bytes present, every report the count announces must fit, and the reports must end
/// exactly where the event does. An event that breaks any of these is dropped whole. Nothing is allocated from
/// wire lengths, and nothing recurses. Layouts: Bluetooth Core Vol 4 Part E §7.7.65.2 and §7.7.65.13; legacy
/// reports are read one after another, as controllers send them and Linux reads them.
public struct HCIEventParser: Sendable, Hashable {
    /// The largest Data_Length accepted in a legacy report. The specification's limit is 31.
    ///
    /// Raise it only to read captures that test authors stitched together from advert and scan response.
    public var maximumLegacyDataLength: Int

    /// Makes a parser; `maximumLegacyDataLength` is clamped to 31…251.
    public init(maximumLegacyDataLength: Int = 31) {
        self.maximumLegacyDataLength = min(max(maximumLegacyDataLength, 31), 251)
    }

    /// The LE Meta event code.
    static let leMetaEvent: UInt8 = 0x3E
    /// The LE Advertising Report subevent.
    static let advertisingReport: UInt8 = 0x02
    /// The LE Extended Advertising Report subevent.
    static let extendedAdvertisingReport: UInt8 = 0x0D
    /// Bytes of a legacy report other than its data: type, address type, address, length, RSSI.
    static let legacyReportOverhead = 10
    /// Bytes of an extended report before its data.
    static let extendedReportHeader = 24

    /// The reports in one event; drops are counted by reason.
    ///
    /// Reports whose RSSI is unavailable or implausible, and extended reports with incomplete data, are skipped
    /// one by one; a structural fault drops the whole event.
    public func reports(
        in event: ArraySlice<UInt8>,
        framing: HCIFraming = .automatic,
        counters: inout DropCounters
    ) -> [AdvertisingReport] {
        var cursor = reportCursor(in: event, framing: framing, counters: &counters)
        var reports: [AdvertisingReport] = []
        while let fields = cursor.next(in: event) {
            if let reason = Self.reportFault(fields) {
                counters.record(reason)
            } else {
                reports.append(AdvertisingReport(fields, in: event))
            }
        }
        return reports
    }

    /// The reports in one event, to read one at a time without building an array; a structural fault is counted
    /// and gives a cursor with no reports.
    ///
    /// The cursor yields every report the event holds, usable or not: callers skip those with a `reportFault`.
    func reportCursor(
        in event: ArraySlice<UInt8>,
        framing: HCIFraming,
        counters: inout DropCounters
    ) -> AdvertisingReportCursor {
        var start = event.startIndex
        let end = event.endIndex
        let hasPacketType: Bool
        switch framing {
        case .h4: hasPacketType = true
        case .bare: hasPacketType = false
        case .automatic: hasPacketType = start < end && event[start] == 0x04
        }
        if hasPacketType {
            guard start < end else { return Self.dropped(.truncatedEvent, &counters) }
            guard event[start] == 0x04 else { return Self.dropped(.notLEMetaEvent, &counters) }
            start += 1
        }
        guard end - start >= 2 else { return Self.dropped(.truncatedEvent, &counters) }
        guard event[start] == Self.leMetaEvent else { return Self.dropped(.notLEMetaEvent, &counters) }
        guard Int(event[start + 1]) == end - start - 2 else { return Self.dropped(.lengthMismatch, &counters) }
        let parameters = start + 2
        guard parameters < end else { return Self.dropped(.truncatedEvent, &counters) }
        let subevent = event[parameters]
        guard subevent == Self.advertisingReport || subevent == Self.extendedAdvertisingReport else {
            return Self.dropped(.otherSubevent, &counters)
        }
        guard parameters + 1 < end else { return Self.dropped(.truncatedEvent, &counters) }
        let count = Int(event[parameters + 1])
        guard count > 0 else { return Self.dropped(.noReports, &counters) }
        let first = parameters + 2
        // The event must add up before any report is believed.
        let format: AdvertisingReport.Format = subevent == Self.advertisingReport ? .legacy : .extended
        let fault =
            format == .legacy
            ? checkLegacy(event, from: first, count: count)
            : checkExtended(event, from: first, count: count)
        if let fault { return Self.dropped(fault, &counters) }
        return AdvertisingReportCursor(format: format, first: first, count: count)
    }

    /// Counts a dropped event and gives the cursor with no reports.
    private static func dropped(_ reason: DropReason, _ counters: inout DropCounters) -> AdvertisingReportCursor {
        counters.record(reason)
        return AdvertisingReportCursor()
    }

    /// The reports in one event held in an array; see `reports(in:framing:counters:)`.
    public func reports(
        in event: [UInt8],
        framing: HCIFraming = .automatic,
        counters: inout DropCounters
    ) -> [AdvertisingReport] {
        reports(in: event[...], framing: framing, counters: &counters)
    }

    /// Why a structurally sound report is still not usable, or nil.
    static func reportFault(_ report: AdvertisingReportFields) -> DropReason? {
        if report.rssi == 127 { return .rssiUnavailable }
        if report.rssi > 20 { return .rssiImplausible }
        if report.dataStatus != 0 { return .incompleteData }
        return nil
    }

    /// Checks that `count` legacy reports fill the event exactly.
    func checkLegacy(_ event: ArraySlice<UInt8>, from first: Int, count: Int) -> DropReason? {
        let end = event.endIndex
        var offset = first
        for _ in 0..<count {
            // Type, address type and address come before the length byte.
            guard end - offset >= Self.legacyReportOverhead else { return .reportOverrun }
            let length = Int(event[offset + 8])
            guard length <= maximumLegacyDataLength else { return .legacyDataTooLong }
            guard end - offset >= Self.legacyReportOverhead + length else { return .reportOverrun }
            offset += Self.legacyReportOverhead + length
        }
        return offset == end ? nil : .trailingBytes
    }

    /// Checks that `count` extended reports fill the event exactly.
    func checkExtended(_ event: ArraySlice<UInt8>, from first: Int, count: Int) -> DropReason? {
        let end = event.endIndex
        var offset = first
        for _ in 0..<count {
            guard end - offset >= Self.extendedReportHeader else { return .reportOverrun }
            let length = Int(event[offset + 23])
            guard end - offset - Self.extendedReportHeader >= length else { return .reportOverrun }
            offset += Self.extendedReportHeader + length
        }
        return offset == end ? nil : .trailingBytes
    }
}
