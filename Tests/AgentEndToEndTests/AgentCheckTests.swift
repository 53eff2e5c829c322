import ControllerEmulator
import Foundation
import Glibc
import Testing
import WhereaboutsAdvertising
import WhereaboutsCore
import WhereaboutsHCI

/// `whereabouts-agent --check` on BlueZ's controller emulator: the built agent, given no broker and no id, opens an
/// emulated controller through an H4 relay that gives reports a real RSSI (btvirt says 127, "not available"), while
/// other emulated controllers on the same air advertise iBeacons (btvirt reports each advertiser to a scanner when
/// the scan is enabled).
@Suite(
    "whereabouts-agent --check on BlueZ's controller emulator", .serialized, .timeLimit(.minutes(3)),
    .enabled(if: BtvirtEmulator.isAvailable, "btvirt cannot run here (see the printed reason)"))
struct AgentCheckEmulatorTests {
    static let rssi: Int8 = -61
    static let foreign = "11111111-2222-3333-4444-555555555555"

    /// One test's air: btvirt, the check's relay, and the advertising controllers.
    final class Air {
        let scratch: ScratchDirectory
        let emulator: BtvirtEmulator
        let relay: H4Relay
        private(set) var advertisers: [HCIHost] = []

        init() throws {
            scratch = try ScratchDirectory()
            emulator = try BtvirtEmulator()
            relay = try H4Relay(
                listeningAt: scratch.path + "/check.sock", upstream: emulator.lowEnergy,
                settings: .init(rssi: AgentCheckEmulatorTests.rssi))
        }

        deinit { for host in advertisers { host.close() } }

        /// A new controller on the air advertising `uuid:major:minor` at -59 dBm, until the air is gone.
        ///
        /// btvirt now and then ends a controller's connection just after it starts on a loaded machine (see
        /// GATTPeripheral.initializedHost); this opens it again, at most twice more.
        func advertise(_ uuid: String, major: UInt16, minor: UInt16) async throws {
            let beacon = IBeaconAdvertisement(
                uuid: try #require(BeaconUUID(uuid)), major: major, minor: minor, measuredPower: -59)
            var attempt = 1
            while true {
                let host = HCIHost(transport: try H4StreamTransport(path: emulator.lowEnergy))
                do {
                    try await host.initialize()
                    try await host.startAdvertising(beacon, parameters: try #require(LEAdvertisingParameters()))
                    advertisers.append(host)
                    return
                } catch {
                    host.close()
                    guard case HCIError.controllerVanished = error, attempt < 3 else { throw error }
                    attempt += 1
                }
            }
        }

        /// Runs `whereabouts-agent --check` on the relay with `extra` settings; its exit code and output. A controller
        /// that btvirt ends at the start (as above) makes the check exit 1 saying so: it is run again, at most twice.
        func check(_ extra: [String]) async throws -> (code: Int32, output: String) {
            for attempt in 1...3 {
                let run = try AgentRun(
                    ["--check", "--device", "h4:\(relay.path)"] + extra, in: scratch, name: "check-\(attempt)")
                let code = try await run.exitCode(within: .seconds(90))
                let output = run.output
                if code == 1, output.contains("went away"), !output.contains("controller h4:"), attempt < 3 {
                    print("btvirt ended the check's controller at start (attempt \(attempt)); checking again")
                    continue
                }
                return (code, output)
            }
            throw HarnessError("unreachable")
        }
    }

    @Test("it prints the controller and the site's beacons with their RSSI and power, then exits 0 at the count")
    func hearsSiteBeacons() async throws {
        let air = try Air()
        try await air.advertise(site, major: 7, minor: 9)
        try await air.advertise(site, major: 7, minor: 10)
        try await air.advertise(Self.foreign, major: 1, minor: 2)
        // No broker, no id. A timeout far beyond the test's wait: only the count can end the check in time.
        let (code, output) = try await air.check(["--site", site, "--check-count", "2", "--check-timeout", "600"])
        #expect(code == 0, "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.first == "controller h4:\(air.relay.path)", "\(output)")
        #expect(lines.contains { $0.hasPrefix("  address:      00:AA:01:") && $0.hasSuffix(" (public)") }, "\(output)")
        #expect(lines.contains("  version:      HCI 5.0 (9) (revision 0x0000), LMP 5.0 (9) (subversion 0x0000)"))
        #expect(lines.contains("  manufacturer: The Linux Foundation (0x05f1)"), "\(output)")
        #expect(lines.contains("  scanning:     legacy LE commands (LE Set Scan Parameters/Enable), passive"))
        #expect(
            lines.contains(
                "  LE features:  extended advertising no, LE Coded PHY (long range) no, LL privacy no "
                    + "(mask 0x000000000000000b)"), "\(output)")
        #expect(lines.contains { $0.hasPrefix("listening up to 600.0 s for 2 beacons the agent would publish") })
        let beacons = lines.filter { $0.hasPrefix("beacon ") }
        #expect(beacons.count == 2, "\(output)")
        for (number, minor) in [(1, 9), (2, 10)] {
            let tag = "ibeacon-\(site)-7-\(minor)"
            #expect(
                beacons.contains {
                    $0.hasPrefix("beacon ") && $0.contains(": \(tag), RSSI -61 dBm, measured power -59 dBm, from ")
                }, "\(tag) in \(output)")
            #expect(beacons.contains { $0.hasPrefix("beacon \(number): ibeacon-\(site)-7-") })
        }
        #expect(!beacons.contains { $0.contains(Self.foreign) }, "a foreign beacon is not one the agent would publish")
        #expect(lines.contains { $0.hasPrefix("heard 2 beacons the agent would publish in ") }, "\(output)")
        #expect(lines.last == "OK: tags the agent would publish heard", "\(output)")
        // It asked who the controller is, scanned with the legacy commands and turned the scan off before leaving.
        let commands = air.relay.commands
        #expect([0x1001, 0x1009, 0x2003, 0x200B].allSatisfy(commands.contains), "\(commands)")
        #expect(commands.last == 0x200C, "\(commands)")
    }

    @Test("hearing only a foreign beacon, it names it, says what to check and exits 1 at the timeout")
    func foreignBeaconOnly() async throws {
        let air = try Air()
        try await air.advertise(Self.foreign, major: 1, minor: 2)
        let (code, output) = try await air.check(["--site", site, "--check-timeout", "3"])
        #expect(code == 1, "\(output)")
        #expect(output.contains("no beacon the agent would publish was heard in 3.0 s"), "\(output)")
        #expect(output.contains("not-selected="), "\(output)")
        #expect(
            output.contains("  beacons outside the filter: ibeacon-\(Self.foreign)-1-2 ("), "\(output)")
        #expect(output.contains("\ncheck:\n  - the site: the agent publishes iBeacons and AltBeacons under \(site)"))
        #expect(output.contains("the beacons above carry other identities"), "\(output)")
        #expect(output.contains("try --active"), "\(output)")
        #expect(!output.contains("it heard no advert at all"), "\(output)")
    }

    @Test("with nothing advertising it exits 1, pointing at the site, the tags and the adapter")
    func nothingAdvertising() async throws {
        let air = try Air()
        let (code, output) = try await air.check(["--site", site, "--check-timeout", "2", "--active"])
        #expect(code == 1, "\(output)")
        #expect(output.contains("controller h4:\(air.relay.path)"), "\(output)")
        #expect(output.contains("  scanning:     legacy LE commands (LE Set Scan Parameters/Enable), active"))
        #expect(output.contains("no beacon the agent would publish was heard in 2.0 s"), "\(output)")
        #expect(output.contains("other adverts (not published): 0\n"), "\(output)")
        #expect(output.contains("  - the site: "), "\(output)")
        #expect(output.contains("  - the tags: near"), "\(output)")
        #expect(!output.contains("try --active"), "already active: \(output)")
        #expect(output.contains("  - the adapter: it heard no advert at all"), "\(output)")
    }
}

/// `--check` without a usable controller, and its usage errors: no emulator needed.
@Suite("whereabouts-agent --check without a controller")
struct AgentCheckFailureTests {
    func check(_ arguments: [String]) async throws -> (code: Int32, output: String) {
        let scratch = try ScratchDirectory()
        let run = try AgentRun(arguments, in: scratch, name: "check")
        return (try await run.exitCode(within: .seconds(60)), run.output)
    }

    @Test("a missing adapter exits 1 with the agent's error naming it (no broker or id needed)")
    func missingAdapter() async throws {
        let (code, output) = try await check(["--check", "--site", site, "--device", "hci9"])
        #expect(code == 1, "\(output)")
        #expect(output.contains("error: cannot open Bluetooth controller hci9: "), "\(output)")
        // Where the kernel has Bluetooth, hci9 is missing; where it has none (containers, this CI), it says that.
        #expect(
            output.contains("no Bluetooth controller named hci9 (ENODEV)")
                || output.contains("the kernel has no Bluetooth support"), "\(output)")
        #expect(!output.contains("listening"), "\(output)")

        let missing = "/nonexistent-\(getpid())/bt-server-le"
        let (h4Code, h4Output) = try await check(["--check", "--site", site, "--device", "h4:\(missing)"])
        #expect(h4Code == 1, "\(h4Output)")
        #expect(h4Output.contains("error: cannot open Bluetooth controller h4:\(missing): "), "\(h4Output)")
    }

    @Test("bad check usage exits 2 naming the setting")
    func badUsage() async throws {
        let noSite = try await check(["--check", "--device", "hci9"])
        #expect(noSite.code == 2 && noSite.output.contains("--site is required"), "\(noSite.output)")
        let stray = try await check(["--check-timeout", "5", "--site", site])
        #expect(stray.code == 2 && stray.output.contains("--check-timeout goes with --check"), "\(stray.output)")
        let zero = try await check(["--check", "--site", site, "--check-timeout", "0"])
        #expect(zero.code == 2 && zero.output.contains("--check-timeout must be a number"), "\(zero.output)")
        let replay = try await check(["--check", "--site", site, "--source", "btsnoop:/tmp/x.btsnoop"])
        #expect(replay.code == 2 && replay.output.contains("--check listens to a controller"), "\(replay.output)")
    }
}
