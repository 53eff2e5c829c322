import BrokerFixture
import Foundation
import Synchronization
import Testing
import WhereaboutsCore
import WhereaboutsMQTT
import WhereaboutsMapFile
import WhereaboutsWire

/// Where the built executables are: next to the test bundle, in the build products directory.
enum BuiltProducts {
    static var directory: String {
        // /proc/self/exe is the test runner, which SwiftPM puts in the products directory (or its .xctest bundle).
        var path =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        while !path.isEmpty, path != "/" {
            path = (path as NSString).deletingLastPathComponent
            if FileManager.default.isExecutableFile(atPath: path + "/whereabouts-locator") { return path }
        }
        return ".build/debug"
    }

    static func path(_ name: String) -> String { directory + "/" + name }
}

enum Fixtures {
    static func path(_ name: String) throws -> String {
        try #require(Bundle.module.path(forResource: name, ofType: nil, inDirectory: "Fixtures"))
    }

    static func map(_ name: String) throws -> FloorMap {
        let data = try #require(FileManager.default.contents(atPath: try path(name)))
        return try FloorMap.parse(Array(data)).get()
    }
}

/// A scratch directory for one test.
struct ScratchDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "whereabouts-e2e-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// A running `whereabouts-locator`.
final class LocatorProcess: Sendable {
    let process: ChildProcess
    let logPath: String

    init(
        map: String, broker: MosquittoBroker, scratch: ScratchDirectory, clientID: String = "locator-under-test",
        extra: [String] = []
    ) throws {
        logPath = scratch.file("locator-\(UUID().uuidString.prefix(8)).log")
        process = try ChildProcess(
            executable: BuiltProducts.path("whereabouts-locator"),
            arguments: [
                "--map", map, "--broker", "mqtt://127.0.0.1:\(broker.port)", "--client-id", clientID,
                "--log-level", "debug",
            ] + extra,
            outputPath: logPath
        )
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// SIGTERM, then wait for a clean exit.
    func stop() async -> Int32? {
        process.send(SIGTERM)
        _ = await process.waitForExit(timeout: .seconds(15))
        return process.exitCode
    }

    func kill() async {
        process.send(SIGKILL)
        _ = await process.waitForExit(timeout: .seconds(5))
    }
}

/// Collects every message on the subscribed filters, as a dashboard would.
final class Collector: Sendable {
    let client: MQTTClient
    private let received = Mutex<[MQTTMessage]>([])
    private let connectedOnce = Atomic<Bool>(false)

    init(broker: MosquittoBroker, filters: [String], clientID: String = "collector-\(UUID().uuidString.prefix(6))")
        throws
    {
        client = try MQTTClient(
            MQTTClientConfiguration(host: "127.0.0.1", port: broker.port, clientID: clientID, cleanStart: true)
        )
        for filter in filters { _ = try client.subscribe(filter, qos: .atLeastOnce) }
    }

    /// Runs the client and collects until cancelled; run it in a child task.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await self.client.run() }
            group.addTask {
                for await event in self.client.events {
                    if case .subscribed = event { self.connectedOnce.store(true, ordering: .relaxed) }
                }
            }
            for await message in client.messages {
                received.withLock { $0.append(message) }
            }
        }
    }

    var messages: [MQTTMessage] { received.withLock { $0 } }

    func waitUntilSubscribed() async throws {
        try await waitFor("the collector to subscribe") { self.connectedOnce.load(ordering: .relaxed) }
    }

    /// The last retained-or-not payload seen on a topic.
    func last(_ topic: String) -> String? {
        messages.last { $0.topic == topic }.map { String(decoding: $0.payload, as: UTF8.self) }
    }

    func all(_ topic: String) -> [String] {
        messages.filter { $0.topic == topic }.map { String(decoding: $0.payload, as: UTF8.self) }
    }
}

/// A simulated scanner agent that publishes reading batches at QoS 1, with its status and last will.
final class TestAgent: Sendable {
    let id: AgentID
    let client: MQTTClient
    let topics: Topics
    let epoch: Int
    private let sequence = Atomic<Int>(0)
    private let connected = Atomic<Bool>(false)

    init(
        _ id: String, site: BeaconUUID, broker: MosquittoBroker, epoch: Int = 1, username: String? = nil,
        password: String? = nil
    ) throws {
        self.id = try #require(AgentID(id))
        topics = Topics(site: site)
        self.epoch = epoch
        let status = topics.agentStatus(agent: self.id).name
        client = try MQTTClient(
            MQTTClientConfiguration(
                host: "127.0.0.1",
                port: broker.port,
                clientID: "agent-\(id)",
                username: username,
                password: password,
                keepAlive: .seconds(5),
                will: MQTTWill(topic: status, payload: Array("offline".utf8), qos: .atLeastOnce, retain: true),
                reconnect: MQTTReconnectPolicy(initialDelay: .milliseconds(100), maximumDelay: .milliseconds(500))
            )
        )
    }

    func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await self.client.run() }
            for await event in client.events {
                switch event {
                case .connected:
                    connected.store(true, ordering: .relaxed)
                    _ = try? client.publish(
                        topic: topics.agentStatus(agent: id).name, payload: Array("online".utf8), qos: .atLeastOnce,
                        retain: true)
                case .disconnected:
                    connected.store(false, ordering: .relaxed)
                default:
                    break
                }
            }
        }
    }

    func waitUntilConnected() async throws {
        try await waitFor("agent \(id) to connect") { self.connected.load(ordering: .relaxed) }
    }

    /// Publishes one batch, retrying while the broker is away (the real agent buffers the same way).
    @discardableResult
    func send(_ readings: [ReadingBatch.Reading], sent: Double) async throws -> ReadingBatch {
        let seq = sequence.add(1, ordering: .relaxed).oldValue
        let batch = ReadingBatch(agent: id, epoch: epoch, seq: seq, sent: sent, readings: readings)
        let payload = Array(batch.payload.utf8)
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            do {
                _ = try client.publish(topic: topics.readings(agent: id).name, payload: payload, qos: .atLeastOnce)
                return batch
            } catch .noConnection {
                guard ContinuousClock.now < deadline else { throw MQTTError.noConnection }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Skips `count` seqs, as batches a broker lost would leave a gap.
    func skip(_ count: Int) {
        sequence.add(count, ordering: .relaxed)
    }

    func sendRaw(_ payload: [UInt8]) throws {
        _ = try client.publish(topic: topics.readings(agent: id).name, payload: payload, qos: .atLeastOnce)
    }
}

/// Polls a condition every 20 ms until it holds, or fails the test once the waiter has spent `timeout` awake
/// (``Patience``: a stall of the shared workers counts for little). A condition that never holds still fails; only
/// slowness is forgiven.
func waitFor(_ what: String, timeout: Duration = .seconds(60), _ condition: @Sendable () -> Bool) async throws {
    do {
        try await poll(what, timeout: timeout) { condition() ? true : nil }
    } catch let error as TimedOut {
        Issue.record("\(error)")
        throw CancellationError()
    }
}

/// The RSSI a tag at `position` gives at an agent of the map, by the map's own model (no noise).
func modelRSSI(map: FloorMap, agent: Agent, position: Point) -> Double {
    let dz = agent.height - map.model.tagHeight
    let horizontal = agent.position.distance(to: position)
    let distance = (horizontal * horizontal + dz * dz).squareRoot()
    return (map.model.measuredPower - 10 * map.model.pathLossExponent * log10(max(distance, 0.1))).rounded()
}

func now() -> Double { Date().timeIntervalSince1970 }
