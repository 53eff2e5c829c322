import BrokerFixture
import CommandLineSupport
import Synchronization
import Testing
import WhereaboutsMQTT
import WhereaboutsRuntime
import WhereaboutsSession

/// What a watching client received, recorded by background tasks so tests can wait on conditions.
final class Watched: Sendable {
    private let received = Mutex<[MQTTMessage]>([])
    private let subscribed = Atomic<Int>(0)
    private let connected = Atomic<Int>(0)

    var messages: [MQTTMessage] { received.withLock { $0 } }
    var subscribedCount: Int { subscribed.load(ordering: .relaxed) }
    var connectedCount: Int { connected.load(ordering: .relaxed) }

    func record(_ message: MQTTMessage) {
        received.withLock { $0.append(message) }
    }

    func record(_ event: MQTTConnectionEvent) {
        switch event {
        case .connected: connected.add(1, ordering: .relaxed)
        case .subscribed: subscribed.add(1, ordering: .relaxed)
        default: break
        }
    }

    /// Payloads (as text) of the messages received on `topic`, in order.
    func payloads(on topic: String) -> [String] {
        messages.filter { $0.topic == topic }.map { String(decoding: $0.payload, as: UTF8.self) }
    }
}

/// Polls `probe` until it returns a value; throws once the waiter has spent `timeout` awake (``Patience``), which
/// only turns a hang into a failure.
@discardableResult
func waitFor<Value>(_ what: String, timeout: Duration = .seconds(15), _ probe: () -> Value?) async throws -> Value {
    try await poll(what, timeout: timeout, interval: .milliseconds(10), probe)
}

/// Waits until `condition` holds.
func waitUntil(_ what: String, timeout: Duration = .seconds(15), _ condition: () -> Bool) async throws {
    try await waitFor(what, timeout: timeout) { condition() ? true : nil }
}

/// A configuration for `broker` with test-sized keepalive and backoff, and a unique client id.
func testConfiguration(_ broker: MosquittoBroker, clientID: String) -> MQTTClientConfiguration {
    MQTTClientConfiguration(
        host: broker.host, port: broker.port, clientID: clientID + "-" + String(UInt32.random(in: 0...UInt32.max)),
        keepAlive: .seconds(5), cleanStart: true,
        reconnect: MQTTReconnectPolicy(
            initialDelay: .milliseconds(50), maximumDelay: .milliseconds(800), stableConnection: .zero),
        connectTimeout: .seconds(5))
}

/// A runner as these tests drive one: the wall clock, a tick every 20 ms, warnings logged.
func testRunner<Pipeline: ServicePipeline, Source: ServiceSource>(
    _ client: MQTTClient, source: Source, broker: MosquittoBroker
) -> ServiceRunner<Pipeline, Source> where Source.Input == Pipeline.Input, Source.Effect == Pipeline.Effect {
    ServiceRunner(
        .init(
            client: client, source: source, clock: { WallClock.now() }, tickInterval: .milliseconds(20),
            logger: Logger(label: "runner-test", level: .warning), brokerName: "mosquitto on port \(broker.port)"))
}

/// Runs a watching client until `body` is done, once the broker has accepted it; then disconnects it and waits for
/// it to stop.
@discardableResult
func withConnected<Result: Sendable>(
    _ configuration: MQTTClientConfiguration, _ body: (MQTTClient, Watched) async throws -> Result
) async throws -> Result {
    let client = try MQTTClient(configuration)
    let watched = Watched()
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await client.run() }
        group.addTask { for await event in client.events { watched.record(event) } }
        group.addTask { for await message in client.messages { watched.record(message) } }
        do {
            try await waitUntil("\(configuration.clientID) to connect") { watched.connectedCount > 0 }
            let result = try await body(client, watched)
            client.disconnect()
            try await group.waitForAll()
            return result
        } catch {
            client.disconnect()
            group.cancelAll()
            throw error
        }
    }
}
