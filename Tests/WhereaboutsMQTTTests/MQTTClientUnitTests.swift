import Foundation
import Testing
import WhereaboutsMQTT

@Suite("MQTT client pieces that need no broker")
struct MQTTClientUnitTests {
    @Test("backoff doubles from the initial delay up to the cap")
    func nominalBackoff() {
        let policy = MQTTReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(30))
        let nominal = (1...8).map { policy.nominalDelay(afterFailures: $0) }
        #expect(nominal == [1, 2, 4, 8, 16, 30, 30, 30].map { Duration.seconds($0) })
        #expect(policy.nominalDelay(afterFailures: 1_000_000) == .seconds(30))
    }

    @Test("jitter stays in the upper half of the nominal delay and, while doubling, never shortens the next delay")
    func jitteredBackoff() {
        let policy = MQTTReconnectPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(800))
        let extremes = [0.0, 0.37, 1.0]
        for failures in 1...10 {
            let nominal = policy.nominalDelay(afterFailures: failures)
            for random in extremes {
                let delay = policy.delay(afterFailures: failures, unitRandom: random)
                #expect(delay >= nominal / 2 && delay <= nominal)
                guard policy.nominalDelay(afterFailures: failures + 1) == nominal * 2 else { continue }
                for nextRandom in extremes {
                    #expect(policy.delay(afterFailures: failures + 1, unitRandom: nextRandom) >= delay)
                }
            }
        }
        #expect(policy.delay(afterFailures: 1, unitRandom: -5) == .milliseconds(25))
        #expect(policy.delay(afterFailures: 1, unitRandom: 7) == .milliseconds(50))
    }

    @Test("a cap below the initial delay is raised to it")
    func capBelowInitialDelay() {
        let policy = MQTTReconnectPolicy(initialDelay: .seconds(5), maximumDelay: .seconds(1))
        #expect(policy.maximumDelay == .seconds(5))
        #expect(policy.nominalDelay(afterFailures: 3) == .seconds(5))
    }

    @Test("errors and reason codes describe themselves with libmosquitto's text")
    func descriptions() {
        #expect(MQTTError.noConnection.rawValue == 4)
        #expect(MQTTError.noConnection.description == "The client is not currently connected. (MOSQ_ERR 4)")
        #expect(MQTTError.tls.description.contains("TLS"))
        #expect(MQTTReasonCode.notAuthorized.description == "Not authorized (0x87)")
        #expect(MQTTReasonCode.success.description.hasSuffix("(0x00)"))
        #expect(MQTTReasonCode.notAuthorized.isFailure && !MQTTReasonCode.grantedQoS1.isFailure)
        #expect(MQTTReasonCode.badUserNameOrPassword.isPermanentConnectRefusal)
        #expect(!MQTTReasonCode.serverBusy.isPermanentConnectRefusal)
        let failure = MQTTConnectionFailure.failed(.tls, detail: "certificate verify failed")
        #expect(failure.description.hasSuffix(": certificate verify failed"))
    }

    @Test("invalid settings are refused when the client is made")
    func invalidConfiguration() {
        #expect(throws: MQTTError.invalidArgument) {
            _ = try MQTTClient(MQTTClientConfiguration(host: "127.0.0.1", clientID: ""))
        }
        #expect(throws: MQTTError.invalidArgument) {
            _ = try MQTTClient(MQTTClientConfiguration(host: "127.0.0.1", clientID: "c", keepAlive: .seconds(2)))
        }
        #expect(throws: MQTTError.invalidArgument) {
            let tls = MQTTTLSConfiguration(caFile: "/nonexistent/ca.crt")
            _ = try MQTTClient(MQTTClientConfiguration(host: "127.0.0.1", clientID: "c", tls: tls))
        }
    }

    @Test("publishing before connecting is refused with noConnection, so the caller keeps the message")
    func publishWhileDisconnected() throws {
        let client = try MQTTClient(MQTTClientConfiguration(host: "127.0.0.1", clientID: "offline"))
        #expect(throws: MQTTError.noConnection) {
            try client.publish(topic: "a/b", payload: [1])
        }
        #expect(throws: MQTTError.invalidArgument) {
            try client.subscribe("a/#/b", qos: .atLeastOnce)
        }
        #expect(try client.subscribe("a/+/c", qos: .atLeastOnce) == nil)
        #expect(!client.isConnected)
    }

    @Test("a client runs once: disconnect before run makes run return, and a second run throws")
    func runsOnce() async throws {
        let client = try MQTTClient(MQTTClientConfiguration(host: "127.0.0.1", clientID: "once"))
        client.disconnect()
        try await client.run()
        await #expect(throws: MQTTError.invalidArgument) {
            try await client.run()
        }
        var events: [MQTTConnectionEvent] = []
        for await event in client.events { events.append(event) }
        #expect(events.isEmpty)
    }

    @Test("a password file loses one trailing newline and nothing else")
    func passwordFile() throws {
        let directory = NSTemporaryDirectory() + "/whereabouts-password-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cases: [(String, String)] = [
            ("s3cret\n", "s3cret"), ("s3cret", "s3cret"), ("a b\r\n", "a b"), (" x \n\n", " x \n"),
        ]
        for (index, (contents, expected)) in cases.enumerated() {
            let path = "\(directory)/\(index)"
            try contents.write(toFile: path, atomically: true, encoding: .utf8)
            #expect(try MQTTPasswordFile.read(path: path) == expected)
        }
        try "\n".write(toFile: directory + "/empty", atomically: true, encoding: .utf8)
        #expect(throws: MQTTPasswordFile.Failure.empty(path: directory + "/empty")) {
            try MQTTPasswordFile.read(path: directory + "/empty")
        }
        #expect(throws: MQTTPasswordFile.Failure.unreadable(path: directory + "/missing", errno: ENOENT)) {
            try MQTTPasswordFile.read(path: directory + "/missing")
        }
    }
}
