import BrokerFixture
import ControllerEmulator
import Foundation
import Glibc
import Testing
import WhereaboutsAdvertising
import WhereaboutsCore
import WhereaboutsWire

/// Two agents on one emulated air (BlueZ's btvirt): agent A advertises an iBeacon, agent B scans and publishes what
/// it hears to a real mosquitto. Nothing of ours stands between them but H4 relays that stand in for what btvirt
/// cannot do: B's relay gives reports a real RSSI (btvirt always says 127, "not available"), A's relay turns A's
/// advertising off and on (btvirt reports an advertiser once, when it enables advertising) to make a stream.
@Suite(
    "whereabouts-agent on BlueZ's controller emulator, with a real mosquitto", .serialized, .timeLimit(.minutes(3)),
    .enabled(if: BtvirtEmulator.isAvailable, "btvirt cannot run here (see the printed reason)"))
struct AgentEmulatorTests {
    /// The RSSI B's relay writes into every report.
    static let rssi: Int8 = -61
    static let major: UInt16 = 7
    static let minor: UInt16 = 9

    /// Agent A's beacon, as the locator will name it.
    static var tag: TagIdentity? {
        siteUUID.map { IBeaconAdvertisement(uuid: $0, major: major, minor: minor, measuredPower: -59).tag }
    }

    /// One test's air: btvirt, a broker, agent A advertising through relay `advertiser`, B scanning through
    /// relay `scanner`.
    final class Air {
        let scratch: ScratchDirectory
        let emulator: BtvirtEmulator
        let broker: MosquittoBroker
        let advertiser: H4Relay
        let scanner: H4Relay
        let scannerID = "scanner-\(UInt16.random(in: 0...UInt16.max))"

        /// Starts btvirt and the broker; `scannerSocket` picks B's controller type, `settings` B's relay.
        init(
            scannerSocket: (BtvirtEmulator) -> String = \.lowEnergy, scannerRelay settings: H4Relay.Settings
        ) async throws {
            scratch = try ScratchDirectory()
            emulator = try BtvirtEmulator()
            broker = try await MosquittoBroker.start()
            advertiser = try H4Relay(listeningAt: scratch.path + "/a.sock", upstream: emulator.lowEnergy)
            scanner = try H4Relay(
                listeningAt: scratch.path + "/b.sock", upstream: scannerSocket(emulator), settings: settings)
        }

        deinit { broker.cleanup() }

        func arguments(_ id: String, relay: H4Relay) -> [String] {
            [
                "--id", id, "--site", site, "--broker", "mqtt://\(broker.host):\(broker.port)",
                "--device", "h4:\(relay.path)", "--reconnect-max", "2", "--keepalive", "5", "--log-level", "debug",
            ]
        }

        /// Starts agent A, advertising, and waits until it is.
        func startAdvertiser() async throws -> AgentRun {
            let run = try AgentRun(
                arguments("advertiser-\(UInt16.random(in: 0...UInt16.max))", relay: advertiser)
                    + ["--advertise", "\(site):\(major):\(minor):-59"], in: scratch, name: "advertiser")
            try await waitUntil("agent A advertising and scanning", agent: run) {
                run.output.contains("advertising ") && run.output.contains("scanning on h4:\(advertiser.path)")
            }
            return run
        }

        /// Starts agent B, scanning (not advertising), and waits until it is.
        ///
        /// Now and then (3 times in 15 runs of the end-to-end tests on a loaded machine) btvirt ends B's controller
        /// connection within milliseconds of opening it, with B's relay connected upstream and btvirt still
        /// running. B then does what it should with a controller gone at start: it names it and exits 1, for
        /// systemd to start it again. So does this: at most twice more, saying so.
        func startScanner(_ extra: [String] = []) async throws -> AgentRun {
            var attempt = 1
            while true {
                let run = try AgentRun(
                    arguments(scannerID, relay: scanner) + ["--no-advertise"] + extra, in: scratch,
                    name: "scanner-\(attempt)")
                do {
                    try await waitUntil("agent B scanning", agent: run) {
                        run.output.contains("scanning on h4:\(scanner.path)") || !run.process.isRunning
                    }
                } catch {
                    throw HarnessError(
                        "\(error)\nB's relay: \(scanner.accepted) accepted, \(scanner.refusedUpstream) refused "
                            + "upstream; " + emulator.state)
                }
                if run.output.contains("scanning on h4:\(scanner.path)") { return run }
                let code = try await run.exitCode(within: .seconds(5))
                guard attempt < 3, code == 1, run.output.contains("went away") else {
                    throw HarnessError(
                        "agent B exited \(code) before scanning:\n\(run.output)\nB's relay: \(scanner.accepted) "
                            + "accepted, \(scanner.refusedUpstream) refused upstream; " + emulator.state)
                }
                print("btvirt ended agent B's controller connection at start (attempt \(attempt)); starting B again")
                attempt += 1
            }
        }

        /// Turns A's advertising off and on once and waits until B's relay has passed on the report that makes.
        func pulse() async throws {
            let before = scanner.reportsForwarded
            advertiser.pulseAdvertising()
            try await waitUntil("the report of a pulse") {
                scanner.reportsForwarded > before && !advertiser.injectionsPending
            }
        }
    }

    @Test("agent B publishes agent A's iBeacon, heard through btvirt, with the RSSI the relay put in the reports")
    func scannerPublishesAdvertiser() async throws {
        let air = try await Air(scannerRelay: .init(rssi: Self.rssi))
        let tag = try #require(Self.tag)
        try await observing(air.broker, agent: air.scannerID) { observer in
            let advertiser = try await air.startAdvertiser()
            let scanner = try await air.startScanner()
            // A third agent straight on btvirt: its reports say RSSI 127, which is no reading.
            let direct = try AgentRun(
                [
                    "--id", "direct-\(UInt16.random(in: 0...UInt16.max))", "--site", site, "--broker",
                    "mqtt://\(air.broker.host):\(air.broker.port)", "--device", "h4:\(air.emulator.lowEnergy)",
                    "--no-advertise",
                ], in: air.scratch, name: "direct")
            try await waitUntil("the direct agent scanning", agent: direct) { direct.output.contains("scanning on") }
            for _ in 0..<5 { try await air.pulse() }
            let reports = air.scanner.reportsForwarded
            #expect(reports >= 5)
            try await waitUntil("\(reports) adverts published", agent: scanner) {
                (try? ReceivedBatches(observer, agent: air.scannerID))?.adverts[tag] ?? 0 >= reports
            }
            let batches = try ReceivedBatches(observer, agent: air.scannerID)
            #expect(batches.rejected == 0)
            #expect(batches.adverts == [tag: reports], "only A's beacon, every report once")
            let readings = batches.unique.flatMap(\.accepted)
            #expect(!readings.isEmpty)
            #expect(readings.allSatisfy { $0.tag == tag && $0.rssi == Double(Self.rssi) && $0.power == -59 })
            #expect(Set(batches.unique.map(\.agent.rawValue)) == [air.scannerID])
            // btvirt's LE-only controller has no extended scanning: legacy commands.
            #expect(air.scanner.commands.contains(0x200C) && !air.scanner.commands.contains(0x2042))
            #expect(scanner.output.contains("passive, legacy scanning"), "\(scanner.output)")

            for run in [scanner, advertiser, direct] { run.process.send(SIGTERM) }
            #expect(try await scanner.exitCode(within: .seconds(30)) == 0, "\(scanner.output)")
            #expect(try await advertiser.exitCode(within: .seconds(30)) == 0, "\(advertiser.output)")
            #expect(try await direct.exitCode(within: .seconds(30)) == 0, "\(direct.output)")
            // The direct agent heard A too, with RSSI 127: dropped and counted, never published as +127 dBm.
            #expect(direct.output.contains("rssi-unavailable="), "\(direct.output)")
            #expect((direct.counter("sightings") ?? -1) == 0, "\(direct.output)")
            #expect((direct.counter("events") ?? 0) > 0, "\(direct.output)")
            // Leaving, each agent turned its controller's scanning (and A its advertising) off.
            #expect(air.scanner.commands.last == 0x200C, "B's last command: scanning off")
            #expect(air.advertiser.commands.last == 0x200A, "A's last command: advertising off")
        }
    }
}

extension AgentEmulatorTests {
    @Test("when btvirt dies mid-scan, each agent names its controller, retries with backoff, then scans again")
    func controllerVanishes() async throws {
        let air = try await Air(scannerRelay: .init(rssi: Self.rssi))
        let tag = try #require(Self.tag)
        try await observing(air.broker, agent: air.scannerID) { observer in
            let advertiser = try await air.startAdvertiser()
            let scanner = try await air.startScanner()
            try await air.pulse()
            let heardBefore = air.scanner.reportsForwarded
            try await waitUntil("the first adverts published", agent: scanner) {
                (try? ReceivedBatches(observer, agent: air.scannerID))?.adverts[tag] ?? 0 >= heardBefore
            }

            air.emulator.stop()
            let scannerName = "h4:\(air.scanner.path)"
            let advertiserName = "h4:\(air.advertiser.path)"
            try await waitUntil("B naming its lost controller", agent: scanner) {
                scanner.output.contains("error: Bluetooth controller \(scannerName) went away")
            }
            try await waitUntil("A naming its lost controller", agent: advertiser) {
                advertiser.output.contains("error: Bluetooth controller \(advertiserName) went away")
            }
            // Retries, each wait twice the one before: 1 s, then 2 s, then 4 s between attempts.
            try await waitUntil("B's second attempt", agent: scanner) {
                scanner.output.contains("again (attempt 2)")
            }
            #expect(scanner.output.contains("again (attempt 1)") && scanner.output.contains("next attempt in 2.0 s"))
            #expect(scanner.output.contains("again (attempt 2)") && scanner.output.contains("next attempt in 4.0 s"))
            #expect(scanner.process.isRunning && advertiser.process.isRunning, "an agent exited:\n\(scanner.output)")

            try air.emulator.restart()
            try await waitUntil("B scanning again", agent: scanner) {
                scanner.output.contains("Bluetooth controller \(scannerName) is back after")
            }
            try await waitUntil("A advertising again", agent: advertiser) {
                advertiser.output.contains("Bluetooth controller \(advertiserName) is back after")
            }
            #expect(advertiser.output.contains("advertising \(tag)"))
            // The new controllers share the new air: B hears A again, through the same process and broker session.
            try await air.pulse()
            let heard = air.scanner.reportsForwarded
            #expect(heard > heardBefore)
            try await waitUntil("adverts heard after the emulator came back", agent: scanner) {
                (try? ReceivedBatches(observer, agent: air.scannerID))?.adverts[tag] ?? 0 >= heard
            }
            #expect(air.scanner.accepted >= 4, "the first connection, two failed attempts, the one that worked")

            scanner.process.send(SIGTERM)
            advertiser.process.send(SIGTERM)
            #expect(try await scanner.exitCode(within: .seconds(30)) == 0, "\(scanner.output)")
            #expect(try await advertiser.exitCode(within: .seconds(30)) == 0, "\(advertiser.output)")
            let built = try #require(scanner.counter("batches"), "\(scanner.output)")
            try await waitUntil("\(built) batches") {
                (try? ReceivedBatches(observer, agent: air.scannerID))?.unique.count ?? 0 >= built
            }
            let batches = try ReceivedBatches(observer, agent: air.scannerID)
            // One run throughout: one epoch, seqs without a gap (empty windows while the controller was away).
            #expect(Set(batches.raw.map(\.epoch)).count == 1)
            #expect(batches.unique.map(\.seq) == Array(0..<built))
            #expect(batches.adverts == [tag: heard])
        }
    }
}

extension AgentEmulatorTests {
    @Test("a scan that goes silent after steady reports is restarted by the watchdog, and btvirt reports A again")
    func watchdogRestartsSilentScan() async throws {
        let air = try await Air(scannerRelay: .init(rssi: Self.rssi))
        let tag = try #require(Self.tag)
        try await observing(air.broker, agent: air.scannerID) { observer in
            let advertiser = try await air.startAdvertiser()
            let scanner = try await air.startScanner(["--watchdog-timeout", "5"])
            // The watchdog arms after 10 reports since the scan started: B's scan start gave one, the pulses the rest.
            for _ in 0..<10 { try await air.pulse() }
            let steady = air.scanner.reportsForwarded
            #expect(steady >= 11)
            let setUps = air.scanner.commands.filter { $0 == 0x200B }.count
            // Then nothing: A keeps advertising, but btvirt reports only when scanning or advertising is enabled.
            try await waitUntil("the watchdog's restart", agent: scanner) {
                scanner.output.contains("restarting the scan") && scanner.output.contains("scan restarted on h4:")
            }
            // Re-enabling the scan makes btvirt report A once more: a reading the pulses did not cause.
            try await waitUntil("the restarted scan's report", agent: scanner) {
                air.scanner.reportsForwarded > steady
            }
            try await waitUntil("the restarted scan's reading published", agent: scanner) {
                (try? ReceivedBatches(observer, agent: air.scannerID))?.adverts[tag] ?? 0 > steady
            }
            #expect(air.scanner.commands.filter { $0 == 0x200B }.count > setUps, "the scan was set up again")

            scanner.process.send(SIGTERM)
            advertiser.process.send(SIGTERM)
            #expect(try await scanner.exitCode(within: .seconds(30)) == 0, "\(scanner.output)")
            #expect(try await advertiser.exitCode(within: .seconds(30)) == 0, "\(advertiser.output)")
            #expect((scanner.counter("scan-restarts") ?? 0) >= 1, "\(scanner.output)")
            // The watchdog restarts the scan; it never reopens the controller.
            #expect(!scanner.output.contains("opening it again"), "\(scanner.output)")
            let readings = try ReceivedBatches(observer, agent: air.scannerID).unique.flatMap(\.accepted)
            #expect(readings.allSatisfy { $0.tag == tag && $0.rssi == Double(Self.rssi) })
        }
    }
}

extension AgentEmulatorTests {
    /// btvirt sets no extended-scanning bit in either controller's supported commands; its LE-only controller refuses
    /// the extended commands (Unknown HCI Command), its dual-mode one accepts them. B's relay can claim the bits.
    @Test(
        "B scans with the extended commands where the supported-commands bits have them, with legacy ones otherwise",
        arguments: [
            (dualMode: false, claimsExtended: false, expected: "legacy"),
            (dualMode: true, claimsExtended: false, expected: "legacy"),
            (dualMode: true, claimsExtended: true, expected: "extended"),
            // The bits claimed, the commands refused as unknown: legacy after all.
            (dualMode: false, claimsExtended: true, expected: "legacy"),
        ])
    func extendedOrLegacy(dualMode: Bool, claimsExtended: Bool, expected: String) async throws {
        let air = try await Air(
            scannerSocket: { dualMode ? $0.dualMode : $0.lowEnergy },
            scannerRelay: .init(rssi: Self.rssi, claimsExtendedScanning: claimsExtended))
        let tag = try #require(Self.tag)
        try await observing(air.broker, agent: air.scannerID) { observer in
            let advertiser = try await air.startAdvertiser()
            let scanner = try await air.startScanner()
            #expect(scanner.output.contains("(passive, \(expected) scanning)"), "\(scanner.output)")
            let commands = air.scanner.commands
            let extendedParameters = commands.firstIndex(of: 0x2041)
            let legacyParameters = commands.firstIndex(of: 0x200B)
            switch (expected, claimsExtended) {
            case ("extended", _):
                #expect(extendedParameters != nil && commands.contains(0x2042))
                #expect(legacyParameters == nil && !commands.contains(0x200C), "no legacy scan command: \(commands)")
            case (_, true):
                // Tried, refused, and legacy set up after.
                let tried = try #require(extendedParameters, "\(commands)")
                let fellBack = try #require(legacyParameters, "\(commands)")
                #expect(tried < fellBack)
                #expect(commands.last == 0x200C)
            default:
                #expect(extendedParameters == nil && !commands.contains(0x2042), "no extended command: \(commands)")
                #expect(legacyParameters != nil && commands.contains(0x200C))
            }
            for _ in 0..<2 { try await air.pulse() }
            let reports = air.scanner.reportsForwarded
            try await waitUntil("\(reports) adverts published", agent: scanner) {
                (try? ReceivedBatches(observer, agent: air.scannerID))?.adverts[tag] ?? 0 >= reports
            }
            #expect(try ReceivedBatches(observer, agent: air.scannerID).adverts == [tag: reports])
            scanner.process.send(SIGTERM)
            advertiser.process.send(SIGTERM)
            #expect(try await scanner.exitCode(within: .seconds(30)) == 0, "\(scanner.output)")
            #expect(try await advertiser.exitCode(within: .seconds(30)) == 0, "\(advertiser.output)")
            // Scanning is turned off with the commands that turned it on.
            #expect(air.scanner.commands.last == (expected == "extended" ? 0x2042 : 0x200C))
        }
    }
}

/// Polls `condition`; on timeout the error carries the agent's output.
func waitUntil(
    _ what: String, agent: AgentRun, timeout: Duration = .seconds(60), _ condition: () -> Bool
) async throws {
    do {
        try await waitUntil(what, timeout: timeout, condition)
    } catch {
        throw HarnessError("\(error)\n\(agent.output)")
    }
}
