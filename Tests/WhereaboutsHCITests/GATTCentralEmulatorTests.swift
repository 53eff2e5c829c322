import BrokerFixture
import ControllerEmulator
import GATTPeripheral
import Testing
import WhereaboutsAdvertising
import WhereaboutsCore
import WhereaboutsGATT
import WhereaboutsHCI

/// The GATT central against our own peripheral, two controllers of BlueZ's emulator (btvirt) connected over its
/// air: connection, ACL credits (btvirt's 192-byte buffer, one at a time), L2CAP reassembly (a long value at an
/// MTU of 247 needs two ACL packets), discovery, reads, writes, notifications and ATT errors, all through real
/// controller code.
@Suite(
    "GATT central against our peripheral on btvirt", .serialized, .timeLimit(.minutes(3)),
    .enabled(if: BtvirtEmulator.isAvailable, "btvirt cannot run here (see the printed reason)"))
struct GATTCentralEmulatorTests {
    static let configuration = BeaconUUID(bytes: [UInt8](0..<16)).map {
        BeaconConfiguration(IBeaconAdvertisement(uuid: $0, major: 7, minor: 9, measuredPower: -59))
    }

    /// A Device Name of 210 bytes: read at the default MTU it takes Read Blob; at an MTU of 247 its response is one
    /// ATT PDU in an L2CAP frame longer than btvirt's 192-byte ACL packets, so it arrives in two and is reassembled.
    static let longName = String(repeating: "Whereabouts test tag ", count: 10)

    static func server() throws -> AttributeServer {
        AttributeServer(
            battery: 87, manufacturer: "Whereabouts", model: "WB-Tag-1", firmware: "1.4.2", name: longName,
            configuration: try #require(configuration))
    }

    /// Runs `body` with a central connected to a serving peripheral, each on its own emulated controller.
    static func withConnection(
        _ body: (GATTCentral, GATTPeripheral, ConnectionComplete) async throws -> Void
    ) async throws {
        let emulator = try BtvirtEmulator()
        let peripheralHost = try await GATTPeripheral.initializedHost(at: emulator.lowEnergy)
        defer { peripheralHost.close() }
        let centralHost = try await GATTPeripheral.initializedHost(at: emulator.lowEnergy)
        defer { centralHost.close() }
        let peripheral = try await GATTPeripheral(host: peripheralHost, server: try server())
        let central = try await GATTCentral(host: centralHost)
        async let served: Void = peripheral.serve()
        let outcome: Result<Void, any Error>
        do {
            let link = try await central.connect(to: peripheral.address, type: .publicDevice)
            // Each side hears of the connection from its own controller; the peripheral's serve loop may be later.
            try await poll("the peripheral to see the connection", timeout: .seconds(30)) { peripheral.connection }
            try await body(central, peripheral, link)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        peripheral.stop()
        await served
        try outcome.get()
    }

    /// Discovers every service and characteristic, as a job would before using handles.
    static func discover(_ central: GATTCentral, _ handle: UInt16) async throws -> [GATTCharacteristic] {
        guard case .services(let services) = try await central.perform(.discoverPrimaryServices, on: handle) else {
            throw PeripheralError("discovery returned no services")
        }
        var found: [GATTCharacteristic] = []
        for service in services {
            guard
                case .characteristics(let list) = try await central.perform(
                    .discoverCharacteristics(service), on: handle)
            else { throw PeripheralError("no characteristics") }
            found += list
        }
        return found
    }

    @Test("connect, exchange MTU, discover, read Battery Level and Device Information, disconnect")
    func readBatteryAndIdentity() async throws {
        try await Self.withConnection { central, peripheral, link in
            #expect(link.role == .central && link.peerAddress == peripheral.address)
            #expect(central.buffers == ACLBufferSize(packetLength: 192, packetCount: 1))
            let name = Array(Self.longName.utf8)
            let byBlobs = try await central.perform(
                .readByType(AttributeUUID(0x2A00), start: 1, end: 0xFFFF), on: link.handle)
            guard case .values(let named) = byBlobs, let nameHandle = named.first?.handle else {
                throw PeripheralError("no Device Name: \(byBlobs)")
            }
            #expect(try await central.perform(.read(nameHandle), on: link.handle) == .value(name), "at MTU 23")
            #expect(try await central.perform(.exchangeMTU(247), on: link.handle) == .mtu(247))
            #expect(try await central.perform(.read(nameHandle), on: link.handle) == .value(name), "at MTU 247")
            let characteristics = try await Self.discover(central, link.handle)
            let battery = try #require(characteristics.first { $0.uuid == .batteryLevel })
            #expect(battery.properties.contains(.notify))
            #expect(try await central.perform(.read(battery.valueHandle), on: link.handle) == .value([87]))
            var identity: [String] = []
            for uuid in [AttributeUUID.manufacturerName, .modelNumber, .firmwareRevision] {
                let result = try await central.perform(.readByType(uuid, start: 1, end: 0xFFFF), on: link.handle)
                guard case .values(let values) = result, let first = values.first else {
                    Issue.record("no value for \(uuid): \(result)")
                    continue
                }
                identity.append(String(decoding: first.value, as: UTF8.self))
            }
            #expect(identity == ["Whereabouts", "WB-Tag-1", "1.4.2"])
            #expect(central.counters.total == 0, "\(central.counters)")
            #expect(await central.disconnect(link.handle) != nil)
        }
    }

    @Test("subscribe to Battery Level and receive the notification of a changed level")
    func notification() async throws {
        try await Self.withConnection { central, peripheral, link in
            let battery = try #require(try await Self.discover(central, link.handle).first { $0.uuid == .batteryLevel })
            let result = try await central.perform(.subscribe(battery, indications: false), on: link.handle)
            #expect(result == .subscribed(configuration: 0x0013))
            #expect(peripheral.server.notifiesBattery)
            peripheral.setBatteryLevel(41)
            let notified = await central.nextNotification(on: link.handle, timeout: .seconds(30))
            #expect(notified == AttributeValue(handle: battery.valueHandle, value: [41]))
        }
    }

    @Test("provisioning writes the configuration and reads it back; bad writes fail naming the attribute")
    func writes() async throws {
        try await Self.withConnection { central, peripheral, link in
            _ = try await central.perform(.exchangeMTU(247), on: link.handle)
            let characteristics = try await Self.discover(central, link.handle)
            let setting = try #require(characteristics.first { $0.uuid == BeaconConfiguration.characteristic })
            let wanted = BeaconConfiguration(
                IBeaconAdvertisement(
                    uuid: try #require(BeaconUUID(bytes: [UInt8](repeating: 0xAB, count: 16))), major: 300, minor: 2,
                    measuredPower: -61))
            #expect(try await central.perform(.write(setting.valueHandle, wanted.value), on: link.handle) == .written)
            let back = try await central.perform(.read(setting.valueHandle), on: link.handle)
            guard case .value(let bytes) = back else { throw PeripheralError("no value read back") }
            #expect(BeaconConfiguration(value: bytes) == wanted)

            await #expect(
                throws: GATTCentralError.gatt(
                    .attribute(
                        .invalidAttributeValueLength, request: 0x12, handle: setting.valueHandle,
                        uuid: BeaconConfiguration.characteristic))
            ) { try await central.perform(.write(setting.valueHandle, [1, 2, 3]), on: link.handle) }
            let battery = try #require(characteristics.first { $0.uuid == .batteryLevel })
            do throws(GATTCentralError) {
                _ = try await central.perform(.write(battery.valueHandle, [5]), on: link.handle)
                Issue.record("a write to a read-only characteristic was taken")
            } catch {
                #expect(
                    error
                        == .gatt(
                            .attribute(
                                .writeNotPermitted, request: 0x12, handle: battery.valueHandle, uuid: .batteryLevel)))
                #expect("\(error)".contains("write not permitted (0x03) for attribute 0x0012 (0x2A19)"), "\(error)")
            }
            #expect(peripheral.server.value(AttributeServer.batteryLevelHandle) == [87])
        }
    }

    @Test("a peripheral's Connection Parameter Update Request is accepted and the controller updates the link")
    func parameterUpdate() async throws {
        try await Self.withConnection { central, peripheral, link in
            let wanted = ConnectionParameterRequest(
                minimumInterval: 0x50, maximumInterval: 0x50, latency: 2, supervisionTimeout: 0x1F4)
            #expect(link.parameters.interval != 0x50)
            peripheral.requestConnectionParameters(wanted)
            // The central answers while it waits for anything on the link; LE Connection Update Complete then
            // reaches both hosts.
            var updated: ConnectionParameters?
            var patience = Patience(.seconds(30))
            while updated == nil, !patience.isExhausted() {
                _ = await central.nextNotification(on: link.handle, timeout: .milliseconds(200))
                updated = central.connection(link.handle).map(\.parameters).flatMap { $0.interval == 0x50 ? $0 : nil }
            }
            #expect(updated == ConnectionParameters(interval: 0x50, latency: 2, supervisionTimeout: 0x1F4))
            #expect(central.counters.total == 0, "\(central.counters)")
            // The peripheral's controller told its host too (its serve loop reads it).
            let seen = try await poll("the peripheral's new parameters", timeout: .seconds(30)) {
                peripheral.link.map(\.parameters).flatMap { $0.interval == 0x50 ? $0 : nil }
            }
            #expect(seen == updated)
        }
    }

    @Test("a peripheral that vanishes answers nothing: the ATT timeout ends the procedure, and the scan goes on")
    func vanishedPeripheral() async throws {
        let emulator = try BtvirtEmulator()
        let peripheralHost = try await GATTPeripheral.initializedHost(at: emulator.lowEnergy)
        defer { peripheralHost.close() }
        let centralHost = try await GATTPeripheral.initializedHost(at: emulator.lowEnergy)
        defer { centralHost.close() }
        let peripheral = try await GATTPeripheral(host: peripheralHost, server: try Self.server())
        // A 2 s transaction timeout stands in for the specification's 30 s.
        let central = try await GATTCentral(host: centralHost, transactionTimeout: 2)
        _ = try await centralHost.startScanning(try #require(LEScanParameters()))
        let link = try await central.connect(to: peripheral.address, type: .publicDevice)
        // Nobody serves the link: the peripheral's host reads nothing and answers nothing, as a peer that has gone
        // does (btvirt has no supervision timeout to end the link). Its controller stays: closing it here made
        // btvirt itself go away now and then (one CI run in 2026-12-07's session: the central's controller
        // connection ended 0.36 s in), which took the central's controller with it and tested btvirt, not us.
        await #expect(throws: GATTCentralError.gatt(.timedOut(request: 0x0A))) {
            _ = try await central.perform(.read(AttributeServer.batteryLevelHandle), on: link.handle)
        }
        // The bearer is closed after a timeout: nothing more is sent on it.
        await #expect(throws: GATTCentralError.gatt(.linkLost)) {
            _ = try await central.perform(.read(AttributeServer.batteryLevelHandle), on: link.handle)
        }
        #expect(centralHost.failure == nil, "the central's controller, and its scan, are still there")
        await centralHost.stopScanning()
    }

    @Test("a target that advertises non-connectable fails with HCI status 0x3E")
    func notConnectable() async throws {
        let emulator = try BtvirtEmulator()
        let advertiser = try await GATTPeripheral.initializedHost(at: emulator.lowEnergy)
        defer { advertiser.close() }
        let centralHost = try await GATTPeripheral.initializedHost(at: emulator.lowEnergy)
        defer { centralHost.close() }
        let address = try #require(try await advertiser.identity().address)
        let beacon = IBeaconAdvertisement(
            uuid: try #require(BeaconUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0")), major: 1, minor: 2)
        try await advertiser.startAdvertising(beacon, parameters: try #require(LEAdvertisingParameters()))
        let central = try await GATTCentral(host: centralHost)
        await #expect(throws: GATTCentralError.connectionFailed(status: 0x3E, peer: address)) {
            _ = try await central.connect(to: address, type: .publicDevice)
        }
    }
}
