import Testing
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsCore

@Suite("whereabouts-agent --check: the report it prints")
struct CheckReportTests {
    /// Return parameters btvirt's LE-only controller gave (Command Complete from offset 6), captured over its socket.
    static let version: [UInt8] = [0x00, 0x09, 0x00, 0x00, 0x09, 0xF1, 0x05, 0x00, 0x00]
    static let address: [UInt8] = [0x00, 0x42, 0x00, 0x00, 0x01, 0xAA, 0x00]
    static let features: [UInt8] = [0x00, 0x0B, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]

    static var btvirt: ControllerIdentity {
        ControllerIdentity(
            name: "h4:/tmp/bt-server-le", address: DeviceAddress(readBDAddressReturnParameters: address[...]),
            version: LocalVersion(returnParameters: version[...]), manufacturerName: "The Linux Foundation",
            leFeatures: LEFeatures(returnParameters: features[...]), extendedScanning: false)
    }

    @Test("the controller: name, address, versions, maker, how it scans and the LE features that matter")
    func controller() {
        #expect(
            CheckReport.controller(Self.btvirt, activeScan: false) == [
                "controller h4:/tmp/bt-server-le",
                "  address:      00:AA:01:00:00:42 (public)",
                "  version:      HCI 5.0 (9) (revision 0x0000), LMP 5.0 (9) (subversion 0x0000)",
                "  manufacturer: The Linux Foundation (0x05f1)",
                "  scanning:     legacy LE commands (LE Set Scan Parameters/Enable), passive",
                "  LE features:  extended advertising no, LE Coded PHY (long range) no, LL privacy no "
                    + "(mask 0x000000000000000b)",
            ])
        var pi = Self.btvirt
        pi.name = "hci0"
        pi.version = LocalVersion(
            hciVersion: 9, hciRevision: 0x013A, lmpVersion: 9, lmpSubversion: 0x6119, manufacturer: 0x0131)
        pi.manufacturerName = nil
        pi.leFeatures = LEFeatures(bits: 1 << 12 | 1 << 11 | 1 << 6)
        pi.extendedScanning = true
        let lines = CheckReport.controller(pi, activeScan: true)
        #expect(lines.contains("  version:      HCI 5.0 (9) (revision 0x013a), LMP 5.0 (9) (subversion 0x6119)"))
        #expect(lines.contains("  manufacturer: 0x0131"))
        #expect(lines.contains("  scanning:     extended LE commands (LE Set Extended Scan Parameters/Enable), active"))
        #expect(
            lines.contains(
                "  LE features:  extended advertising yes, LE Coded PHY (long range) yes, LL privacy yes "
                    + "(mask 0x0000000000001840)"))
    }

    @Test("parts the controller refused are said to be unknown, not left out")
    func refusedParts() {
        let lines = CheckReport.controller(
            ControllerIdentity(name: "hci1", address: nil, version: nil, leFeatures: nil, extendedScanning: false),
            activeScan: false)
        #expect(lines.contains("  address:      unknown (Read BD_ADDR refused)"))
        #expect(lines.contains("  version:      unknown (Read Local Version Information refused)"))
        #expect(lines.contains { $0.hasPrefix("  LE features:  unknown") })
        #expect(!lines.contains { $0.hasPrefix("  manufacturer:") })
    }

    @Test("what it listens for: the site's UUID, constraints, addresses and the floor, in words")
    func listening() throws {
        let site = try #require(siteUUID)
        #expect(
            CheckReport.listening(SightingFilter(siteUUID: site), count: 5, timeout: 10)
                == "listening up to 10.0 s for 5 beacons the agent would publish: iBeacons and AltBeacons under \(site)"
        )
        let address = try #require(DeviceAddress("C0:11:22:33:44:55"))
        let filter = SightingFilter(constraints: [], addresses: [address], minimumRSSI: -80, selectsAllBeacons: true)
        #expect(
            CheckReport.describe(filter)
                == "every beacon (--constraint any); the devices at C0:11:22:33:44:55, at -80 dBm or stronger")
    }

    @Test("a pass lists each tag with its adverts and RSSI range and ends OK")
    func pass() throws {
        var check = BeaconCheck(filter: SightingFilter(siteUUID: try #require(siteUUID)), count: 5)
        let news = check.ingest(iBeaconEvent(siteUUID, major: 1, minor: 1, rssi: -60)[...], framing: .h4, elapsed: 0.25)
        _ = check.ingest(iBeaconEvent(siteUUID, major: 1, minor: 1, rssi: -66)[...], framing: .h4, elapsed: 0.5)
        _ = check.ingest(iBeaconEvent(otherUUID, major: 2, minor: 3, rssi: -66)[...], framing: .h4, elapsed: 0.6)
        let first = try #require(news.first)
        #expect(
            CheckReport.heard(first, number: 1)
                == "beacon 1: \(tag(1)), RSSI -60 dBm, measured power -59 dBm, from 00:AA:01:00:00:01 (public), "
                + "after 0.3 s")
        let lines = CheckReport.verdict(check, elapsed: 10, activeScan: false)
        #expect(
            lines == [
                "heard 1 beacon the agent would publish in 10.0 s (2 adverts):",
                "  \(tag(1)): 2 adverts, RSSI -66 to -60 dBm",
                "other adverts (not published): 1 (not-selected=1)",
                "  beacons outside the filter: ibeacon-\(try #require(otherUUID))-2-3 (1 advert)",
                "OK: a tag the agent would publish heard",
            ])
    }

    @Test("a failure says what to check, depending on what was heard")
    func failureHints() throws {
        let site = try #require(siteUUID)
        let silent = BeaconCheck(filter: SightingFilter(siteUUID: site), count: 5)
        let nothing = CheckReport.verdict(silent, elapsed: 10, activeScan: false)
        #expect(nothing.first == "no beacon the agent would publish was heard in 10.0 s")
        #expect(nothing.contains("other adverts (not published): 0"))
        #expect(
            nothing.contains { $0.hasPrefix("  - the site: the agent publishes iBeacons and AltBeacons under \(site)") }
        )
        #expect(nothing.contains { $0.hasPrefix("  - the tags: ") && $0.hasSuffix("try --active") })
        #expect(nothing.contains { $0.hasPrefix("  - the adapter: it heard no advert at all") })
        #expect(!nothing.contains { $0.hasPrefix("OK") })

        var foreign = BeaconCheck(filter: SightingFilter(siteUUID: site, minimumRSSI: -70), count: 5)
        _ = foreign.ingest(iBeaconEvent(otherUUID, major: 2, minor: 3, rssi: -60)[...], framing: .h4, elapsed: 1)
        _ = foreign.ingest(iBeaconEvent(siteUUID, major: 1, minor: 1, rssi: -90)[...], framing: .h4, elapsed: 1)
        _ = foreign.ingest(iBeaconEvent(siteUUID, major: 1, minor: 1, rssi: 127)[...], framing: .h4, elapsed: 1)
        let heard = CheckReport.verdict(foreign, elapsed: 3, activeScan: true)
        #expect(heard.contains { $0.contains("the beacons above carry other identities") })
        #expect(!heard.contains { $0.contains("try --active") })
        #expect(heard.contains("  - the RSSI floor (--rssi-floor -70 dBm): weaker adverts: 1"))
        #expect(heard.contains { $0.hasPrefix("  - the adapter: 1 advert came without an RSSI (127") })
        #expect(!heard.contains { $0.contains("no advert at all") })
    }
}
