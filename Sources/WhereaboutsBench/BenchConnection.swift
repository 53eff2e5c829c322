import CommandLineSupport
import Synchronization
import WhereaboutsMQTT

/// One MQTT connection of the bench, with the little bookkeeping the measurements need: when it comes up, and
/// how many QoS 1 publications the broker has not acknowledged yet (the publisher's flow control).
final class BenchConnection: Sendable {
    let client: MQTTClient
    let outstanding = Atomic<Int>(0)
    /// One element per accepted connection, for whoever waits for the first.
    private let connections: AsyncStream<Void>
    private let connectionsContinuation: AsyncStream<Void>.Continuation

    init(broker: String, clientID: String) throws {
        (connections, connectionsContinuation) = AsyncStream.makeStream(of: Void.self)
        let address: BrokerAddress
        do {
            address = try BrokerAddress(broker)
        } catch {
            throw UsageError(error.description)
        }
        client = try MQTTClient(
            MQTTClientConfiguration(
                host: address.host, port: address.port, clientID: clientID, keepAlive: .seconds(60), cleanStart: true,
                sessionExpiry: .seconds(0)))
    }

    /// Follows the connection's events until the client stops.
    func watchEvents() async {
        for await event in client.events {
            switch event {
            case .connected: connectionsContinuation.yield()
            case .acknowledged: outstanding.subtract(1, ordering: .relaxed)
            default: break
            }
        }
    }

    /// Waits until the broker has accepted the connection: the connection event, not a flag polled.
    func waitUntilConnected(timeout: Double = 15) async throws {
        let connections = self.connections
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                var iterator = connections.makeAsyncIterator()
                return await iterator.next() != nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(timeout))
                return false
            }
            let first = try await group.next() ?? false
            group.cancelAll()
            guard first else { throw RuntimeError("could not connect to the broker within \(Int(timeout)) s") }
        }
    }

    /// Publishes at QoS 1; waits and retries while the connection is down.
    func publish(_ topic: String, _ payload: [UInt8]) async throws {
        while true {
            do {
                outstanding.add(1, ordering: .relaxed)
                try client.publish(topic: topic, payload: payload, qos: .atLeastOnce)
                return
            } catch .noConnection {
                outstanding.subtract(1, ordering: .relaxed)
                try await Task.sleep(for: .milliseconds(5))
            } catch {
                outstanding.subtract(1, ordering: .relaxed)
                throw error
            }
        }
    }

    /// Waits until at most `limit` publications are unacknowledged.
    func drain(to limit: Int) async throws {
        while outstanding.load(ordering: .relaxed) > limit { try await Task.sleep(for: .milliseconds(1)) }
    }
}

/// State that the task reading messages and the task publishing both touch.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    func withLock<Result>(_ body: (inout sending Value) throws -> sending Result) rethrows -> sending Result {
        try mutex.withLock(body)
    }
}
