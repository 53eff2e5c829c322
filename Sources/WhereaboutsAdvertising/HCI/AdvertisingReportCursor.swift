/// The reports of one event that ``HCIEventParser`` has checked as a whole, read one at a time.
///
/// Reading reports this way builds no array, and each report comes as ``AdvertisingReportFields``, plain values
/// with the data as a range of the event: the agent decodes every event it hears, and an array of reports per
/// event, each holding a reference-counted slice, was most of what decoding cost.
struct AdvertisingReportCursor {
    /// Which subevent carried the reports.
    private let format: AdvertisingReport.Format
    /// Where the next report starts.
    private var offset: Int
    /// How many reports are left to read.
    private var remaining: Int

    /// A cursor with no reports, for an event that was dropped.
    init() {
        format = .legacy
        offset = 0
        remaining = 0
    }

    /// A cursor over `count` reports from `first`, which the parser has fitted into the event.
    init(format: AdvertisingReport.Format, first: Int, count: Int) {
        self.format = format
        self.offset = first
        self.remaining = count
    }

    /// The next report in `event`, the event the parser checked, usable or not; nil after the last.
    mutating func next(in event: ArraySlice<UInt8>) -> AdvertisingReportFields? {
        guard remaining > 0 else { return nil }
        remaining -= 1
        return format == .legacy ? Self.legacyReport(event, at: &offset) : Self.extendedReport(event, at: &offset)
    }

    /// Reads one legacy report that the parser has already fitted: evt_type, addr_type, addr, len, data, rssi.
    static func legacyReport(_ event: ArraySlice<UInt8>, at offset: inout Int) -> AdvertisingReportFields {
        let start = offset
        let length = Int(event[start + 8])
        let dataStart = start + 9
        offset = dataStart + length + 1
        return AdvertisingReportFields(
            format: .legacy,
            eventType: UInt16(event[start]),
            addressType: AddressType(rawValue: event[start + 1]),
            address: DeviceAddress(wire: event, at: start + 2),
            rssi: Int(Int8(bitPattern: event[dataStart + length])),
            txPower: nil,
            data: dataStart..<dataStart + length
        )
    }

    /// Reads one extended report that the parser has already fitted.
    ///
    /// Layout: event_type (2), address type, address (6), primary PHY, secondary PHY, SID, TX power, RSSI,
    /// periodic advertising interval (2), direct address type, direct address (6), data length, data.
    static func extendedReport(_ event: ArraySlice<UInt8>, at offset: inout Int) -> AdvertisingReportFields {
        let start = offset
        let length = Int(event[start + 23])
        let dataStart = start + HCIEventParser.extendedReportHeader
        offset = dataStart + length
        let txPower = Int(Int8(bitPattern: event[start + 12]))
        return AdvertisingReportFields(
            format: .extended,
            eventType: UInt16(event[start]) | UInt16(event[start + 1]) << 8,
            addressType: AddressType(rawValue: event[start + 2]),
            address: DeviceAddress(wire: event, at: start + 3),
            rssi: Int(Int8(bitPattern: event[start + 13])),
            txPower: txPower == 127 ? nil : txPower,
            data: dataStart..<dataStart + length
        )
    }
}

/// An ``AdvertisingReport``'s fields with its data as a range of indices into the bytes it was read from.
///
/// Nothing in it is reference-counted, so the decoder copies and drops it for free.
struct AdvertisingReportFields {
    /// Which HCI event carried the report.
    var format: AdvertisingReport.Format
    /// The event type, as in ``AdvertisingReport/eventType``.
    var eventType: UInt16
    /// The kind of address.
    var addressType: AddressType
    /// The advertiser's address.
    var address: DeviceAddress
    /// Received signal strength, dBm.
    var rssi: Int
    /// The advertiser's transmit power in dBm, when an extended report carries it.
    var txPower: Int?
    /// Where the advertising data lies in the bytes the report was read from.
    var data: Range<Int>

    /// The data status, as in ``AdvertisingReport/dataStatus``.
    var dataStatus: UInt8 {
        AdvertisingReport.dataStatus(format: format, eventType: eventType)
    }
}

// In an extension, so that the struct keeps its memberwise initializer, which the cursor's readers use.
extension AdvertisingReportFields {
    /// The fields of a report, whose data lies in its own `data`.
    init(_ report: AdvertisingReport) {
        self.init(
            format: report.format,
            eventType: report.eventType,
            addressType: report.addressType,
            address: report.address,
            rssi: report.rssi,
            txPower: report.txPower,
            data: report.data.indices
        )
    }
}
