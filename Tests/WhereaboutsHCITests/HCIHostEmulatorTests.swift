import ControllerEmulator
import Foundation
import GATTPeripheral
import Testing
import WhereaboutsAdvertising
import WhereaboutsCore
import WhereaboutsHCI

/// The host logic over H4 against BlueZ's own controller code (btvirt), not ours: what a scanner hears from an
/// advertiser, which scanning commands the supported-commands bits choose, and a controller that goes away.
@Suite(
    "HCI host against btvirt", .serialized, .timeLimit(.minutes(3)),
    .enabled(if: BtvirtEmulator.isAvailable, "btvirt cannot run here (see the printed reason)"))
struct HCIHostEmulatorTests {
    static let uuid = BeaconUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0")

    /// Waits for the first LE advertising report in `events` carrying a beacon, within `timeout`.
    static func firstReport(in events: AsyncStream<[UInt8]>, timeout: Duration = .seconds(60)) async -> [UInt8]? {
        await withTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                for await event in events where event.count > 40 { return event }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    @Test("a scanner hears an advertiser's iBeacon through btvirt; RSSI 127 means none, so it is not a sighting")
    func scannerHearsAdvertiser() async throws {
        let emulator = try BtvirtEmulator()
        let advertiser = try await GATTPeripheral.initializedHost(at: emulator.lowEnergy)
        defer { advertiser.close() }
        let scanner = try await GATTPeripheral.initializedHost(at: emulator.lowEnergy)
        defer { scanner.close() }
        // btvirt's LE-only controller has no extended scanning: legacy commands are chosen.
        #expect(!scanner.usesExtendedScanning)
        let events = try await scanner.startScanning(try #require(LEScanParameters(active: false)))
        let uuid = try #require(Self.uuid)
        let beacon = IBeaconAdvertisement(uuid: uuid, major: 3, minor: 44, measuredPower: -59)
        try await advertiser.startAdvertising(beacon, parameters: try #require(LEAdvertisingParameters()))
        let report = try #require(await Self.firstReport(in: events), "no advertising report within 60 s")

        let parser = HCIEventParser()
        var counters = DropCounters()
        let reports = parser.reports(in: report[...], framing: .h4, counters: &counters)
        #expect(reports.isEmpty, "btvirt reports RSSI 127 (not available), which the parser drops")
        #expect(counters.description.contains("rssi"), "\(counters)")
        // With a real RSSI in its place (as a radio would give), the same report is A's iBeacon.
        var withRSSI = report
        withRSSI[withRSSI.count - 1] = UInt8(bitPattern: -61)
        var decoder = SightingDecoder(filter: SightingFilter(siteUUID: uuid))
        let sightings = decoder.sightings(in: withRSSI, framing: .h4)
        #expect(sightings.map(\.tag) == [beacon.tag])
        #expect(sightings.map(\.rssi) == [-61])
        await scanner.stopScanning()
    }

    @Test("a controller that vanishes mid-scan ends the stream with an error naming it; a new one can be opened")
    func controllerVanishes() async throws {
        var emulator: BtvirtEmulator? = try BtvirtEmulator()
        let path = try #require(emulator?.lowEnergy)
        let scanner = try await GATTPeripheral.initializedHost(at: path)
        let events = try await scanner.startScanning(try #require(LEScanParameters()))
        emulator?.stop()
        for await _ in events {}
        let failure = try #require(scanner.failure)
        #expect("\(failure)".contains(path), "\(failure)")
        // The retry: a controller that is back is opened again and scans.
        emulator = try BtvirtEmulator()
        let again = try await GATTPeripheral.initializedHost(at: try #require(emulator?.lowEnergy))
        defer { again.close() }
        _ = try await again.startScanning(try #require(LEScanParameters()))
        #expect(again.failure == nil)
        scanner.close()
    }
}

@Suite("HCI host over a btsnoop file")
struct HCIHostBtsnoopTests {
    @Test("the same host logic scans a capture: commands answered, then the capture's events, then its end")
    func scansCapture() async throws {
        let uuid = try #require(BeaconUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0"))
        let address = try #require(DeviceAddress(value: 0xC0_00_00_00_00_01))
        let data = IBeaconAdvertisement(uuid: uuid, major: 1, minor: 2).advertisingData
        let event = try #require(
            AdvertisingReportEvent.legacy(address: address, addressType: .randomDevice, data: data, rssi: -60))
        let packets = (0..<5).map { BtsnoopPacket(time: 1_764_000_000 + Double($0), event: event) }
        let host = HCIHost(
            transport: try BtsnoopTransport(path: "capture.btsnoop", bytes: BtsnoopWriter().file(packets)))
        try await host.initialize()
        #expect(!host.usesExtendedScanning)
        var received: [[UInt8]] = []
        for await packet in try await host.startScanning(try #require(LEScanParameters())) { received.append(packet) }
        #expect(received == packets.map { [0x04] + $0.event })
        #expect(host.failure == .controllerVanished("btsnoop:capture.btsnoop"))
    }

    @Test("supported commands: extended scanning only with both octet 37 bits 5 and 6")
    func supportedCommands() throws {
        var mask = [UInt8](repeating: 0, count: 64)
        #expect(SupportedCommands(returnParameters: ([0] + mask)[...])?.extendedScanning == false)
        mask[37] = 0b0110_0000
        #expect(SupportedCommands(returnParameters: ([0] + mask)[...])?.extendedScanning == true)
        mask[37] = 0b0010_0000
        #expect(SupportedCommands(returnParameters: ([0] + mask)[...])?.extendedScanning == false)
        #expect(SupportedCommands(returnParameters: ([1] + mask)[...]) == nil)
        #expect(SupportedCommands(returnParameters: [0, 1, 2][...]) == nil)
    }
}

/// What only a relay in front of btvirt can show at the host level: the supported-commands bits deciding, a
/// controller that claims what it refuses, and a shut-down that leaves the controller as it was found.
@Suite(
    "HCI host against btvirt, through a relay", .serialized, .timeLimit(.minutes(3)),
    .enabled(if: BtvirtEmulator.isAvailable, "btvirt cannot run here (see the printed reason)"))
struct HCIHostRelayTests {
    static func beacon() throws -> IBeaconAdvertisement {
        IBeaconAdvertisement(
            uuid: try #require(BeaconUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0")), major: 3, minor: 44,
            measuredPower: -59)
    }

    @Test(
        "the supported-commands bits choose extended scanning; a controller refusing the commands gets legacy",
        arguments: [(dualMode: true, extended: true), (dualMode: false, extended: false)])
    func extendedWhereClaimed(dualMode: Bool, extended: Bool) async throws {
        let emulator = try BtvirtEmulator()
        let relay = try H4Relay(
            listeningAt: emulator.directory + "/relay.sock",
            upstream: dualMode ? emulator.dualMode : emulator.lowEnergy,
            settings: .init(rssi: -70, claimsExtendedScanning: true))
        let scanner = try await GATTPeripheral.initializedHost(at: relay.path)
        defer { scanner.close() }
        let advertiser = try await GATTPeripheral.initializedHost(at: emulator.lowEnergy)
        defer { advertiser.close() }
        #expect(scanner.usesExtendedScanning, "the relay claims the bits")
        let events = try await scanner.startScanning(try #require(LEScanParameters()))
        // btvirt's dual-mode controller takes the extended commands; its LE-only one refuses them as unknown.
        #expect(scanner.usesExtendedScanning == extended)
        #expect(relay.commands.contains(0x2041))
        #expect(relay.commands.last == (extended ? 0x2042 : 0x200C))
        let beacon = try Self.beacon()
        try await advertiser.startAdvertising(beacon, parameters: try #require(LEAdvertisingParameters()))
        let report = try #require(await HCIHostEmulatorTests.firstReport(in: events), "no report within 60 s")
        var decoder = SightingDecoder(filter: SightingFilter(siteUUID: beacon.uuid))
        #expect(decoder.sightings(in: report, framing: .h4).map(\.rssi) == [-70])
    }

    @Test("shutting down turns advertising and scanning off before closing; commands wait their turn")
    func shutDownLeavesControllerIdle() async throws {
        let emulator = try BtvirtEmulator()
        let relay = try H4Relay(listeningAt: emulator.directory + "/relay.sock", upstream: emulator.lowEnergy)
        let host = try await GATTPeripheral.initializedHost(at: relay.path)
        let parameters = try #require(LEScanParameters())
        let beacon = try Self.beacon()
        let advertising = try #require(LEAdvertisingParameters())
        // Scanning and advertising started at once: the second waits for the first's answers, it does not fail.
        async let scan = host.startScanning(parameters)
        async let advertise: Void = host.startAdvertising(beacon, parameters: advertising)
        let events = try await scan
        try await advertise
        await host.shutDown()
        for await _ in events {}
        let commands = relay.commands
        #expect(Array(commands.suffix(2)).sorted() == [0x200A, 0x200C], "\(commands)")
        #expect(host.failure == nil, "a shut-down is not a failure")
        await #expect(throws: HCIError.self) { try await host.stopAdvertising() }
    }

    @Test("H4 over a pseudo-terminal: the host drives a btvirt controller as over a UART, and close() ends the read")
    func pseudoTerminal() async throws {
        let emulator = try BtvirtEmulator()
        let bridge = try PtyBridge(upstream: emulator.lowEnergy)
        let scanner = HCIHost(transport: try H4StreamTransport(path: bridge.path))
        try await scanner.initialize()
        let advertiser = try await GATTPeripheral.initializedHost(at: emulator.lowEnergy)
        defer { advertiser.close() }
        let events = try await scanner.startScanning(try #require(LEScanParameters()))
        try await advertiser.startAdvertising(try Self.beacon(), parameters: try #require(LEAdvertisingParameters()))
        let report = try #require(await HCIHostEmulatorTests.firstReport(in: events), "no report within 60 s")
        #expect(report.count > 40 && report[1] == 0x3E)
        // A terminal cannot be shut down: close() must still wake the reader, which ends the scan's stream.
        scanner.close()
        for await _ in events {}
        #expect(scanner.failure == nil)
    }
}

extension HCIHostEmulatorTests {
    @Test("identity: btvirt's controllers say Core 5.0, The Linux Foundation, their address and their LE features")
    func identity() async throws {
        let emulator = try BtvirtEmulator()
        for (path, features) in [(emulator.lowEnergy, UInt64(0x0B)), (emulator.dualMode, UInt64(0))] {
            let host = try await GATTPeripheral.initializedHost(at: path)
            defer { host.close() }
            let identity = try await host.identity()
            #expect(identity.name == "h4:\(path)")
            #expect(identity.version?.hciVersion == 9 && identity.version?.lmpVersion == 9)
            #expect(identity.version?.manufacturer == 0x05F1)
            // BlueZ's list of company identifiers, from libbluetooth.
            #expect(identity.manufacturerName == "The Linux Foundation")
            #expect(
                identity.address?.description.hasPrefix("00:AA:01:") == true, "\(String(describing: identity.address))")
            #expect(identity.leFeatures?.bits == features)
            #expect(!identity.extendedScanning)
        }
    }
}
