import BrokerFixture
import Foundation
import Glibc
import Testing
import WhereaboutsAdvertising
import WhereaboutsCore
import WhereaboutsMQTT
import WhereaboutsWire

@Suite("whereabouts-agent end to end, with a real mosquitto", .serialized, .timeLimit(.minutes(3)))
struct AgentEndToEndTests {
    static let base = 1_764_475_200.25
    static let foreign = BeaconUUID("11111111-2222-3333-4444-555555555555")

    func agentArguments(_ agent: String, broker: MosquittoBroker, capture: String, speed: String) -> [String] {
        [
            "--id", agent, "--site", site, "--broker", "mqtt://\(broker.host):\(broker.port)",
            "--source", "btsnoop:\(capture)", "--replay-speed", speed, "--reconnect-max", "2", "--keepalive", "5",
        ]
    }

    @Test("a capture replayed fast reaches the broker as contiguous batches that count every site advert")
    func fastReplay() async throws {
        let scratch = try ScratchDirectory()
        var capture = Capture()
        // Three site tags at several strengths over 5 s, a foreign beacon, and real non-beacon traffic.
        for step in 0..<50 {
            let time = Self.base + Double(step) * 0.1
            capture.iBeacon(uuid: siteUUID, major: 1, minor: 1, rssi: Int8(-58 - step % 5), at: time)
            if step % 2 == 0 { capture.iBeacon(uuid: siteUUID, major: 1, minor: 2, rssi: -75, at: time + 0.01) }
            if step % 7 == 0 {
                capture.iBeacon(uuid: siteUUID, major: 2, minor: 3, rssi: step == 14 ? -99 : -66, at: time + 0.02)
            }
            if step % 5 == 0 { capture.iBeacon(uuid: Self.foreign, major: 1, minor: 1, rssi: -50, at: time + 0.03) }
        }
        for (index, event) in NoiseEvents.all.enumerated() {
            capture.raw(event, at: Self.base + Double(index) * 0.12 + 0.05)
        }
        try #require(NoiseEvents.all.count == 40)
        let path = scratch.path + "/capture.btsnoop"
        try capture.write(to: path)

        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        let agent = "e2e-fast-\(UInt16.random(in: 0...UInt16.max))"
        let statusTopic = "whereabouts/v1/\(site)/agents/\(agent)/status"
        try await observing(broker, agent: agent) { observer in
            let run = try AgentRun(agentArguments(agent, broker: broker, capture: path, speed: "fast"), in: scratch)
            let code = try await run.exitCode(within: .seconds(30))
            #expect(code == 0, "\(run.output)")
            let built = try #require(run.counter("batches"), "\(run.output)")
            try await waitUntil("\(built) batches") {
                (try? ReceivedBatches(observer, agent: agent))?.unique.count ?? 0 >= built
            }
            try await waitUntil("offline") { observer.payloads(on: statusTopic).last == "offline" }

            let batches = try ReceivedBatches(observer, agent: agent)
            #expect(batches.rejected == 0)
            #expect(batches.readingRejections == 0)
            #expect(batches.unique.map(\.seq) == Array(0..<built))
            #expect(Set(batches.raw.map(\.epoch)).count == 1)
            #expect(batches.adverts == capture.expected, "\(run.output)")
            #expect(capture.expectedTotal == 50 + 25 + 8)
            #expect(run.counter("events") == capture.packets.count)
            #expect(run.counter("sightings") == capture.expectedTotal)
            #expect(run.counter("malformed") == 0)
            #expect(run.counter("dropped") == 0)
            #expect(observer.payloads(on: statusTopic).first == "online")
        }
        // A late subscriber sees the retained goodbye.
        try await observing(broker, agent: agent) { observer in
            try await waitUntil("the retained status") { !observer.messages.isEmpty }
            let status = try #require(observer.messages.first { $0.topic == statusTopic })
            #expect(status.retain)
            #expect(String(decoding: status.payload, as: UTF8.self) == "offline")
        }
    }

    @Test("batches buffered through a 30 s broker outage all arrive, in order, without a gap or a drop")
    func brokerOutage() async throws {
        let scratch = try ScratchDirectory()
        var capture = Capture()
        // 45 s at the recorded pace: three tags, each every 200 ms.
        for step in 0..<225 {
            let time = Self.base + Double(step) * 0.2
            for minor in UInt16(1)...3 {
                capture.iBeacon(
                    uuid: siteUUID, major: 1, minor: minor, rssi: Int8(-60 - Int(minor) * 5 - step % 3),
                    at: time + Double(minor) * 0.05)
            }
        }
        let path = scratch.path + "/capture.btsnoop"
        try capture.write(to: path)

        var options = BrokerOptions()
        options.persistence = true
        let broker = try await MosquittoBroker.start(options)
        defer { broker.cleanup() }
        let agent = "e2e-outage-\(UInt16.random(in: 0...UInt16.max))"
        try await observing(broker, agent: agent, persistent: true) { observer in
            let run = try AgentRun(agentArguments(agent, broker: broker, capture: path, speed: "1"), in: scratch)
            try await waitUntil("the first batch") {
                (try? ReceivedBatches(observer, agent: agent))?.raw.isEmpty == false
            }
            try await Task.sleep(for: .seconds(4))
            await broker.stop()
            try await Task.sleep(for: .seconds(30))
            try await broker.restart()
            let code = try await run.exitCode(within: .seconds(60))
            #expect(code == 0, "\(run.output)")
            let built = try #require(run.counter("batches"), "\(run.output)")
            try await waitUntil("\(built) batches", timeout: .seconds(30)) {
                (try? ReceivedBatches(observer, agent: agent))?.unique.count ?? 0 >= built
            }

            let batches = try ReceivedBatches(observer, agent: agent)
            let firstArrivals = batches.unique.map(\.seq)
            #expect(firstArrivals == Array(0..<built), "first arrivals out of order or with a gap")
            #expect(Set(batches.raw.map(\.epoch)).count == 1)
            #expect(batches.adverts == capture.expected, "\(run.output)")
            #expect(run.counter("dropped") == 0, "\(run.output)")
            #expect((run.counter("buffer-peak") ?? 0) >= 25, "the outage should have buffered about 30 batches")
            print(
                "agent outage: \(built) batches, \(batches.raw.count) received, \(batches.duplicates) raw duplicates, "
                    + "buffer peak \(run.counter("buffer-peak") ?? -1), republished \(run.counter("republished") ?? -1)"
            )
        }
    }

    @Test("SIGTERM flushes the current window as a last batch, publishes offline and exits 0")
    func sigterm() async throws {
        let scratch = try ScratchDirectory()
        var capture = Capture()
        for step in 0..<600 {
            capture.iBeacon(uuid: siteUUID, major: 1, minor: 5, rssi: -64, at: Self.base + Double(step) * 0.1)
        }
        let path = scratch.path + "/long.btsnoop"
        try capture.write(to: path)
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        let agent = "e2e-term-\(UInt16.random(in: 0...UInt16.max))"
        let statusTopic = "whereabouts/v1/\(site)/agents/\(agent)/status"
        try await observing(broker, agent: agent) { observer in
            let run = try AgentRun(agentArguments(agent, broker: broker, capture: path, speed: "1"), in: scratch)
            try await waitUntil("three batches") { (try? ReceivedBatches(observer, agent: agent))?.raw.count ?? 0 >= 3 }
            run.process.send(SIGTERM)
            #expect(try await run.exitCode(within: .seconds(15)) == 0, "\(run.output)")
            let built = try #require(run.counter("batches"), "\(run.output)")
            try await waitUntil("offline") { observer.payloads(on: statusTopic).last == "offline" }
            let batches = try ReceivedBatches(observer, agent: agent)
            #expect(batches.unique.map(\.seq) == Array(0..<built))
            #expect(run.counter("acked") == built)
            // Every advert replayed before the signal is in a batch, the partial last window included.
            let heard = try #require(run.counter("sightings"))
            #expect(heard > 0 && heard < 600)
            #expect(batches.adverts.values.reduce(0, +) == heard)
            #expect(run.output.contains("signal 15"))
        }
    }

    @Test("over TLS with its own account and the deployed ACL, the agent publishes its batches and status")
    func tlsAndAccount() async throws {
        let scratch = try ScratchDirectory()
        var capture = Capture()
        for step in 0..<30 {
            capture.iBeacon(uuid: siteUUID, major: 1, minor: 4, rssi: -70, at: Self.base + Double(step) * 0.1)
        }
        let path = scratch.path + "/capture.btsnoop"
        try capture.write(to: path)
        let agent = "e2e-tls-\(UInt16.random(in: 0...UInt16.max))"
        let aclPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../deploy/mosquitto/whereabouts.acl").standardizedFileURL.path
        var options = BrokerOptions()
        options.allowAnonymous = false
        options.tls = true
        options.accounts = [agent: "agent-secret", "locator": "locator-secret"]
        options.aclRules = try String(contentsOfFile: aclPath, encoding: .utf8).split(separator: "\n").map(String.init)
        let broker = try await MosquittoBroker.start(options)
        defer { broker.cleanup() }
        let certificates = try #require(broker.certificates)
        let passwordFile = scratch.path + "/agent.password"
        try "agent-secret\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let statusTopic = "whereabouts/v1/\(site)/agents/\(agent)/status"
        try await observing(broker, agent: agent, account: ("locator", "locator-secret")) { observer in
            let run = try AgentRun(
                [
                    "--id", agent, "--site", site, "--broker", "mqtts://127.0.0.1:\(broker.port)",
                    "--ca-file", certificates.caFile, "--password-file", passwordFile,
                    "--source", "btsnoop:\(path)", "--replay-speed", "fast",
                ], in: scratch)
            #expect(try await run.exitCode(within: .seconds(30)) == 0, "\(run.output)")
            let built = try #require(run.counter("batches"), "\(run.output)")
            try await waitUntil("offline") { observer.payloads(on: statusTopic).last == "offline" }
            let batches = try ReceivedBatches(observer, agent: agent)
            #expect(batches.unique.map(\.seq) == Array(0..<built))
            #expect(batches.adverts == capture.expected)
            #expect(run.counter("refused") == 0)
        }
        // A wrong password is a runtime failure the agent names, not a retry loop.
        try "wrong\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let refused = try AgentRun(
            [
                "--id", agent, "--site", site, "--broker", "mqtts://127.0.0.1:\(broker.port)",
                "--ca-file", certificates.caFile, "--password-file", passwordFile,
                "--source", "btsnoop:\(path)", "--replay-speed", "1",
            ], in: scratch, name: "refused")
        #expect(try await refused.exitCode(within: .seconds(30)) == 1, "\(refused.output)")
        #expect(refused.output.contains("refused"), "\(refused.output)")
        // An account publishing as another agent: the ACL refuses every batch, and that is an exit status.
        try "agent-secret\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let impostor = try AgentRun(
            [
                "--id", "someone-else", "--username", agent, "--site", site, "--broker",
                "mqtts://127.0.0.1:\(broker.port)", "--ca-file", certificates.caFile, "--password-file", passwordFile,
                "--source", "btsnoop:\(path)", "--replay-speed", "fast",
            ], in: scratch, name: "impostor")
        #expect(try await impostor.exitCode(within: .seconds(30)) == 1, "\(impostor.output)")
        #expect((impostor.counter("refused") ?? 0) > 0, "\(impostor.output)")
        #expect(impostor.output.contains("readings were lost"), "\(impostor.output)")
    }

    @Test("malformed events and a truncated tail are counted, not fatal, and the good adverts still arrive")
    func badInput() async throws {
        let scratch = try ScratchDirectory()
        var capture = Capture()
        guard let uuid = siteUUID else { throw HarnessError("bad site UUID") }
        let good = IBeaconAdvertisement(uuid: uuid, major: 1, minor: 9).advertisingData
        let malformed: [[UInt8]] = [
            Capture.event(data: good, rssi: -60, plenAdjustment: 1),  // parameter length lies (too long)
            Capture.event(data: good, rssi: -60, plenAdjustment: -1),  // parameter length lies (too short)
            Capture.event(data: good, rssi: -60, count: 2),  // the report count lies
            Capture.event(data: good, rssi: -60, lengthByte: 40),  // a data length past the event
            Capture.event(data: Array(repeating: 0x02, count: 40), rssi: -60),  // more than 31 bytes of legacy data
            Capture.event(data: good, rssi: -60, trailing: [0xAA, 0xBB]),  // bytes after the last report
            [0x3E],  // truncated header
            [0x3E, 0x01, 0x02],  // no report count
            Capture.event(data: [0x1F, 0xFF, 0x4C, 0x00], rssi: -60),  // an AD structure longer than the data
            Capture.event(data: Array(good.prefix(25)), rssi: -60),  // an iBeacon cut short
            Capture.event(data: good, rssi: 127),  // RSSI unavailable: dropped, not malformed
        ]
        for (index, event) in malformed.enumerated() { capture.raw(event, at: Self.base + Double(index) * 0.2 + 0.1) }
        for step in 0..<20 {
            capture.iBeacon(uuid: siteUUID, major: 1, minor: 9, rssi: -61, at: Self.base + Double(step) * 0.15)
        }
        // A record cut off in the middle: the file ends inside it.
        let tailRecord = BtsnoopWriter(datalink: .monitor).record(
            BtsnoopPacket(time: Self.base + 5, event: Capture.event(data: good, rssi: -60)))
        let path = scratch.path + "/bad.btsnoop"
        try capture.write(to: path, appending: Array(tailRecord.prefix(30)))

        // What the agent must count, by the same decoder the agent uses.
        var oracle = SightingDecoder(filter: SightingFilter(siteUUID: uuid))
        for packet in capture.sorted { _ = oracle.sightings(in: packet.event, framing: .bare, time: packet.time) }
        #expect(oracle.counters.malformed == 10)

        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        let agent = "e2e-bad-\(UInt16.random(in: 0...UInt16.max))"
        try await observing(broker, agent: agent) { observer in
            let run = try AgentRun(agentArguments(agent, broker: broker, capture: path, speed: "fast"), in: scratch)
            let code = try await run.exitCode(within: .seconds(30))
            #expect(code == 0, "\(run.output)")
            let built = try #require(run.counter("batches"), "\(run.output)")
            try await waitUntil("\(built) batches") {
                (try? ReceivedBatches(observer, agent: agent))?.unique.count ?? 0 >= built
            }
            let batches = try ReceivedBatches(observer, agent: agent)
            #expect(batches.adverts == capture.expected)
            #expect(run.counter("events") == capture.packets.count)
            #expect(run.counter("malformed") == oracle.counters.malformed, "\(run.output)")
            #expect(run.output.contains("drops[\(oracle.counters.description)]"), "\(run.output)")
            #expect(run.output.contains("ends inside the record"), "\(run.output)")
        }
    }

    @Test(
        "on a machine without Bluetooth, --device hci0 exits 1 naming the missing kernel support",
        .enabled(if: AgentEndToEndTests.bluetoothMissing)
    )
    func missingAdapter() async throws {
        let scratch = try ScratchDirectory()
        let run = try AgentRun(
            ["--id", "no-radio", "--site", site, "--broker", "mqtt://127.0.0.1:1", "--device", "hci0"], in: scratch)
        let code = try await run.exitCode(within: .seconds(15))
        #expect(code == 1)
        #expect(run.output.contains("no Bluetooth support"), "\(run.output)")
        #expect(run.output.contains("hci0"))
    }

    @Test("bad usage exits 2 with a message, before touching a radio or a broker")
    func badUsage() async throws {
        let scratch = try ScratchDirectory()
        let run = try AgentRun(["--id", "bad/id", "--site", site, "--broker", "mqtt://127.0.0.1:1"], in: scratch)
        #expect(try await run.exitCode(within: .seconds(15)) == 2)
        #expect(run.output.contains("not a valid agent id"), "\(run.output)")
    }

    @Test(
        "a replay of an empty file or of a file that is not btsnoop fails at start, naming it",
        arguments: [("empty", ""), ("text", "not a capture, just words\n")])
    func replayOfNonCapture(name: String, content: String) async throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/\(name).btsnoop"
        try content.write(toFile: path, atomically: true, encoding: .utf8)
        let run = try AgentRun(
            ["--id", "replayer", "--site", site, "--broker", "mqtt://127.0.0.1:1", "--source", "btsnoop:\(path)"],
            in: scratch)
        #expect(try await run.exitCode(within: .seconds(15)) == 1)
        #expect(run.output.contains(path), "\(run.output)")
    }

    /// Whether opening an AF_BLUETOOTH socket fails because the kernel lacks Bluetooth.
    static var bluetoothMissing: Bool {
        let descriptor = socket(31, Int32(SOCK_RAW.rawValue), 1)  // AF_BLUETOOTH, BTPROTO_HCI
        if descriptor >= 0 {
            close(descriptor)
            return false
        }
        return errno == EAFNOSUPPORT
    }
}
