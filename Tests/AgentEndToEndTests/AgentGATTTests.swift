import BrokerFixture
import ControllerEmulator
import Foundation
import GATTPeripheral
import Glibc
import Testing
import WhereaboutsAdvertising
import WhereaboutsCore
import WhereaboutsGATT
import WhereaboutsHCI
import WhereaboutsMQTT
import WhereaboutsWire

/// `whereabouts-agent --gatt` on BlueZ's emulator with a real mosquitto: GATT jobs come in on the agent's requests
/// topic, run on the controller it scans with, against our test peripheral on a second emulated controller, and
/// every job is answered on the results topic. The agent hears the peripheral's iBeacon through an H4 relay that
/// gives reports an RSSI (btvirt says 127, no reading), and so knows which address a tag was heard from.
@Suite(
    "whereabouts-agent --gatt on btvirt, with a real mosquitto", .serialized, .timeLimit(.minutes(3)),
    .enabled(if: BtvirtEmulator.isAvailable, "btvirt cannot run here (see the printed reason)"))
struct AgentGATTTests {
    /// The test peripheral's iBeacon (connectable) and a second, non-connectable beacon on a third controller.
    static var peripheralBeacon: IBeaconAdvertisement { get throws { try beacon(minor: 20) } }
    static var plainBeacon: IBeaconAdvertisement { get throws { try beacon(minor: 21) } }

    static func beacon(minor: UInt16) throws -> IBeaconAdvertisement {
        IBeaconAdvertisement(uuid: try #require(siteUUID), major: 7, minor: minor)
    }

    /// One test's air: btvirt, a broker, the peripheral serving, a plain beacon, and the agent's relay.
    final class Air {
        let scratch: ScratchDirectory
        let emulator: BtvirtEmulator
        let broker: MosquittoBroker
        let relay: H4Relay
        let peripheralHost: HCIHost
        let peripheral: GATTPeripheral
        let beaconHost: HCIHost
        /// The agent's id: its account's name when it has one (the ACL's `%u`).
        let agentID: String
        let agentAccount: (String, String)?

        init(
            broker options: BrokerOptions = BrokerOptions(), agentAccount: (String, String)? = nil,
            configurationLength: Int = BeaconConfiguration.length
        ) async throws {
            self.agentAccount = agentAccount
            agentID = agentAccount?.0 ?? "gatt-\(UInt16.random(in: 0...UInt16.max))"
            scratch = try ScratchDirectory()
            emulator = try BtvirtEmulator()
            broker = try await MosquittoBroker.start(options)
            relay = try H4Relay(
                listeningAt: scratch.path + "/agent.sock", upstream: emulator.lowEnergy, settings: .init(rssi: -61))
            peripheralHost = try await GATTPeripheral.initializedHost(at: emulator.lowEnergy)
            let configuration = BeaconConfiguration(
                IBeaconAdvertisement(
                    uuid: try #require(BeaconUUID(bytes: [UInt8](0..<16))), major: 1, minor: 2, measuredPower: -59))
            peripheral = try await GATTPeripheral(
                host: peripheralHost,
                server: AttributeServer(
                    battery: 87, manufacturer: "Whereabouts", model: "WB-Tag-1", firmware: "1.4.2", name: "WB tag",
                    configuration: configuration, configurationLength: configurationLength),
                advertising: try AgentGATTTests.peripheralBeacon.advertisingData)
            beaconHost = try await GATTPeripheral.initializedHost(at: emulator.lowEnergy)
        }

        deinit {
            peripheral.stop()
            peripheralHost.close()
            beaconHost.close()
            broker.cleanup()
        }

        var requestsTopic: String { "whereabouts/v1/\(site)/agents/\(agentID)/gatt/requests" }
        var resultsTopic: String { "whereabouts/v1/\(site)/agents/\(agentID)/gatt/results" }

        /// Starts the agent with `--gatt`, scanning, and waits until it scans (btvirt now and then drops a
        /// controller connection at once: then it starts it again, at most twice more).
        func startAgent() async throws -> AgentRun {
            var arguments = [
                "--id", agentID, "--site", site, "--broker", "mqtt://\(broker.host):\(broker.port)",
                "--device", "h4:\(relay.path)", "--reconnect-max", "2", "--keepalive", "5", "--log-level", "debug",
                "--no-advertise", "--gatt",
            ]
            if let (user, password) = agentAccount {
                let file = scratch.path + "/agent.password"
                try "\(password)\n".write(toFile: file, atomically: true, encoding: .utf8)
                arguments += ["--username", user, "--password-file", file]
            }
            for attempt in 1...3 {
                let run = try AgentRun(arguments, in: scratch, name: "agent-\(attempt)")
                try await waitUntil("the agent scanning", agent: run) {
                    run.output.contains("scanning on h4:") || !run.process.isRunning
                }
                if run.output.contains("scanning on h4:") { return run }
                _ = try await run.exitCode(within: .seconds(5))
            }
            throw HarnessError("the agent did not start scanning")
        }

        /// Turns the peripheral's advertising off and on until the agent has published a reading of it: it then
        /// knows the peripheral's address, and (its readings coming after its subscription) takes jobs.
        func heard(_ observer: Observer, tag: TagIdentity, pulse: () async throws -> Void) async throws {
            var patience = Patience(.seconds(60))
            func published() -> Bool? {
                (try? ReceivedBatches(observer, agent: agentID))?.adverts[tag] ?? 0 > 0 ? true : nil
            }
            while published() == nil {
                guard !patience.isExhausted() else { throw HarnessError("no reading of \(tag) was published") }
                try await pulse()
                _ = try? await poll("a reading of \(tag)", timeout: .seconds(3)) { published() }
            }
        }

        /// Turns the plain beacon's advertising off and on once; waits until the relay passed the report on.
        func pulseBeacon() async throws {
            let before = relay.reportsForwarded
            try? await beaconHost.stopAdvertising()
            try await beaconHost.startAdvertising(
                try AgentGATTTests.plainBeacon, parameters: try #require(LEAdvertisingParameters()))
            try await waitUntil("the beacon's report") { relay.reportsForwarded > before }
        }

        /// Publishes a job as `account` (nil: anonymous); returns the broker's acknowledgement.
        func send(_ request: GATTJobRequest, as account: (String, String)? = nil) async throws -> MQTTReasonCode {
            try await publishOnce(broker, topic: requestsTopic, payload: request.payload, account: account)
        }

        /// The result of job `id`, once the observer has it.
        func result(_ observer: Observer, _ id: GATTJobID) async throws -> GATTJobResult {
            try await poll("the result of \(id)", timeout: .seconds(60)) {
                observer.payloads(on: resultsTopic).compactMap { try? GATTJobResult(payload: $0) }.first { $0.id == id }
            }
        }
    }

    /// A job on `tag`, by default the peripheral's.
    static func job(
        _ id: String, _ operation: GATTOperation, tag: TagIdentity? = nil, deadline: Double = 10
    ) throws -> GATTJobRequest {
        GATTJobRequest(
            id: try #require(GATTJobID(id)), tag: try tag ?? peripheralBeacon.tag, address: nil, operation: operation,
            deadline: deadline)
    }

    /// Runs `body` with the peripheral serving and the agent started and hearing it; stops the agent after and
    /// expects it to exit 0.
    static func withAgent(
        _ air: Air, observerAccount: (String, String)? = nil,
        _ body: (Observer, AgentRun) async throws -> Void
    ) async throws {
        let peripheral = air.peripheral
        async let served: Void = peripheral.serve()
        let outcome: Result<Void, any Error>
        do {
            try await observing(air.broker, agent: air.agentID, account: observerAccount) { observer in
                let agent = try await air.startAgent()
                try await air.heard(observer, tag: try peripheralBeacon.tag) { try await air.peripheral.readvertise() }
                try await body(observer, agent)
                agent.process.send(SIGTERM)
                #expect(try await agent.exitCode(within: .seconds(30)) == 0, "\(agent.output)")
                #expect(agent.summary["gatt[received"] != nil, "the summary counts the jobs: \(agent.summary)")
            }
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        air.peripheral.stop()
        await served
        try outcome.get()
    }

    @Test("battery, info and provision jobs by tag: read, read, write and read back, each answered on the broker")
    func batteryInfoProvision() async throws {
        let air = try await Air()
        try await Self.withAgent(air) { observer, agent in
            #expect(try await air.send(try Self.job("battery-1", .battery)) == .success)
            let battery = try await air.result(observer, try #require(GATTJobID("battery-1")))
            #expect(battery.status == .ok, "\(agent.output)")
            #expect(battery.tag == (try Self.peripheralBeacon.tag))
            #expect(battery.values == GATTJobValues(battery: 87))

            _ = try await air.send(try Self.job("info-1", .info))
            let info = try await air.result(observer, try #require(GATTJobID("info-1")))
            #expect(
                info.values == GATTJobValues(manufacturer: "Whereabouts", model: "WB-Tag-1", firmware: "1.4.2"),
                "\(info.status)")

            let wanted = BeaconProvisioning(
                uuid: try #require(BeaconUUID("11111111-2222-4333-8444-555555555555")), major: 300, minor: 2,
                power: -61)
            _ = try await air.send(try Self.job("provision-1", .provision(wanted)))
            let provisioned = try await air.result(observer, try #require(GATTJobID("provision-1")))
            #expect(provisioned.status == .ok && provisioned.values == GATTJobValues(provisioned: wanted))
            let written = air.peripheral.server.value(AttributeServer.configurationHandle)
            #expect(written.flatMap(BeaconConfiguration.init(value:)).map(\.advertisement.major) == 300)
        }
    }

    @Test("a wrong-length write is attError 0x0D naming the attribute; a non-connectable tag is notConnectable 0x3E")
    func failures() async throws {
        // The peripheral's firmware takes 20 bytes: our 21-byte configuration is refused.
        let air = try await Air(configurationLength: 20)
        try await air.beaconHost.startAdvertising(
            try Self.plainBeacon, parameters: try #require(LEAdvertisingParameters()))
        try await Self.withAgent(air) { observer, agent in
            let wanted = BeaconProvisioning(
                uuid: try #require(BeaconUUID("11111111-2222-4333-8444-555555555555")), major: 3, minor: 4, power: -60)
            _ = try await air.send(try Self.job("provision-bad", .provision(wanted)))
            let refused = try await air.result(observer, try #require(GATTJobID("provision-bad")))
            #expect(
                refused.status
                    == .attError(
                        code: 0x0D, handle: AttributeServer.configurationHandle,
                        uuid: "\(BeaconConfiguration.characteristic)".lowercased()), "\(agent.output)")

            try await air.heard(observer, tag: try Self.plainBeacon.tag) { try await air.pulseBeacon() }
            _ = try await air.send(try Self.job("beacon-battery", .battery, tag: try Self.plainBeacon.tag))
            let beacon = try await air.result(observer, try #require(GATTJobID("beacon-battery")))
            #expect(beacon.status == .notConnectable(code: 0x3E), "\(agent.output)")
            // The tool says so in words, with exit status 1 (here with --agent: no locator runs).
            let outputPath = air.scratch.path + "/tool.out"
            let tool = try ChildProcess(
                executable: try Self.sibling("whereabouts"),
                arguments: [
                    "tag", "battery", "\(try Self.plainBeacon.tag)", "--agent", air.agentID, "--site", site, "--broker",
                    "mqtt://\(air.broker.host):\(air.broker.port)",
                ], outputPath: outputPath)
            #expect(await tool.waitForExit(timeout: .seconds(60)))
            let printed = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            #expect(tool.exitCode == 1, "\(printed)")
            #expect(
                printed.contains("the tag did not take a connection (HCI status 0x3E) (agent \(air.agentID))"),
                "\(printed)")

            // A tag the agent never heard: nothing to connect to.
            let stranger = try Self.beacon(minor: 99).tag
            _ = try await air.send(try Self.job("stranger", .battery, tag: stranger))
            #expect(
                try await air.result(observer, try #require(GATTJobID("stranger"))).status == .notConnectable(code: nil)
            )
        }
    }

    @Test("a peripheral gone silent mid-job times out, and the agent goes on scanning with no reading lost")
    func silentPeripheral() async throws {
        let air = try await Air()
        try await air.beaconHost.startAdvertising(
            try Self.plainBeacon, parameters: try #require(LEAdvertisingParameters()))
        try await Self.withAgent(air) { observer, agent in
            // It still takes the connection (its controller does), but its host answers nothing more.
            air.peripheral.stop()
            _ = try await air.send(try Self.job("silent", .battery, deadline: 3))
            for _ in 0..<5 { try await air.pulseBeacon() }
            let silent = try await air.result(observer, try #require(GATTJobID("silent")))
            #expect(silent.status == .timeout, "\(agent.output)")
            for _ in 0..<3 { try await air.pulseBeacon() }
            let reports = air.relay.reportsForwarded
            try await waitUntil("\(reports) adverts published", agent: agent) {
                (try? ReceivedBatches(observer, agent: air.agentID))?.adverts.values.reduce(0, +) ?? 0 >= reports
            }
            let adverts = try ReceivedBatches(observer, agent: air.agentID).adverts
            #expect(adverts.values.reduce(0, +) == reports, "every report the agent was given is published once")
            #expect(adverts[try Self.plainBeacon.tag] ?? 0 >= 8, "\(adverts)")
            #expect(agent.process.isRunning)
        }
    }

    @Test("what a tag's link sends that the agent cannot use is dropped, the job goes on, and the summary counts it")
    func linkDropsCounted() async throws {
        let air = try await Air()
        var run: AgentRun?
        try await Self.withAgent(air) { observer, agent in
            run = agent
            // Before its first answer the tag sends a frame on a channel the agent does not serve (0x0040) and a
            // signalling command cut short (2 of its 4 header bytes).
            air.peripheral.sendBeforeNextResponse([
                (channel: 0x0040, payload: [1, 2, 3]), (channel: SignalingChannel.channel, payload: [0x12, 0x01]),
            ])
            _ = try await air.send(try Self.job("junk-battery", .battery))
            let battery = try await air.result(observer, try #require(GATTJobID("junk-battery")))
            #expect(battery.values == GATTJobValues(battery: 87), "\(battery.status)")
        }
        let output = try #require(run).output
        let summary = output.split(separator: "\n").last { $0.contains("summary:") } ?? ""
        #expect(summary.contains(" gatt-link-drops[unknown-channel=1,malformed-signaling=1]"), "\(output)")
    }

    @Test("with the shipped ACL only the operator's job reaches the agent; another account's is refused by the broker")
    func onlyTheOperator() async throws {
        var options = BrokerOptions()
        options.allowAnonymous = false
        options.aclRules = try Self.shippedACL()
        let agentID = "gatt-acl-\(UInt16.random(in: 0...UInt16.max))"
        options.accounts = [agentID: "agent-secret", "operator": "operator-secret", "locator": "locator-secret"]
        let air = try await Air(broker: options, agentAccount: (agentID, "agent-secret"))
        try await Self.withAgentNamed(air, agentID) { observer, operatorView in
            let locator = try await air.send(try Self.job("from-locator", .battery), as: ("locator", "locator-secret"))
            #expect(locator.isFailure, "\(locator)")
            let own = try await air.send(try Self.job("from-agent", .battery), as: (agentID, "agent-secret"))
            #expect(own.isFailure, "\(own)")
            let granted = try await air.send(
                try Self.job("from-operator", .battery), as: ("operator", "operator-secret"))
            #expect(granted == .success)
            let result = try await air.result(operatorView, try #require(GATTJobID("from-operator")))
            #expect(result.values?.battery == 87)
            let answered = operatorView.payloads(on: air.resultsTopic).compactMap { try? GATTJobResult(payload: $0).id }
            #expect(answered.map(\.rawValue) == ["from-operator"], "the refused jobs never reached the agent")
        }
    }

    /// ``withAgent(_:observerAccount:_:)`` for an agent with an account: readings seen as the locator, results as
    /// the operator (the only reader of results).
    static func withAgentNamed(
        _ air: Air, _ agentID: String, _ body: (Observer, Observer) async throws -> Void
    ) async throws {
        try await observing(air.broker, agent: agentID, account: ("operator", "operator-secret"), name: "operator") {
            operatorView in
            try await withAgent(air, observerAccount: ("locator", "locator-secret")) { observer, _ in
                try await body(observer, operatorView)
            }
        }
    }

    static func shippedACL() throws -> [String] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../deploy/mosquitto/whereabouts.acl").standardizedFileURL.path
        return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }
}

/// Publishes one message at QoS 1 as `account` (nil: anonymous) and returns the broker's acknowledgement.
func publishOnce(
    _ broker: MosquittoBroker, topic: String, payload: String, account: (String, String)?
) async throws -> MQTTReasonCode {
    let client = try MQTTClient(
        MQTTClientConfiguration(
            host: broker.host, port: broker.port, clientID: "publisher-\(UInt32.random(in: 0...UInt32.max))",
            username: account?.0, password: account?.1, keepAlive: .seconds(5), connectTimeout: .seconds(5)))
    return try await client.withSession { client in
        var messageID: Int?
        for await event in client.events {
            switch event {
            case .connected:
                messageID = try client.publish(topic: topic, payload: Array(payload.utf8), qos: .atLeastOnce)
            case .acknowledged(let id, let reason) where id == messageID:
                return reason
            case .connectionFailed(let failure):
                throw HarnessError("cannot publish: \(failure)")
            default:
                break
            }
        }
        throw HarnessError("the publisher stopped before an acknowledgement")
    }
}
