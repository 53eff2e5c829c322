import Testing
import WhereaboutsAdvertising

/// Named malformed inputs (reliability.md §7 P3 and the list): each is dropped without a crash, and the
/// reason is counted.
@Suite("Malformed HCI events are dropped and counted")
struct MalformedEventTests {
    /// Runs the whole decoder with every beacon wanted; returns sightings and counters.
    func decode(_ event: [UInt8]) -> ([BeaconSighting], DropCounters) {
        var decoder = SightingDecoder(filter: SightingFilter(constraints: [], selectsAllBeacons: true))
        let sightings = decoder.sightings(in: event)
        return (sightings, decoder.counters)
    }

    /// Expects no sighting and exactly one drop, for `reason`.
    func expectDropped(
        _ event: [UInt8],
        _ reason: DropReason,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let (sightings, counters) = decode(event)
        #expect(sightings.isEmpty, sourceLocation: sourceLocation)
        #expect(counters[reason] == 1, "counted: \(counters)", sourceLocation: sourceLocation)
        #expect(counters.total == 1, "counted: \(counters)", sourceLocation: sourceLocation)
    }

    let good = EventBuilder.event(reports: [EventBuilder.legacyReport(data: EventBuilder.iBeacon)])

    @Test("the well-formed control event gives one sighting and no drops")
    func control() {
        let (sightings, counters) = decode(good)
        #expect(sightings.count == 1)
        #expect(counters.total == 0)
    }

    @Test("a parameter length one more or one less than the bytes present", arguments: [-1, 1, 100, -10])
    func parameterLengthLies(adjustment: Int) {
        expectDropped(
            EventBuilder.event(
                reports: [EventBuilder.legacyReport(data: EventBuilder.iBeacon)], plenAdjustment: adjustment),
            .lengthMismatch)
    }

    @Test(
        "events too short for their header, subevent or report count",
        arguments: [
            [], [0x04], [0x04, 0x3E], [0x3E], [0x04, 0x3E, 0x00], [0x04, 0x3E, 0x01, 0x02],
        ] as [[UInt8]])
    func truncatedHeader(event: [UInt8]) {
        expectDropped(event, .truncatedEvent)
    }

    @Test("a report count of zero")
    func zeroReports() {
        expectDropped([0x04, 0x3E, 0x02, 0x02, 0x00], .noReports)
    }

    @Test("a report count larger than the reports present", arguments: [2, 25, 26, 255] as [UInt8])
    func reportCountLies(count: UInt8) {
        let event = EventBuilder.event(count: count, reports: [EventBuilder.legacyReport(data: EventBuilder.iBeacon)])
        expectDropped(event, .reportOverrun)
    }

    @Test("a legacy data length longer than the data present")
    func legacyDataLengthLies() {
        let report = EventBuilder.legacyReport(data: [0x02, 0x01, 0x06], lengthByte: 20)
        expectDropped(EventBuilder.event(reports: [report]), .reportOverrun)
    }

    @Test("legacy data lengths of 32 and 255, over the 31-byte limit", arguments: [32, 255])
    func legacyDataTooLong(length: Int) {
        // 255 bytes cannot fit an event at all, so that length byte lies about 40 bytes; the limit is checked first.
        let present = min(length, 40)
        let data = [UInt8(present - 1), 0x09] + Array(repeating: 0x41, count: present - 2)
        let report = EventBuilder.legacyReport(data: data, lengthByte: UInt8(length))
        expectDropped(EventBuilder.event(reports: [report]), .legacyDataTooLong)
    }

    @Test("reports that end before the event does")
    func trailingBytes() {
        let event = EventBuilder.event(
            count: 1, reports: [EventBuilder.legacyReport(data: EventBuilder.iBeacon), [0x00]])
        expectDropped(event, .trailingBytes)
    }

    @Test("an extended data length that overruns into the next report")
    func extendedOverrunIntoNext() {
        let second = EventBuilder.extendedReport(data: EventBuilder.iBeacon)
        let first = EventBuilder.extendedReport(data: [0x02, 0x01, 0x06], lengthByte: UInt8(3 + second.count))
        expectDropped(EventBuilder.event(subevent: 0x0D, reports: [first, second]), .reportOverrun)
    }

    @Test("an extended data length past the end of the event", arguments: [40, 200, 255] as [UInt8])
    func extendedOverrun(length: UInt8) {
        let report = EventBuilder.extendedReport(data: EventBuilder.iBeacon, lengthByte: length)
        expectDropped(EventBuilder.event(subevent: 0x0D, reports: [report]), .reportOverrun)
    }

    @Test("an extended report cut inside its 24-byte header")
    func extendedHeaderCut() {
        let report = Array(EventBuilder.extendedReport(data: []).prefix(20))
        expectDropped(EventBuilder.event(subevent: 0x0D, reports: [report]), .reportOverrun)
    }

    @Test("two extended reports in one event both decode")
    func twoExtendedReports() {
        let other: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0xC6]
        let event = EventBuilder.event(
            subevent: 0x0D,
            reports: [
                EventBuilder.extendedReport(data: EventBuilder.iBeacon, rssi: -50),
                EventBuilder.extendedReport(data: EventBuilder.eddystoneUID, rssi: -65, address: other, txPower: -4),
            ]
        )
        var counters = DropCounters()
        let reports = HCIEventParser().reports(in: event, counters: &counters)
        #expect(reports.map(\.rssi) == [-50, -65])
        #expect(reports.map(\.txPower) == [nil, -4])
        #expect(reports.last?.address.description == "C6:55:44:33:22:11")
        let (sightings, dropped) = decode(event)
        #expect(sightings.count == 2)
        #expect(dropped.total == 0)
    }

    @Test(
        "extended reports whose data is incomplete or truncated, even with length 0",
        arguments: [
            0x0033, 0x0053, 0x0073,
        ] as [UInt16])
    func incompleteData(eventType: UInt16) {
        for data in [[], EventBuilder.iBeacon] {
            let report = EventBuilder.extendedReport(data: data, eventType: eventType)
            expectDropped(EventBuilder.event(subevent: 0x0D, reports: [report]), .incompleteData)
        }
    }

    @Test("an unavailable RSSI (127) and an implausible one (+21 dBm)")
    func rssi() {
        let unavailable = EventBuilder.legacyReport(data: EventBuilder.iBeacon, rssi: 127)
        expectDropped(EventBuilder.event(reports: [unavailable]), .rssiUnavailable)
        let extended = EventBuilder.extendedReport(data: EventBuilder.iBeacon, rssi: 127)
        expectDropped(EventBuilder.event(subevent: 0x0D, reports: [extended]), .rssiUnavailable)
        let implausible = EventBuilder.legacyReport(data: EventBuilder.iBeacon, rssi: 21)
        expectDropped(EventBuilder.event(reports: [implausible]), .rssiImplausible)
    }

    @Test("one bad report among good ones is skipped alone")
    func mixedReports() {
        let event = EventBuilder.event(reports: [
            EventBuilder.legacyReport(data: EventBuilder.iBeacon, rssi: 127),
            EventBuilder.legacyReport(data: EventBuilder.iBeacon, rssi: -40),
        ])
        let (sightings, counters) = decode(event)
        #expect(sightings.map(\.rssi) == [-40])
        #expect(counters[.rssiUnavailable] == 1)
    }

    @Test("other LE Meta subevents, other events and other packet types are ignored, not malformed")
    func otherEvents() {
        expectDropped(EventBuilder.event(subevent: 0x0B, reports: [Array(repeating: 0, count: 16)]), .otherSubevent)
        expectDropped(EventBuilder.event(subevent: 0x01, reports: [Array(repeating: 0, count: 17)]), .otherSubevent)
        expectDropped([0x04, 0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00], .notLEMetaEvent)
        var counters = DropCounters()
        _ = HCIEventParser().reports(in: [0x02, 0x3E, 0x00], framing: .h4, counters: &counters)
        #expect(counters[.notLEMetaEvent] == 1)
        #expect(counters.malformed == 0)
    }

    @Test("an AD structure that claims more bytes than remain")
    func adOverrun() {
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x1F, 0xFF, 0x4C, 0x00]
        expectDropped(EventBuilder.event(reports: [EventBuilder.legacyReport(data: data)]), .adStructureOverrun)
    }

    @Test("a single trailing AD length byte")
    func adTrailingByte() {
        expectDropped(
            EventBuilder.event(reports: [EventBuilder.legacyReport(data: EventBuilder.iBeacon + [0x05])]),
            .adStructureOverrun
        )
    }

    @Test("a zero-length AD structure mid-data followed by more structures")
    func adZeroLengthMidData() {
        let data = [0x02, 0x01, 0x06, 0x00] + EventBuilder.iBeacon.prefix(27)
        expectDropped(EventBuilder.event(reports: [EventBuilder.legacyReport(data: Array(data))]), .adZeroLength)
    }

    @Test("zero padding after the significant part is accepted")
    func adZeroPadding() {
        let data = EventBuilder.iBeacon + [0x00, 0x00, 0x00]
        let (sightings, counters) = decode(EventBuilder.event(reports: [EventBuilder.legacyReport(data: data)]))
        #expect(sightings.count == 1)
        #expect(counters.total == 0)
    }

    @Test(
        "manufacturer data of 0 or 1 bytes, too short for a company id",
        arguments: [
            [0x01, 0xFF], [0x02, 0xFF, 0x4C],
        ] as [[UInt8]])
    func shortManufacturerData(structure: [UInt8]) {
        let (sightings, counters) = decode(EventBuilder.event(reports: [EventBuilder.legacyReport(data: structure)]))
        #expect(sightings.isEmpty)
        #expect(counters[.shortManufacturerData] == 1)
        #expect(counters[.noBeacon] == 1)
    }

    @Test("Apple manufacturer data of just the company id yields nothing")
    func appleCompanyOnly() {
        let (sightings, counters) = decode(
            EventBuilder.event(reports: [EventBuilder.legacyReport(data: [0x03, 0xFF, 0x4C, 0x00])]))
        #expect(sightings.isEmpty)
        #expect(counters[.noBeacon] == 1)
        #expect(counters.malformed == 0)
    }

    @Test(
        "an iBeacon with 20 of its 21 bytes, or a wrong length byte",
        arguments: [
            [0x19] + Array(EventBuilder.iBeacon[1..<26]),
            [0x05, 0xFF, 0x4C, 0x00, 0x02, 0x14],
            [0x04, 0xFF, 0x4C, 0x00, 0x02],
        ])
    func truncatedIBeacon(structure: [UInt8]) {
        let (sightings, counters) = decode(EventBuilder.event(reports: [EventBuilder.legacyReport(data: structure)]))
        #expect(sightings.isEmpty)
        #expect(counters[.truncatedIBeacon] == 1)
    }

    @Test(
        "truncated AltBeacon and Eddystone frames",
        arguments: [
            hex("1affffffbeac d3162f5af3ee494799db09756062d0fc005a0005c4"),
            hex("0416aafe00"),
            hex("0e16aafe00ee000102030405060708"),
            hex("0916aafe2000 0bb81780"),
            hex("0316aafe"),
        ])
    func truncatedFrames(structure: [UInt8]) {
        let (sightings, counters) = decode(EventBuilder.event(reports: [EventBuilder.legacyReport(data: structure)]))
        #expect(sightings.isEmpty)
        #expect(counters[.truncatedBeaconFrame] == 1)
    }

    @Test("a 227-byte name, the longest one report can hold, without a terminating NUL")
    func longName() {
        let data = [228, 0x09] + Array(repeating: UInt8(ascii: "x"), count: 227)
        let (sightings, counters) = decode(
            EventBuilder.event(subevent: 0x0D, reports: [EventBuilder.extendedReport(data: data)]))
        #expect(sightings.isEmpty)
        #expect(counters[.noBeacon] == 1)
        #expect(counters.malformed == 0)
    }

    @Test("ten duplicate flags structures and seven copies of one iBeacon give one sighting")
    func duplicateStructures() {
        var data: [UInt8] = []
        for _ in 0..<10 { data += [0x02, 0x01, 0x06] }
        for _ in 0..<7 { data += EventBuilder.iBeacon }
        let event = EventBuilder.event(subevent: 0x0D, reports: [EventBuilder.extendedReport(data: data)])
        let (sightings, counters) = decode(event)
        #expect(sightings.count == 1)
        #expect(counters.total == 0)
    }
}
