import BrokerFixture
import Foundation
import Glibc
import Synchronization
import Testing

@testable import WhereaboutsMQTT

// Five minutes, as for the edge cases below: the TLS test, a second alone, ran past one minute in a CI run while the
// shared workers were held by tests that compute; each wait has its own deadline, so a real hang still fails.
@Suite("MQTT client against a real mosquitto", .timeLimit(.minutes(5)))
struct MQTTClientBrokerTests {
    @Test("messages make the round trip at QoS 0 and 1, in order", arguments: [MQTTQoS.atMostOnce, .atLeastOnce])
    func roundTrip(qos: MQTTQoS) async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        try await withConnected(testConfiguration(broker, clientID: "rt-sub")) { subscriber, received in
            try subscriber.subscribe("rt/#", qos: qos)
            try await waitUntil("SUBACK") { received.subscribedCount == 1 }
            try await withConnected(testConfiguration(broker, clientID: "rt-pub")) { publisher, sent in
                var messageIDs: [Int] = []
                for index in 0..<10 {
                    messageIDs.append(try publisher.publish(topic: "rt/a", payload: Array("m\(index)".utf8), qos: qos))
                }
                try await waitUntil("10 messages") { received.messages.count >= 10 }
                try await waitUntil("10 acknowledgements") { sent.acknowledgements.count >= 10 }
                #expect(Set(sent.acknowledgements.map(\.messageID)) == Set(messageIDs))
                #expect(sent.acknowledgements.allSatisfy { $0.reason == .success })
            }
            #expect(received.payloads(on: "rt/a") == (0..<10).map { "m\($0)" }, "\(broker.log)")
            #expect(received.messages.allSatisfy { $0.qos == qos && !$0.retain })
            #expect(subscriber.statistics.messagesReceived == 10)
        }
    }

    @Test("with QoS 0 completions left unreported, every QoS 1 acknowledgement still comes, and nothing else")
    func quietQoS0() async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        var configuration = testConfiguration(broker, clientID: "quiet-pub")
        configuration.reportsQoS0Completions = false
        try await withConnected(testConfiguration(broker, clientID: "quiet-sub")) { subscriber, received in
            try subscriber.subscribe("quiet/#", qos: .atLeastOnce)
            try await waitUntil("SUBACK") { received.subscribedCount == 1 }
            try await withConnected(configuration) { publisher, sent in
                // Interleaved, so that QoS 0 completions race the calls that made them.
                var loud: [Int] = []
                var quiet: [Int] = []
                for index in 0..<600 {
                    let qos: MQTTQoS = index % 3 == 0 ? .atLeastOnce : .atMostOnce
                    let messageID = try publisher.publish(
                        topic: "quiet/\(index)", payload: [UInt8(index % 256)], qos: qos)
                    if qos == .atMostOnce { quiet.append(messageID) } else { loud.append(messageID) }
                }
                try await waitUntil("600 messages") { received.messages.count >= 600 }
                try await waitUntil("200 acknowledgements") { sent.acknowledgements.count >= loud.count }
                // A QoS 0 completion, had one slipped through, would have been reported by now too.
                try await Task.sleep(for: .milliseconds(200))
                #expect(sent.acknowledgements.map(\.messageID).sorted() == loud.sorted())
                #expect(Set(quiet).isDisjoint(with: loud))
                #expect(sent.acknowledgements.allSatisfy { $0.reason == .success })
            }
        }
    }

    @Test("the broker never sends a packet over the client's maximum packet size; a smaller oversized one arrives cut")
    func maximumPacketSize() async throws {
        // No packet limit at the broker: only the client's CONNECT property keeps the big one away.
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        var configuration = testConfiguration(broker, clientID: "small-sub")
        configuration.maximumPacketSize = 64 * 1024
        configuration.payloadLimit = 32 * 1024
        try await withConnected(configuration) { subscriber, received in
            try subscriber.subscribe("size/#", qos: .atLeastOnce)
            try await waitUntil("SUBACK") { received.subscribedCount == 1 }
            try await withConnected(testConfiguration(broker, clientID: "big-pub")) { publisher, sent in
                for (topic, size) in [("size/huge", 16 << 20), ("size/over", 40 * 1024), ("size/small", 5)] {
                    try publisher.publish(topic: topic, payload: Array(repeating: 0x20, count: size), qos: .atLeastOnce)
                }
                try await waitUntil("3 acknowledgements") { sent.acknowledgements.count >= 3 }
                #expect(sent.acknowledgements.allSatisfy { $0.reason == .success }, "the broker took all three")
                // In order: once the last has arrived, the huge one was dropped for this client, not delayed.
                try await waitUntil("the small message") { !received.payloads(on: "size/small").isEmpty }
            }
            #expect(received.messages.map(\.topic) == ["size/over", "size/small"], "\(broker.log)")
            // Under the packet limit but over the payload limit: cut in the callback, one byte over the limit.
            #expect(received.messages.first?.payload.count == 32 * 1024 + 1)
            #expect(subscriber.isConnected)
        }
    }

    @Test("QoS 0 publications left unreported are counted until written, then the count is back to 0")
    func unwrittenQoS0() async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        var configuration = testConfiguration(broker, clientID: "unwritten-pub")
        configuration.reportsQoS0Completions = false
        try await withConnected(configuration) { publisher, _ in
            #expect(publisher.unwrittenQoS0Publications == 0)
            for index in 0..<2_000 {
                try publisher.publish(
                    topic: "unwritten/\(index % 7)", payload: Array(repeating: 1, count: 300), qos: .atMostOnce)
            }
            #expect((publisher.unwrittenQoS0Publications ?? -1) >= 0)
            try await waitUntil("every QoS 0 publication written") { publisher.unwrittenQoS0Publications == 0 }
        }
        // A client that reports QoS 0 completions does not count them apart.
        try await withConnected(testConfiguration(broker, clientID: "loud-pub")) { publisher, _ in
            #expect(publisher.unwrittenQoS0Publications == nil)
        }
    }

    @Test("a retained message reaches a subscriber that arrives later, flagged as retained")
    func retainedMessage() async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        try await withConnected(testConfiguration(broker, clientID: "ret-pub")) { publisher, sent in
            let messageID = try publisher.publish(
                topic: "retained/config", payload: Array("v1".utf8), qos: .atLeastOnce, retain: true
            )
            try await waitUntil("PUBACK") { sent.acknowledgements.contains { $0.messageID == messageID } }
        }
        try await withConnected(testConfiguration(broker, clientID: "ret-late")) { subscriber, received in
            try subscriber.subscribe("retained/#", qos: .atLeastOnce)
            let message = try await waitFor("the retained message") { received.messages.first }
            #expect(message.topic == "retained/config")
            #expect(message.payload == Array("v1".utf8))
            #expect(message.retain)
        }
    }

    @Test("a persistent session gets the 100 QoS 1 messages published while it was away")
    func persistentSession() async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        let subscriberConfiguration = testConfiguration(broker, clientID: "persistent-sub")
        try await withConnected(subscriberConfiguration) { subscriber, received in
            try subscriber.subscribe("queue/#", qos: .atLeastOnce)
            try await waitUntil("SUBACK") { received.subscribedCount == 1 }
        }
        try await withConnected(testConfiguration(broker, clientID: "persistent-pub")) { publisher, sent in
            var messageIDs: Set<Int> = []
            for index in 0..<100 {
                messageIDs.insert(try publisher.publish(topic: "queue/readings", payload: Array("\(index)".utf8)))
            }
            try await waitUntil("100 acknowledgements") { sent.acknowledgements.count >= 100 }
            #expect(Set(sent.acknowledgements.map(\.messageID)) == messageIDs)
        }
        // Same client id, no new subscription: the broker replays the queued messages on the old session.
        try await withConnected(subscriberConfiguration) { subscriber, received in
            #expect(received.events.first == .connected(sessionPresent: true))
            try await waitUntil("100 queued messages", timeout: .seconds(20)) {
                Set(received.payloads(on: "queue/readings")).count >= 100
            }
            let payloads = received.payloads(on: "queue/readings")
            #expect(Set(payloads) == Set((0..<100).map(String.init)), "\(broker.log)")
            #expect(payloads.count >= 100)
            #expect(subscriber.statistics.inboxPeak >= 1)
        }
    }

    @Test("after a broker restart the client reconnects with growing backoff and subscribes again")
    func brokerRestart() async throws {
        var options = BrokerOptions()
        options.persistence = true
        let broker = try await MosquittoBroker.start(options)
        defer { broker.cleanup() }
        try await withConnected(testConfiguration(broker, clientID: "restart-sub")) { subscriber, received in
            try subscriber.subscribe("live/#", qos: .atLeastOnce)
            try await waitUntil("SUBACK") { received.subscribedCount == 1 }
            try await withConnected(testConfiguration(broker, clientID: "restart-pub")) { publisher, sent in
                try publisher.publish(topic: "live/x", payload: Array("before".utf8))
                try await waitUntil("the first message") { received.payloads(on: "live/x") == ["before"] }

                await broker.stop()
                try await waitUntil("3 failed reconnects") {
                    received.events.count { if case .reconnectScheduled = $0 { true } else { false } } >= 3
                }
                try await broker.restart()
                try await waitUntil("the subscriber to reconnect") { received.connectedCount == 2 }
                try await waitUntil("the re-subscription") { received.subscribedCount == 2 }
                try await waitUntil("the publisher to reconnect") { sent.connectedCount == 2 }

                try publisher.publish(topic: "live/x", payload: Array("after".utf8))
                try await waitUntil("the message after the restart") {
                    received.payloads(on: "live/x") == ["before", "after"]
                }
            }
            let events = received.events
            let firstConnected = try #require(events.firstIndex { if case .connected = $0 { true } else { false } })
            let disconnected = try #require(
                events.firstIndex { if case .disconnected = $0 { true } else { false } }, "\(events)"
            )
            let reconnected = try #require(events.lastIndex { if case .connected = $0 { true } else { false } })
            #expect(firstConnected < disconnected && disconnected < reconnected)
            if case .disconnected(let reason) = events[disconnected] {
                #expect(reason != .requested)
            }
            // Persistence kept the session across the restart.
            #expect(events[reconnected] == .connected(sessionPresent: true))

            let outage = events[disconnected..<reconnected]
            let scheduled = outage.compactMap {
                if case .reconnectScheduled(let attempt, let delay) = $0 { (attempt, delay) } else { nil }
            }
            #expect(scheduled.map(\.0) == Array(1...scheduled.count))
            // The first three nominal delays (50, 100, 200 ms) are below the 800 ms cap, so with equal jitter
            // they cannot shrink, and the third is longer than the first.
            let delays = scheduled.prefix(3).map(\.1)
            try #require(delays.count == 3)
            #expect(delays[0] <= delays[1] && delays[1] <= delays[2] && delays[0] < delays[2], "\(delays)")
            let failures = outage.filter { if case .connectionFailed = $0 { true } else { false } }
            #expect(failures.count >= 2)
            #expect(failures.first == .connectionFailed(.failed(.systemError, detail: "Connection refused")))
            #expect(subscriber.statistics.connections == 2)
        }
    }

    @Test("the will is published when a client vanishes without DISCONNECT, and not after a clean one")
    func lastWill() async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        try await withConnected(testConfiguration(broker, clientID: "will-watch")) { watcher, received in
            try watcher.subscribe("status/#", qos: .atLeastOnce)
            try await waitUntil("SUBACK") { received.subscribedCount == 1 }

            var polite = testConfiguration(broker, clientID: "will-polite")
            polite.will = MQTTWill(topic: "status/polite", payload: Array("gone".utf8))
            try await withConnected(polite) { _, _ in }
            // A client connecting after the clean disconnect: by the time its message arrives, the broker
            // has long processed the DISCONNECT.
            try await withConnected(testConfiguration(broker, clientID: "will-sentinel")) { sentinel, _ in
                try sentinel.publish(topic: "status/sentinel", payload: Array("here".utf8))
            }
            try await waitUntil("the sentinel") { !received.payloads(on: "status/sentinel").isEmpty }
            #expect(received.payloads(on: "status/polite").isEmpty)

            var crashing = testConfiguration(broker, clientID: "will-crash")
            crashing.will = MQTTWill(topic: "status/crash", payload: Array("offline".utf8), qos: .atLeastOnce)
            try await withConnected(crashing) { client, recorder in
                client.abandonConnection()
                try await waitUntil("the abandoned event") { recorder.events.contains(.disconnected(.abandoned)) }
            }
            try await waitUntil("the will", timeout: .seconds(10)) { !received.payloads(on: "status/crash").isEmpty }
            #expect(received.payloads(on: "status/crash") == ["offline"])
            #expect(received.payloads(on: "status/polite").isEmpty, "\(broker.log)")
        }
    }

    @Test("a wrong password and an anonymous client are refused at once; the right password connects")
    func passwordAuthentication() async throws {
        var options = BrokerOptions()
        options.allowAnonymous = false
        options.accounts = ["agent": "right-password"]
        let broker = try await MosquittoBroker.start(options)
        defer { broker.cleanup() }

        var wrong = testConfiguration(broker, clientID: "auth-wrong")
        wrong.username = "agent"
        wrong.password = "wrong-password"
        let (wrongError, wrongEvents) = await runUntilItEnds(try MQTTClient(wrong))
        // mosquitto 2.0 answers a wrong password with "not authorized", not "bad user name or password".
        #expect(wrongError as? MQTTConnectionFailure == .refused(.notAuthorized), "\(String(describing: wrongError))")
        #expect(wrongEvents.events == [.connectionFailed(.refused(.notAuthorized))])
        #expect(wrongError.map { "\($0)" } == "the broker refused the connection: Not authorized (0x87)")

        let (anonymousError, _) = await runUntilItEnds(try MQTTClient(testConfiguration(broker, clientID: "auth-anon")))
        #expect(
            anonymousError as? MQTTConnectionFailure == .refused(.notAuthorized),
            "\(String(describing: anonymousError))")

        var right = testConfiguration(broker, clientID: "auth-right")
        right.username = "agent"
        right.password = "right-password"
        try await withConnected(right) { client, _ in
            #expect(client.isConnected)
        }
    }

    @Test("TLS verifies the server against the given CA by default; insecure skips verification")
    func tls() async throws {
        var options = BrokerOptions()
        options.tls = true
        let broker = try await MosquittoBroker.start(options)
        defer { broker.cleanup() }
        let certificates = try #require(broker.certificates)
        let otherDirectory = broker.directory + "/other-ca"
        try FileManager.default.createDirectory(atPath: otherDirectory, withIntermediateDirectories: true)
        let otherCA = try TestCertificates.make(in: otherDirectory, authorityName: "Some Other CA")

        var trusted = testConfiguration(broker, clientID: "tls-trusted")
        trusted.tls = MQTTTLSConfiguration(caFile: certificates.caFile)
        #expect(trusted.tls?.insecure == false)
        try await withConnected(trusted) { client, received in
            try client.subscribe("tls/#", qos: .atLeastOnce)
            try await waitUntil("SUBACK") { received.subscribedCount == 1 }
            try client.publish(topic: "tls/echo", payload: [1, 2, 3])
            try await waitUntil("the echo") { received.messages.first?.payload == [1, 2, 3] }
        }

        var wrongCA = testConfiguration(broker, clientID: "tls-wrong-ca")
        wrongCA.tls = MQTTTLSConfiguration(caFile: otherCA.caFile)
        let client = try MQTTClient(wrongCA)
        try await withRunning(client) { recorder in
            let failure = try await waitFor("a failed TLS attempt") {
                recorder.events.lazy.compactMap { if case .connectionFailed(let f) = $0 { f } else { nil } }.first
            }
            guard case .failed(let error, let detail) = failure else {
                Issue.record("expected a TLS failure, got \(failure)")
                return
            }
            #expect(error == .tls, "\(failure)")
            #expect(detail?.contains("certificate verify failed") == true, "\(failure)")
            #expect(recorder.connectedCount == 0)
        }

        var insecure = testConfiguration(broker, clientID: "tls-insecure")
        insecure.tls = MQTTTLSConfiguration(caFile: otherCA.caFile, insecure: true)
        try await withConnected(insecure) { client, _ in
            #expect(client.isConnected)
        }
    }

    @Test("a QoS 1 publish the ACL forbids is acknowledged with 0x87 and reaches nobody")
    func deniedPublish() async throws {
        var options = BrokerOptions()
        options.aclRules = ["topic read #", "topic write allowed/#"]
        let broker = try await MosquittoBroker.start(options)
        defer { broker.cleanup() }
        try await withConnected(testConfiguration(broker, clientID: "acl-watch")) { watcher, received in
            try watcher.subscribe("#", qos: .atLeastOnce)
            try await waitUntil("SUBACK") { received.subscribedCount == 1 }
            try await withConnected(testConfiguration(broker, clientID: "acl-pub")) { publisher, sent in
                let denied = try publisher.publish(topic: "forbidden/x", payload: Array("no".utf8))
                let allowed = try publisher.publish(topic: "allowed/x", payload: Array("yes".utf8))
                try await waitUntil("both acknowledgements") { sent.acknowledgements.count >= 2 }
                let reasons = Dictionary(uniqueKeysWithValues: sent.acknowledgements.map { ($0.messageID, $0.reason) })
                #expect(reasons[denied] == .notAuthorized)
                #expect(reasons[allowed] == .success)
                #expect(reasons[denied]?.description == "Not authorized (0x87)")
            }
            // Same publisher connection, so the allowed message arrives after the denied one would have.
            try await waitUntil("the allowed message") { !received.payloads(on: "allowed/x").isEmpty }
            #expect(received.payloads(on: "forbidden/x").isEmpty, "\(broker.log)")
        }
    }
}

// Five minutes, not one: these take a second each, but under the whole suite the two threads of the cooperative pool
// can be held for minutes by the heaviest synchronous tests (a million tag ids, the replays), and a test that has
// not been scheduled yet was timed out at one minute (connectTimeout, twice). Each waits with its own deadline too.
@Suite("MQTT client edge cases", .timeLimit(.minutes(5)))
struct MQTTClientEdgeCaseTests {
    @Test("the fixture restarts a SIGKILLed broker on the same port, and autosave kept the retained message")
    func brokerKilledAndRestarted() async throws {
        var options = BrokerOptions()
        options.persistence = true
        let broker = try await MosquittoBroker.start(options)
        defer { broker.cleanup() }
        try await withConnected(testConfiguration(broker, clientID: "kill-pub")) { publisher, sent in
            let messageID = try publisher.publish(topic: "kept/x", payload: [42], retain: true)
            try await waitUntil("PUBACK") { sent.acknowledgements.contains { $0.messageID == messageID } }
        }
        await broker.kill()
        #expect(!broker.isRunning)
        let port = broker.port
        try await broker.restart()
        #expect(broker.isRunning && broker.port == port)
        try await withConnected(testConfiguration(broker, clientID: "kill-sub")) { subscriber, received in
            try subscriber.subscribe("kept/#", qos: .atLeastOnce)
            let message = try await waitFor("the retained message", { received.messages.first })
            #expect(message.payload == [42] && message.retain, "\(broker.log)")
        }
    }

    @Test("a server that accepts TCP but never answers CONNECT times the attempt out instead of hanging")
    func connectTimeout() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let configuration = MQTTClientConfiguration(
            host: "127.0.0.1", port: listener.port, clientID: "silent-\(UInt32.random(in: 0...UInt32.max))",
            keepAlive: .seconds(5),
            reconnect: MQTTReconnectPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(100)),
            connectTimeout: .milliseconds(300)
        )
        try await withRunning(try MQTTClient(configuration)) { recorder in
            let failure = try await waitFor("a timed-out attempt") {
                recorder.events.lazy.compactMap { if case .connectionFailed(let f) = $0 { f } else { nil } }.first
            }
            #expect(failure == .failed(.timeout, detail: nil))
            #expect(recorder.connectedCount == 0)
        }
    }

    @Test("two clients sharing a client id take the session from each other and back off, not flap")
    func sessionTakeover() async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        var configuration = testConfiguration(broker, clientID: "twin")
        configuration.reconnect.stableConnection = .seconds(5)
        try await withConnected(configuration) { _, first in
            try await withRunning(try MQTTClient(configuration)) { second in
                try await waitUntil("the third reconnect of either twin") {
                    (first.events + second.events).contains {
                        if case .reconnectScheduled(let attempt, _) = $0 { attempt >= 3 } else { false }
                    }
                }
            }
            // mosquitto 2.0 closes the old connection (it may or may not get DISCONNECT 0x8E out first).
            let lost = first.events.compactMap { if case .disconnected(let reason) = $0 { reason } else { nil } }
            #expect(!lost.isEmpty)
            #expect(
                lost.allSatisfy { $0 == .server(.sessionTakenOver) || $0 == .connectionLost(.connectionLost) },
                "\(lost)"
            )
        }
    }

    @Test(
        "past the sending deadline, an unwritten publication is never delivered: the connection is cut, nothing re-sent",
        arguments: [true, false])
    func sendingDeadline(asHolder: Bool) async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        try await withConnected(testConfiguration(broker, clientID: "deadline-watch")) { watcher, seen in
            try watcher.subscribe("said/#", qos: .atLeastOnce)
            try await waitUntil("SUBACK") { seen.subscribedCount == 1 }
            // An inbox of one, read only when the test says: the loop thread then waits in libmosquitto's message
            // callback, and what is published meanwhile stays queued, unwritten (as in a locator whose loop is busy
            // when the process is paused).
            var configuration = testConfiguration(broker, clientID: "deadline-holder")
            configuration.inboxLimit = 1
            let holder = try MQTTClient(configuration)
            try holder.subscribe("work/#", qos: .atLeastOnce)
            let reading = Flag()
            let recorder = ClientRecorder()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await holder.run() }
                group.addTask { for await event in holder.events { recorder.record(event) } }
                group.addTask {
                    while !reading.isSet { try await Task.sleep(for: .milliseconds(10)) }
                    for await message in holder.messages { recorder.record(message) }
                }
                try await waitUntil("the holder's SUBACK") { recorder.subscribedCount == 1 }
                try await withConnected(testConfiguration(broker, clientID: "deadline-feed")) { feeder, sent in
                    for index in 0..<3 { try feeder.publish(topic: "work/x", payload: Array("w\(index)".utf8)) }
                    try await waitUntil("the work acknowledged") { sent.acknowledgements.count == 3 }
                }
                // The first message fills the inbox and the second holds the loop thread.
                try await waitUntil("the inbox to fill") { holder.statistics.inboxDepth == 1 }
                try await Task.sleep(for: .milliseconds(300))
                #expect(holder.statistics.messagesReceived == 1, "the loop thread waits for room")
                // As the holder: its lease, ending 0.3 s after the publication is handed over. Otherwise a standby's
                // deadline, long past, with nothing handed over before it: that cuts nothing.
                holder.limitSending(until: asHolder ? MQTTClientCore.monotonicNow() + 0.3 : -.infinity)
                try holder.publish(topic: "said/before", payload: Array("as the holder".utf8))
                try await Task.sleep(for: .milliseconds(500))
                reading.set()
                // All three, at least once (the ones not acknowledged before the cut come again after it).
                try await waitUntil("the work to be read") {
                    Set(recorder.messages.map { String(decoding: $0.payload, as: UTF8.self) }) == ["w0", "w1", "w2"]
                }
                try await waitUntil("the holder connected") { holder.isConnected }
                holder.limitSending(until: nil)
                try holder.publish(topic: "said/after", payload: Array("later".utf8))
                try await waitUntil("the later message") { !seen.payloads(on: "said/after").isEmpty }
                try await Task.sleep(for: .milliseconds(300))
                if asHolder {
                    #expect(seen.payloads(on: "said/before").isEmpty, "\(broker.log)")
                    #expect(holder.statistics.connections == 2, "the connection was cut and made again")
                } else {
                    #expect(seen.payloads(on: "said/before") == ["as the holder"])
                    #expect(holder.statistics.connections == 1, "a standby's connection is not cut")
                }
                holder.disconnect()
                group.cancelAll()
            }
        }
    }
}

/// A flag one task raises and another polls.
final class Flag: Sendable {
    private let raised = Atomic<Bool>(false)
    var isSet: Bool { raised.load(ordering: .acquiring) }
    func set() { raised.store(true, ordering: .releasing) }
}

/// A TCP listener on a free loopback port that never accepts: the kernel completes handshakes into the
/// backlog, so a client connects and then hears nothing.
struct SilentListener {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && listen(descriptor, 4) == 0
                    && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard descriptor >= 0, listening else { throw TimedOut(what: "a listening socket (errno \(errno))") }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        _ = Glibc.close(descriptor)
    }
}
