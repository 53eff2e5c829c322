import BrokerFixture
import Foundation
import Synchronization
import Testing
import WhereaboutsMQTT

/// The shipped broker ACL (deploy/mosquitto/whereabouts.acl) on a real mosquitto: agents speak only for
/// themselves and read nothing; anonymous clients are refused.
@Suite("Broker ACL from deploy/", .serialized)
struct BrokerSecurityTests {
    static let site = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
    static let prefix = "whereabouts/v1/\(site)"

    static var shippedACL: [String] {
        get throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            let text = try String(
                contentsOfFile: root.appendingPathComponent("deploy/mosquitto/whereabouts.acl").path, encoding: .utf8)
            return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
    }

    /// The shipped configuration's per-listener lines that tie client ids to accounts (`use_username_as_clientid`).
    static var shippedClientIDBinding: [String] {
        get throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            let text = try String(
                contentsOfFile: root.appendingPathComponent("deploy/mosquitto/whereabouts.conf").path, encoding: .utf8)
            return Array(
                Set(text.split(separator: "\n").map(String.init).filter { $0.hasPrefix("use_username_as_clientid") }))
        }
    }

    /// A client that records its messages and its publish acknowledgements.
    final class Recorder: Sendable {
        let client: MQTTClient
        let messages = Mutex<[MQTTMessage]>([])
        let acknowledgements = Mutex<[Int: MQTTReasonCode]>([:])
        let failure = Mutex<MQTTConnectionFailure?>(nil)
        let subscribed = Atomic<Int>(0)
        let connected = Atomic<Bool>(false)
        let connections = Atomic<Int>(0)
        let disconnections = Atomic<Int>(0)

        init(
            _ broker: MosquittoBroker, user: String?, password: String?, clientID: String? = nil,
            cleanStart: Bool = true, subscriptions: [String] = []
        ) throws {
            client = try MQTTClient(
                MQTTClientConfiguration(
                    host: "127.0.0.1",
                    port: broker.port,
                    clientID: clientID ?? "acl-\(user ?? "anonymous")",
                    username: user,
                    password: password,
                    cleanStart: cleanStart
                )
            )
            for filter in subscriptions { _ = try client.subscribe(filter, qos: .atLeastOnce) }
        }

        func run() async {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await self.client.run() }
                group.addTask {
                    for await event in self.client.events {
                        switch event {
                        case .connected:
                            self.connected.store(true, ordering: .relaxed)
                            self.connections.add(1, ordering: .relaxed)
                        case .disconnected: self.disconnections.add(1, ordering: .relaxed)
                        case .acknowledged(let id, let reason): self.acknowledgements.withLock { $0[id] = reason }
                        case .connectionFailed(let failure): self.failure.withLock { $0 = failure }
                        case .subscribed: self.subscribed.add(1, ordering: .relaxed)
                        default: break
                        }
                    }
                }
                for await message in client.messages { messages.withLock { $0.append(message) } }
            }
        }

        func topics() -> [String] { messages.withLock { $0.map(\.topic) } }
    }

    @Test("an agent cannot publish as another agent or into result topics, reads nothing, and anonymous is refused")
    func acl() async throws {
        var options = BrokerOptions()
        options.allowAnonymous = false
        options.accounts = [
            "west": "west-secret", "east": "east-secret", "locator": "locator-secret", "dashboard": "dash-secret",
        ]
        options.aclRules = try Self.shippedACL
        try await MosquittoBroker.with(options) { broker in
            let locator = try Recorder(
                broker, user: "locator", password: "locator-secret", subscriptions: ["\(Self.prefix)/agents/+/readings"]
            )
            let dashboard = try Recorder(
                broker, user: "dashboard", password: "dash-secret",
                subscriptions: ["\(Self.prefix)/floors/#", "\(Self.prefix)/events"])
            let west = try Recorder(broker, user: "west", password: "west-secret", subscriptions: ["#"])
            let anonymous = try Recorder(broker, user: nil, password: nil)
            await withTaskGroup(of: Void.self) { group in
                for client in [locator, dashboard, west, anonymous] { group.addTask { await client.run() } }
                do {
                    try await waitFor("the clients to subscribe") {
                        locator.subscribed.load(ordering: .relaxed) > 0
                            && dashboard.subscribed.load(ordering: .relaxed) > 1
                            && west.subscribed.load(ordering: .relaxed) > 0
                    }
                    try await waitFor("the anonymous refusal") { anonymous.failure.withLock { $0 } != nil }
                    #expect(anonymous.failure.withLock { $0 } == .refused(.notAuthorized))
                    let anonymousConnected = anonymous.connected.load(ordering: .relaxed)
                    #expect(!anonymousConnected)

                    let payload = Array("{}".utf8)
                    let spoofed = try west.client.publish(
                        topic: "\(Self.prefix)/agents/east/readings", payload: payload)
                    let forged = try west.client.publish(
                        topic: "\(Self.prefix)/floors/1/zones/1/occupancy", payload: payload, retain: true)
                    let event = try west.client.publish(topic: "\(Self.prefix)/events", payload: payload)
                    let discovery = try west.client.publish(topic: "homeassistant/sensor/x/y/config", payload: payload)
                    let own = try west.client.publish(topic: "\(Self.prefix)/agents/west/readings", payload: payload)
                    // The locator publishes a result, which the agent must not be able to read.
                    _ = try locator.client.publish(topic: "\(Self.prefix)/floors/1/zones/2/occupancy", payload: payload)
                    try await waitFor("the acknowledgements") { west.acknowledgements.withLock { $0.count } >= 5 }
                    let acks = west.acknowledgements.withLock { $0 }
                    for id in [spoofed, forged, event, discovery] { #expect(acks[id] == .notAuthorized) }
                    #expect(acks[own] == .success)
                    // The permitted message arrives, which shows the path works; then nothing forbidden may follow.
                    try await waitFor("the agent's own batch at the locator") {
                        locator.topics().contains("\(Self.prefix)/agents/west/readings")
                    }
                    try await waitFor("the locator's result at the dashboard") {
                        dashboard.topics().contains("\(Self.prefix)/floors/1/zones/2/occupancy")
                    }
                    try await Task.sleep(for: .milliseconds(300))
                    #expect(locator.topics() == ["\(Self.prefix)/agents/west/readings"])
                    #expect(dashboard.topics() == ["\(Self.prefix)/floors/1/zones/2/occupancy"])
                    #expect(west.topics().isEmpty, "the agent read \(west.topics())")
                } catch {
                    Issue.record("\(error)")
                }
                for client in [locator, dashboard, west, anonymous] { client.client.disconnect() }
                group.cancelAll()
            }
        }
    }

    /// Issue 12, item 3: without `use_username_as_clientid` the thief kicks the locator off (and this test fails).
    @Test("an agent using the locator's client id neither kicks the locator off nor resumes its session")
    func clientIDTakeover() async throws {
        let binding = try Self.shippedClientIDBinding
        #expect(binding == ["use_username_as_clientid true"], "whereabouts.conf no longer ties client ids to accounts")
        var options = BrokerOptions()
        options.allowAnonymous = false
        options.persistence = true
        options.accounts = ["west": "west-secret", "locator": "locator-secret"]
        options.aclRules = try Self.shippedACL
        options.extraConfiguration = binding
        let readings = "\(Self.prefix)/agents/+/readings"
        try await MosquittoBroker.with(options) { broker in
            let locator = try Recorder(
                broker, user: "locator", password: "locator-secret", clientID: "whereabouts-locator",
                cleanStart: false, subscriptions: [readings])
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await locator.run() }
                do {
                    try await waitFor("the locator to subscribe") { locator.subscribed.load(ordering: .relaxed) > 0 }
                    for stolen in ["whereabouts-locator", "locator"] {
                        // A persistent session under the stolen id, subscribing to what the locator reads.
                        let thief = try Recorder(
                            broker, user: "west", password: "west-secret", clientID: stolen, cleanStart: false,
                            subscriptions: [readings])
                        group.addTask { await thief.run() }
                        try await waitFor("the thief to connect") { thief.connected.load(ordering: .relaxed) }
                        let own = try thief.client.publish(
                            topic: "\(Self.prefix)/agents/west/readings", payload: Array(stolen.utf8))
                        try await waitFor("the thief's acknowledgement") {
                            thief.acknowledgements.withLock { $0[own] } != nil
                        }
                        #expect(thief.topics().isEmpty, "the thief read \(thief.topics())")
                        thief.client.disconnect()
                    }
                    try await waitFor("both readings at the locator") { locator.topics().count >= 2 }
                    try await Task.sleep(for: .milliseconds(300))
                    #expect(locator.connections.load(ordering: .relaxed) == 1)
                    #expect(locator.disconnections.load(ordering: .relaxed) == 0, "the locator was kicked off")
                    #expect(locator.topics().count == 2)
                } catch {
                    Issue.record("\(error)\n\(broker.log)")
                }
                locator.client.disconnect()
                group.cancelAll()
            }
        }
    }
}
