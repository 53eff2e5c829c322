import Testing
import WhereaboutsAdvertising
import WhereaboutsCore

@Suite("Decoding the real HCI events of the fixture")
struct FixtureDecodingTests {
    /// The iBeacons of the fixture, decoded by hand from the hex: test name, tag, power byte.
    static let iBeacons: [(test: String, tag: String, power: Int)] = [
        ("test_Govee_H5075_double", "ibeacon-494e5445-4c4c-495f-524f-434b535f4857-20597-62207", -62),
        ("test_Govee_H5106", "ibeacon-494e5445-4c4c-495f-524f-434b535f4857-20597-62207", 12),
        ("test_Govee_H5184", "ibeacon-494e5445-4c4c-49f5-f24f-43fb535f4857-20597-62207", 12),
        ("test_Govee_H5198", "ibeacon-494e5445-4c4c-495f-524f-434b535f4857-20597-62207", 12),
        ("test_holyiot_temperature", "ibeacon-9976aed5-f58c-49af-85eb-d0ac7281e3f6-10011-19641", 36),
        ("test_holyiot_pressure", "ibeacon-9976aed5-f58c-49af-85eb-d0ac7281e3f6-10011-19641", 36),
        ("test_holyiot_humidity", "ibeacon-9976aed5-f58c-49af-85eb-d0ac7281e3f6-10011-19641", 36),
        ("test_holyiot_vibration", "ibeacon-9976aed5-f58c-49af-85eb-d0ac7281e3f6-10011-19641", 36),
        ("test_holyiot_side", "ibeacon-9976aed5-f58c-49af-85eb-d0ac7281e3f6-10011-19641", 36),
        ("test_holyiot_button", "ibeacon-9976aed5-f58c-49af-85eb-d0ac7281e3f6-10011-19641", 36),
        ("test_ibeacon_sensor", "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-100-0", -59),
        ("test_jaalee_jht_skipping_ibeacon", "ibeacon-ebefd083-70a2-47c8-9837-e7b5634df525-29728-22810", -53),
        ("test_jaalee_jht_api_example", "ibeacon-ebefd083-70a2-47c8-9837-e7b5634df525-25986-15642", -52),
        ("test_jaalee_jht_f51c", "ibeacon-ebefd083-70a2-47c8-9837-e7b5634df525-25390-21813", -52),
        ("test_teltonika_eye", "ibeacon-ffffffff-0b8c-4045-10c6-55aab636ebef-47984-85", 2),
        ("test_tilt_red", "ibeacon-a495bb10-c5b1-4b44-b512-1370f02d74de-68-1016", -59),
    ]

    /// A parser that also reads the events test authors stitched past 31 bytes, to cross-check all of them.
    static let lenient = HCIEventParser(maximumLegacyDataLength: 251)

    @Test("the fixture is all there: 287 events, 277 legacy and 10 extended")
    func fixtureLoads() {
        #expect(FixtureEvent.all.count == 287)
        #expect(FixtureEvent.all.filter { $0.subevent == 2 }.count == 277)
        #expect(FixtureEvent.all.filter { $0.subevent == 13 }.count == 10)
    }

    @Test("every event's address, type, event type, RSSI and AD bytes match the independent decoding")
    func crossCheck() throws {
        for event in FixtureEvent.all {
            var counters = DropCounters()
            let reports = Self.lenient.reports(in: event.bytes, framing: .h4, counters: &counters)
            #expect(counters.total == 0, "\(event.testDescription): \(counters)")
            try #require(reports.count == event.reports.count, "\(event.testDescription)")
            for (report, expected) in zip(reports, event.reports) {
                #expect(report.address == DeviceAddress(expected.address), "\(event.testDescription)")
                #expect(report.addressType.rawValue == expected.addressType, "\(event.testDescription)")
                #expect(report.eventType == expected.eventType, "\(event.testDescription)")
                #expect(report.rssi == expected.rssi, "\(event.testDescription)")
                #expect(Array(report.data) == expected.data, "\(event.testDescription)")
                #expect(report.format == (event.subevent == 2 ? .legacy : .extended))
            }
        }
    }

    @Test("with the specification's 31-byte limit, exactly the 24 stitched legacy events are dropped, and counted")
    func strictLegacyLimit() {
        var counters = DropCounters()
        var kept = 0
        for event in FixtureEvent.all {
            kept += HCIEventParser().reports(in: event.bytes, counters: &counters).count
        }
        let stitched = FixtureEvent.all.filter { $0.subevent == 2 && $0.reports.contains { $0.data.count > 31 } }
        #expect(stitched.count == 24)
        #expect(counters[.legacyDataTooLong] == 24)
        #expect(counters.total == 24)
        #expect(kept == 287 - 24)
    }

    @Test("the same events parse with or without the H4 packet-type byte")
    func framing() {
        for event in FixtureEvent.all {
            var counters = DropCounters()
            let h4 = Self.lenient.reports(in: event.bytes, framing: .h4, counters: &counters)
            let bare = Self.lenient.reports(in: Array(event.bytes.dropFirst()), framing: .bare, counters: &counters)
            let automatic = Self.lenient.reports(in: event.bytes, counters: &counters)
            #expect(h4.map(\.address) == bare.map(\.address))
            #expect(h4.map { Array($0.data) } == bare.map { Array($0.data) })
            #expect(h4 == automatic)
            #expect(counters.total == 0)
        }
    }

    @Test("every iBeacon decodes to its UUID, major, minor and measured power", arguments: iBeacons)
    func iBeacon(test: String, tag: String, power: Int) throws {
        let event = try #require(FixtureEvent.named(test))
        var decoder = SightingDecoder(
            filter: SightingFilter(constraints: [], selectsAllBeacons: true),
            parser: Self.lenient
        )
        let sightings = decoder.sightings(in: event.bytes, time: 12.5)
        let sighting = try #require(sightings.first)
        #expect(sightings.count == 1)
        #expect(sighting.tag.description == tag)
        #expect(sighting.tag == TagIdentity(tag))
        #expect(sighting.rssi == event.reports[0].rssi)
        #expect(sighting.address == DeviceAddress(event.reports[0].address))
        #expect(sighting.time == 12.5)
        // Only calibrated-looking powers are passed on; vendors' positive bytes are not a 1 m RSSI.
        #expect(sighting.measuredPower == (power < -20 ? power : nil))
        var counters = DropCounters()
        let frames = try #require(BeaconFrame.frames(in: event.reports[0].data, counters: &counters))
        guard case .iBeacon(_, _, _, let measuredPower) = try #require(frames.first) else {
            Issue.record("not an iBeacon frame")
            return
        }
        #expect(measuredPower == power)
    }

    @Test("the site's iBeacon e2c56db5-… major 100 minor 0 at −59 dBm passes the default site filter")
    func siteBeacon() throws {
        let event = try #require(FixtureEvent.named("test_ibeacon_sensor"))
        let site = try #require(BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        var decoder = SightingDecoder(filter: SightingFilter(siteUUID: site))
        let sighting = try #require(decoder.sightings(in: event.bytes).first)
        #expect(sighting.tag == .iBeacon(uuid: site, major: 100, minor: 0))
        #expect(sighting.measuredPower == -59)
        #expect(sighting.rssi == -77)
        #expect(sighting.address.description == "6A:6B:C9:A2:3E:43")
        #expect(sighting.addressType == .randomDevice)
        #expect(sighting.telemetry == nil)
    }

    @Test("the AltBeacon decodes to its id, reference RSSI and manufacturer")
    func altBeacon() throws {
        let event = try #require(FixtureEvent.named("test_altbeacon_sensor"))
        var decoder = SightingDecoder(filter: SightingFilter(constraints: [], selectsAllBeacons: true))
        let sightings = decoder.sightings(in: event.bytes)
        #expect(sightings.map(\.tag.description) == ["altbeacon-d3162f5a-f3ee-4947-99db-09756062d0fc-90-5"])
        #expect(sightings.first?.measuredPower == -60)
        #expect(sightings.first?.rssi == -44)
        var counters = DropCounters()
        let frames = BeaconFrame.frames(in: event.reports[0].data, counters: &counters)
        guard case .altBeacon(_, _, _, let reference, let manufacturer) = frames?.first else {
            Issue.record("not an AltBeacon frame")
            return
        }
        #expect(reference == -60)
        #expect(manufacturer == 0xFFFF)
    }

    @Test("adverts that are not beacons yield nothing, even when every beacon is wanted")
    func nonBeacons() {
        var decoder = SightingDecoder(
            filter: SightingFilter(constraints: [], selectsAllBeacons: true),
            parser: Self.lenient
        )
        var beaconEvents = 0
        for event in FixtureEvent.all {
            let sightings = decoder.sightings(in: event.bytes)
            let isBeacon = event.kinds.contains("ibeacon") || event.kinds.contains("altbeacon")
            #expect(sightings.count == (isBeacon ? 1 : 0), "\(event.testDescription)")
            if isBeacon { beaconEvents += 1 }
        }
        #expect(beaconEvents == 17)
        // Two reports have AD structures that run past their data, two have bytes after a zero length (both
        // stitched by test authors); they are counted, not decoded.
        #expect(decoder.counters[.adStructureOverrun] == 2)
        #expect(decoder.counters[.adZeroLength] == 2)
        #expect(decoder.counters[.noBeacon] == 287 - 17 - 4, "\(decoder.counters)")
    }

    @Test(
        "Apple adverts that are not iBeacons are never taken for one",
        arguments: [
            "test_ibeacon_iphone_ble_packet_var_1", "test_ibeacon_iphone_ble_packet_var_2",
        ])
    func appleNonIBeacon(test: String) throws {
        let event = try #require(FixtureEvent.named(test))
        var counters = DropCounters()
        let frames = try #require(BeaconFrame.frames(in: event.reports[0].data, counters: &counters))
        #expect(frames.isEmpty)
        #expect(counters.total == 0)
        var decoder = SightingDecoder(filter: SightingFilter(constraints: [], selectsAllBeacons: true))
        #expect(decoder.sightings(in: event.bytes).isEmpty)
        #expect(decoder.counters[.noBeacon] == 1)
    }

    @Test(
        "Eddystone-URL and vendor 0x21 frames name no tag",
        arguments: [
            "test_ruuvitag_v2", "test_ruuvitag_v4", "test_kkm_k6", "test_kkm_k6_neg_temp",
        ])
    func eddystoneWithoutIdentity(test: String) throws {
        let event = try #require(FixtureEvent.named(test))
        var counters = DropCounters()
        let frames = try #require(BeaconFrame.frames(in: event.reports[0].data, counters: &counters))
        #expect(frames.isEmpty)
    }

    @Test("a configured public address is tracked by address when its advert names no beacon")
    func configuredAddress() throws {
        let event = try #require(FixtureEvent.named("test_air_mentor_pro_2_set_1"))
        let address = try #require(DeviceAddress("54:48:E6:8F:80:A7"))
        var decoder = SightingDecoder(filter: SightingFilter(constraints: [], addresses: [address]))
        let sightings = decoder.sightings(in: event.bytes)
        #expect(sightings.map(\.tag.description) == ["mac-5448e68f80a7"])
        #expect(sightings.first?.measuredPower == nil)
        #expect(sightings.first?.addressType == .publicDevice)
    }
}
