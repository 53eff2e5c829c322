import Testing
import WhereaboutsAdvertising
import WhereaboutsCore

@Suite("Beacon formats, telemetry and the sighting filter")
struct SightingTests {
    static let site = BeaconUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0")
    static let eddystoneTag = TagIdentity("eddystone-00010203040506070809-a0a1a2a3a4a5")

    func event(
        _ data: [UInt8],
        rssi: Int8 = -60,
        address: [UInt8] = EventBuilder.address,
        addressType: UInt8 = 0x01
    ) -> [UInt8] {
        if data.count > 31 {
            let report = EventBuilder.extendedReport(data: data, rssi: rssi, address: address, addressType: addressType)
            return EventBuilder.event(subevent: 0x0D, reports: [report])
        }
        let report = EventBuilder.legacyReport(data: data, rssi: rssi, address: address, addressType: addressType)
        return EventBuilder.event(reports: [report])
    }

    @Test("an Eddystone-UID frame decodes to namespace and instance, its 0 m power moved to 1 m")
    func eddystoneUID() throws {
        let tag = try #require(Self.eddystoneTag)
        var decoder = SightingDecoder(filter: SightingFilter(constraints: [], namedTags: [tag]))
        let sighting = try #require(decoder.sightings(in: event(EventBuilder.eddystoneUID)).first)
        #expect(sighting.tag == tag)
        #expect(sighting.measuredPower == -18 - 41)
        #expect(sighting.telemetry == nil)
    }

    @Test("Eddystone tags are published only when named, since they carry no UUID")
    func eddystoneNeedsNaming() throws {
        let site = try #require(Self.site)
        var decoder = SightingDecoder(filter: SightingFilter(siteUUID: site))
        #expect(decoder.sightings(in: event(EventBuilder.eddystoneUID)).isEmpty)
        #expect(decoder.counters[.notSelected] == 1)
    }

    @Test("Eddystone-TLM telemetry is kept per address and attached to that address's later sightings")
    func telemetry() throws {
        let tag = try #require(Self.eddystoneTag)
        var decoder = SightingDecoder(filter: SightingFilter(constraints: [], namedTags: [tag]))
        let other: [UInt8] = [1, 2, 3, 4, 5, 0xC0]
        // TLM alone names no tag, so it publishes nothing.
        #expect(decoder.sightings(in: event(EventBuilder.eddystoneTLM)).isEmpty)
        let sighting = try #require(decoder.sightings(in: event(EventBuilder.eddystoneUID)).first)
        #expect(sighting.telemetry == BeaconTelemetry(batteryMillivolts: 3000, temperatureCelsius: 23.5))
        let stranger = try #require(decoder.sightings(in: event(EventBuilder.eddystoneUID, address: other)).first)
        #expect(stranger.telemetry == nil)
        // Both frames in one advert work too.
        var fresh = SightingDecoder(filter: SightingFilter(constraints: [], namedTags: [tag]))
        let both = fresh.sightings(in: event(EventBuilder.eddystoneTLM + EventBuilder.eddystoneUID))
        #expect(both.first?.telemetry?.batteryMillivolts == 3000)
    }

    @Test("TLM fields marked unsupported are nil; a negative temperature keeps its sign")
    func telemetryValues() {
        var counters = DropCounters()
        let negative = hex("1116aafe2000 0000 fd80 0000000000000000")
        #expect(
            BeaconFrame.frames(in: negative, counters: &counters)
                == [.eddystoneTLM(BeaconTelemetry(batteryMillivolts: nil, temperatureCelsius: -2.5))]
        )
        let nothing = hex("1116aafe2000 0000 8000 0000000000000000")
        #expect(BeaconFrame.frames(in: nothing, counters: &counters) == [])
        let encrypted = hex("1116aafe2001 0bb8 1780 0000000000000000")
        #expect(BeaconFrame.frames(in: encrypted, counters: &counters) == [])
        #expect(counters.total == 0)
    }

    @Test("the telemetry table stays bounded under address churn and keeps recent addresses")
    func telemetryBound() throws {
        var decoder = SightingDecoder(filter: SightingFilter(constraints: []), telemetryCapacity: 1024)
        var last: DeviceAddress?
        for index in 0..<10_000 {
            let address: [UInt8] = [UInt8(index & 0xFF), UInt8(index >> 8 & 0xFF), 0, 0, 0, 0xC0]
            _ = decoder.sightings(in: event(EventBuilder.eddystoneTLM, address: address))
            #expect(decoder.telemetryCount <= 1024)
            last = DeviceAddress(value: UInt64(0xC0) << 40 | UInt64(index >> 8 & 0xFF) << 8 | UInt64(index & 0xFF))
        }
        #expect(decoder.telemetryCount >= 512)
        let recent = try #require(last)
        #expect(decoder.telemetry(for: recent)?.batteryMillivolts == 3000)
    }

    @Test("identity constraints select by UUID, UUID and major, or UUID, major and minor")
    func constraints() throws {
        let site = try #require(Self.site)
        let other = try #require(BeaconUUID("00000000-0000-0000-0000-000000000001"))
        let cases: [(BeaconIdentityConstraint?, Bool)] = [
            (BeaconIdentityConstraint(uuid: site), true),
            (BeaconIdentityConstraint(uuid: site, major: 100, minor: nil), true),
            (BeaconIdentityConstraint(uuid: site, major: 100, minor: 0), true),
            (BeaconIdentityConstraint(uuid: site, major: 101, minor: nil), false),
            (BeaconIdentityConstraint(uuid: site, major: 100, minor: 1), false),
            (BeaconIdentityConstraint(uuid: other), false),
        ]
        for (constraint, selected) in cases {
            let constraint = try #require(constraint)
            var decoder = SightingDecoder(filter: SightingFilter(constraints: [constraint]))
            let sightings = decoder.sightings(in: event(EventBuilder.iBeacon))
            #expect(sightings.count == (selected ? 1 : 0), "\(constraint)")
            #expect(decoder.counters[.notSelected] == (selected ? 0 : 1), "\(constraint)")
        }
    }

    @Test("the RSSI floor drops weaker reports and keeps those at or above it")
    func rssiFloor() throws {
        let site = try #require(Self.site)
        var decoder = SightingDecoder(filter: SightingFilter(siteUUID: site, minimumRSSI: -80))
        #expect(decoder.sightings(in: event(EventBuilder.iBeacon, rssi: -81)).isEmpty)
        #expect(decoder.sightings(in: event(EventBuilder.iBeacon, rssi: -80)).count == 1)
        #expect(decoder.counters[.belowRSSIFloor] == 1)
    }

    @Test("devices are tracked by address only when configured, and only at stable addresses")
    func addresses() throws {
        let flags: [UInt8] = [0x02, 0x01, 0x06]
        let staticAddress = try #require(DeviceAddress("C6:31:30:30:22:6C"))
        let privateAddress = try #require(DeviceAddress("4A:31:30:30:22:6C"))
        var decoder = SightingDecoder(
            filter: SightingFilter(constraints: [], addresses: [staticAddress, privateAddress])
        )
        let heard = decoder.sightings(in: event(flags, address: staticAddress.wireBytes))
        #expect(heard.map(\.tag) == [.address(0xC631_3030_226C)])
        #expect(decoder.sightings(in: event(flags, address: privateAddress.wireBytes)).isEmpty)
        #expect(decoder.sightings(in: event(flags, address: [1, 2, 3, 4, 5, 0xC0])).isEmpty)
        #expect(decoder.counters[.noBeacon] == 2)
    }

    @Test("a selected beacon wins over its address; a beacon outside the constraints falls back to the address")
    func beaconOrAddress() throws {
        let site = try #require(Self.site)
        let address = DeviceAddress(value: 0x6A6B_C9A2_3E43)
        let known = try #require(address)
        var selecting = SightingDecoder(filter: SightingFilter(constraints: [], addresses: [known]))
        #expect(selecting.sightings(in: event(EventBuilder.iBeacon, addressType: 0)).map(\.tag) == [known.tag])
        var both = SightingDecoder(
            filter: SightingFilter(
                constraints: [BeaconIdentityConstraint(uuid: site)], addresses: [known])
        )
        #expect(
            both.sightings(in: event(EventBuilder.iBeacon, addressType: 0)).map(\.tag) == [
                .iBeacon(uuid: site, major: 100, minor: 0)
            ]
        )
    }

    @Test("counters describe themselves by reason and split malformed from ignored")
    func counters() {
        var counters = DropCounters()
        counters.record(.lengthMismatch)
        counters.record(.lengthMismatch)
        counters.record(.noBeacon)
        #expect(counters.description == "length-mismatch=2 no-beacon=1")
        #expect(counters.malformed == 2)
        #expect(counters.total == 3)
        var sum = DropCounters()
        sum.add(counters)
        sum.add(counters)
        #expect(sum[.lengthMismatch] == 4)
    }

    @Test("device addresses print and parse as AA:BB:CC:DD:EE:FF and reject anything else")
    func deviceAddress() {
        #expect(DeviceAddress("6a:6b:c9:a2:3e:43")?.description == "6A:6B:C9:A2:3E:43")
        #expect(DeviceAddress("6A:6B:C9:A2:3E")?.description == nil)
        #expect(DeviceAddress("6A:6B:C9:A2:3E:+4")?.description == nil)
        #expect(DeviceAddress(value: 1 << 48) == nil)
        #expect(DeviceAddress("01:02:03:04:05:06")?.wireBytes == [6, 5, 4, 3, 2, 1])
    }
}

@Suite("Advertising report events")
struct AdvertisingReportEventTests {
    @Test("a written legacy report reads back as the same address, RSSI and iBeacon; over 31 bytes is refused")
    func roundTrip() throws {
        let uuid = try #require(BeaconUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0"))
        let beacon = IBeaconAdvertisement(uuid: uuid, major: 3, minor: 9, measuredPower: -61)
        let address = try #require(DeviceAddress(value: 0xC0_1D_5B_00_00_07))
        let event = try #require(
            AdvertisingReportEvent.legacy(
                address: address, addressType: .randomDevice, data: beacon.advertisingData, rssi: -72))
        var decoder = SightingDecoder(filter: SightingFilter(siteUUID: uuid))
        let sightings = decoder.sightings(in: event, framing: .bare, time: 5)
        #expect(sightings.count == 1)
        #expect(sightings.first?.tag == .iBeacon(uuid: uuid, major: 3, minor: 9))
        #expect(sightings.first?.rssi == -72)
        #expect(sightings.first?.measuredPower == -61)
        #expect(sightings.first?.address == address)
        #expect(decoder.counters.total == 0)
        #expect(
            AdvertisingReportEvent.legacy(
                address: address, addressType: .randomDevice, data: [UInt8](repeating: 0, count: 32), rssi: -72) == nil)
    }
}
