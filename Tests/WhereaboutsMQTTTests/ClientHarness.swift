import BrokerFixture
import Synchronization
import Testing
import WhereaboutsMQTT

/// Everything a running client reported, recorded by background tasks so tests can wait on conditions.
final class ClientRecorder: Sendable {
    private let recordedEvents = Mutex<[MQTTConnectionEvent]>([])
    private let recordedMessages = Mutex<[MQTTMessage]>([])

    var events: [MQTTConnectionEvent] { recordedEvents.withLock { $0 } }
    var messages: [MQTTMessage] { recordedMessages.withLock { $0 } }

    func record(_ event: MQTTConnectionEvent) {
        recordedEvents.withLock { $0.append(event) }
    }

    func record(_ message: MQTTMessage) {
        recordedMessages.withLock { $0.append(message) }
    }

    /// Payloads (as text) of the messages received on `topic`.
    func payloads(on topic: String) -> [String] {
        messages.filter { $0.topic == topic }.map { String(decoding: $0.payload, as: UTF8.self) }
    }

    var connectedCount: Int {
        events.count { if case .connected = $0 { true } else { false } }
    }

    /// Message ids of acknowledgements, with their reasons, in order.
    var acknowledgements: [(messageID: Int, reason: MQTTReasonCode)] {
        events.compactMap {
            if case .acknowledged(let messageID, let reason) = $0 { (messageID, reason) } else { nil }
        }
    }

    var subscribedCount: Int {
        events.count { if case .subscribed = $0 { true } else { false } }
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

/// A configuration for `broker` with test-sized keepalive and backoff.
func testConfiguration(
    _ broker: MosquittoBroker, clientID: String, cleanStart: Bool = false
) -> MQTTClientConfiguration {
    MQTTClientConfiguration(
        host: broker.host, port: broker.port, clientID: clientID + "-" + String(UInt32.random(in: 0...UInt32.max)),
        keepAlive: .seconds(5), cleanStart: cleanStart, sessionExpiry: .seconds(300),
        reconnect: MQTTReconnectPolicy(
            initialDelay: .milliseconds(50), maximumDelay: .milliseconds(800), stableConnection: .zero
        ),
        connectTimeout: .seconds(5)
    )
}

/// Runs `client` while `body` runs, recording its events and messages; then disconnects gracefully and
/// waits for ``MQTTClient/run()`` to return.
@discardableResult
func withRunning<Result>(
    _ client: MQTTClient, _ body: (ClientRecorder) async throws -> Result
) async throws -> Result {
    let recorder = ClientRecorder()
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await client.run() }
        group.addTask { for await event in client.events { recorder.record(event) } }
        group.addTask { for await message in client.messages { recorder.record(message) } }
        do {
            let result = try await body(recorder)
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

/// Runs a client and waits until the broker has accepted it.
@discardableResult
func withConnected<Result>(
    _ configuration: MQTTClientConfiguration, _ body: (MQTTClient, ClientRecorder) async throws -> Result
) async throws -> Result {
    let client = try MQTTClient(configuration)
    return try await withRunning(client) { recorder in
        try await waitUntil("\(configuration.clientID) to connect") { recorder.connectedCount > 0 }
        return try await body(client, recorder)
    }
}

/// Runs `client` until `run()` ends by itself or `timeout` passes (then disconnects it); returns what
/// `run()` threw, or `nil` if it returned, and the recorded events.
func runUntilItEnds(_ client: MQTTClient, timeout: Duration = .seconds(10)) async -> ((any Error)?, ClientRecorder) {
    enum Finished: Sendable {
        case run((any Error)?)
        case helper
    }
    let recorder = ClientRecorder()
    let outcome = await withTaskGroup(of: Finished.self) { group in
        group.addTask {
            do {
                try await client.run()
                return .run(nil)
            } catch {
                return .run(error)
            }
        }
        group.addTask {
            for await event in client.events { recorder.record(event) }
            return .helper
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            client.disconnect()
            return .helper
        }
        var error: (any Error)?
        for await finished in group {
            if case .run(let thrown) = finished {
                error = thrown
                break
            }
        }
        group.cancelAll()
        return error
    }
    return (outcome, recorder)
}
