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
        var start = event.startIndex
        let end = event.endIndex
        let hasPacketType: Bool
        switch framing {
        case .h4: hasPacketType = true
        case .bare: hasPacketType = false
        case .automatic: hasPacketType = start < end && event[start] == 0x04
        }
        if hasPacketType {
            guard start < end else {
                counters.record(.truncatedEvent)
                return []
            }
            guard event[start] == 0x04 else {
                counters.record(.notLEMetaEvent)
                return []
            }
            start += 1
        }
        guard end - start >= 2 else {
            counters.record(.truncatedEvent)
            return []
        }
        guard event[start] == Self.leMetaEvent else {
            counters.record(.notLEMetaEvent)
            return []
        }
        guard Int(event[start + 1]) == end - start - 2 else {
            counters.record(.lengthMismatch)
            return []
        }
        let parameters = start + 2
        guard parameters < end else {
            counters.record(.truncatedEvent)
            return []
        }
        let subevent = event[parameters]
        guard subevent == Self.advertisingReport || subevent == Self.extendedAdvertisingReport else {
            counters.record(.otherSubevent)
            return []
        }
        guard parameters + 1 < end else {
            counters.record(.truncatedEvent)
            return []
        }
        let count = Int(event[parameters + 1])
        guard count > 0 else {
            counters.record(.noReports)
            return []
        }
        let first = parameters + 2
        // First pass: the event must add up before any report is believed.
        let fault =
            subevent == Self.advertisingReport
            ? checkLegacy(event, from: first, count: count)
            : checkExtended(event, from: first, count: count)
        if let fault {
            counters.record(fault)
            return []
        }
        var reports: [AdvertisingReport] = []
        var offset = first
        for _ in 0..<count {
            let report =
                subevent == Self.advertisingReport
                ? legacyReport(event, at: &offset) : extendedReport(event, at: &offset)
            if let reason = Self.reportFault(report) {
                counters.record(reason)
            } else {
                reports.append(report)
            }
        }
        return reports
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
    static func reportFault(_ report: AdvertisingReport) -> DropReason? {
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

    /// Reads one legacy report that `checkLegacy` has already fitted: evt_type, addr_type, addr, len, data, rssi.
    func legacyReport(_ event: ArraySlice<UInt8>, at offset: inout Int) -> AdvertisingReport {
        let start = offset
        let length = Int(event[start + 8])
        let dataStart = start + 9
        offset = dataStart + length + 1
        return AdvertisingReport(
            format: .legacy,
            eventType: UInt16(event[start]),
            addressType: AddressType(rawValue: event[start + 1]),
            address: DeviceAddress(wire: event, at: start + 2),
            rssi: Int(Int8(bitPattern: event[dataStart + length])),
            data: event[dataStart..<dataStart + length]
        )
    }

    /// Reads one extended report that `checkExtended` has already fitted.
    ///
    /// Layout: event_type (2), address type, address (6), primary PHY, secondary PHY, SID, TX power, RSSI,
    /// periodic advertising interval (2), direct address type, direct address (6), data length, data.
    func extendedReport(_ event: ArraySlice<UInt8>, at offset: inout Int) -> AdvertisingReport {
        let start = offset
        let length = Int(event[start + 23])
        let dataStart = start + Self.extendedReportHeader
        offset = dataStart + length
        let txPower = Int(Int8(bitPattern: event[start + 12]))
        return AdvertisingReport(
            format: .extended,
            eventType: UInt16(event[start]) | UInt16(event[start + 1]) << 8,
            addressType: AddressType(rawValue: event[start + 2]),
            address: DeviceAddress(wire: event, at: start + 3),
            rssi: Int(Int8(bitPattern: event[start + 13])),
            txPower: txPower == 127 ? nil : txPower,
            data: event[dataStart..<dataStart + length]
        )
    }
}
