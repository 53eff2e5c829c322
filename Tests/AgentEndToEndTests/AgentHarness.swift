import BrokerFixture
import Foundation
import Glibc
import Synchronization
import TestFixtures
import Testing
import WhereaboutsAdvertising
import WhereaboutsCore
import WhereaboutsMQTT
import WhereaboutsWire

let site = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
let siteUUID = BeaconUUID(site)

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The built `whereabouts-agent`, found next to the test bundle in the build products directory.
enum AgentBinary {
    /// The binary: `WHEREABOUTS_AGENT_BINARY` if set (to profile a release build), else the one beside the tests.
    static func path() throws -> String {
        if let override = ProcessInfo.processInfo.environment["WHEREABOUTS_AGENT_BINARY"] { return override }
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { throw HarnessError("cannot read /proc/self/exe") }
        var directory =
            (String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            as NSString).deletingLastPathComponent
        for _ in 0..<5 {
            let candidate = directory + "/whereabouts-agent"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = (directory as NSString).deletingLastPathComponent
        }
        throw HarnessError("whereabouts-agent not found beside the tests; run `swift build --build-tests` first")
    }
}

/// A scratch directory for one test, removed afterwards.
final class ScratchDirectory: Sendable {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/whereabouts-agent-e2e-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
        guard let made else { throw HarnessError("mkdtemp failed") }
        path = made
    }

    deinit {
        if ProcessInfo.processInfo.environment["WHEREABOUTS_KEEP_BROKER_DIRS"] == nil {
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}

/// One run of the agent binary, its output captured in a file.
final class AgentRun: Sendable {
    let process: ChildProcess
    let outputPath: String

    init(_ arguments: [String], in directory: ScratchDirectory, name: String = "agent") throws {
        outputPath = directory.path + "/\(name).out"
        // An empty configuration file, so a real /etc/whereabouts/agent.conf cannot leak into the test.
        let config = directory.path + "/empty.conf"
        _ = FileManager.default.createFile(atPath: config, contents: Data())
        process = try ChildProcess(
            executable: try AgentBinary.path(), arguments: arguments + ["--config", config], outputPath: outputPath)
    }

    /// Everything the agent wrote to stdout and stderr.
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Waits for the agent to exit on its own; returns its exit code.
    func exitCode(within timeout: Duration) async throws -> Int32 {
        guard await process.waitForExit(timeout: timeout) else {
            process.send(SIGKILL)
            _ = await process.waitForExit(timeout: .seconds(5))
            throw HarnessError("the agent did not exit within \(timeout):\n\(output)")
        }
        guard let code = process.exitCode else { throw HarnessError("the agent died by a signal:\n\(output)") }
        return code
    }

    /// The `key=value` pairs of the agent's final summary line.
    var summary: [String: String] {
        guard let line = output.split(separator: "\n").last(where: { $0.contains("summary:") }) else { return [:] }
        var pairs: [String: String] = [:]
        for token in line.split(separator: " ") {
            let parts = token.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { pairs[String(parts[0])] = String(parts[1]) }
        }
        return pairs
    }

    func counter(_ key: String) -> Int? { summary[key].flatMap { Int($0) } }

    deinit {
        if process.isRunning {
            process.send(SIGKILL)
            process.waitForExitBlocking()
        }
    }
}

// MARK: - Captures

/// Builds a btsnoop capture (monitor format, as `btmon -w` writes) and remembers what a correct agent must publish.
struct Capture {
    var packets: [BtsnoopPacket] = []
    /// Adverts per selected site tag.
    var expected: [TagIdentity: Int] = [:]
    /// Events that are not site beacons (noise, foreign beacons, malformed events).
    var others = 0

    /// A site (or foreign) iBeacon advert as one LE Advertising Report event.
    mutating func iBeacon(uuid: BeaconUUID?, major: UInt16, minor: UInt16, rssi: Int8, at time: Double) {
        guard let uuid else { return }
        let advertisement = IBeaconAdvertisement(uuid: uuid, major: major, minor: minor, measuredPower: -59)
        let address: [UInt8] = [
            UInt8(truncatingIfNeeded: minor), UInt8(truncatingIfNeeded: major), 0x33, 0x44, 0x55, 0xC6,
        ]
        packets.append(
            BtsnoopPacket(
                time: time, event: Self.event(data: advertisement.advertisingData, rssi: rssi, address: address)))
        if uuid == siteUUID {
            expected[advertisement.tag, default: 0] += 1
        } else {
            others += 1
        }
    }

    /// Raw event bytes without the H4 type byte (a fixture event with its 0x04 stripped, or a malformed one).
    mutating func raw(_ event: [UInt8], at time: Double) {
        packets.append(BtsnoopPacket(time: time, event: event))
        others += 1
    }

    /// A bare LE Meta event holding one legacy report.
    static func event(
        data: [UInt8], rssi: Int8, address: [UInt8] = [1, 2, 3, 4, 5, 0xC6], lengthByte: UInt8? = nil,
        count: UInt8 = 1, plenAdjustment: Int = 0, trailing: [UInt8] = []
    ) -> [UInt8] {
        var report: [UInt8] = [0x03, 0x01] + address
        report.append(lengthByte ?? UInt8(data.count))
        report += data
        report.append(UInt8(bitPattern: rssi))
        let body = [0x02, count] + report + trailing
        return [0x3E, UInt8(truncatingIfNeeded: body.count + plenAdjustment)] + body
    }

    var sorted: [BtsnoopPacket] { packets.sorted { $0.time < $1.time } }

    /// The capture as btsnoop bytes, events in time order.
    var bytes: [UInt8] { BtsnoopWriter(datalink: .monitor).file(sorted) }

    func write(to path: String, appending tail: [UInt8] = []) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes + tail)) else {
            throw HarnessError("cannot write \(path)")
        }
    }

    var expectedTotal: Int { expected.values.reduce(0, +) }
}

/// Real non-beacon adverts from the shared fixture hci-events/noise.jsonl (Tests/TestFixtures), without their H4
/// type byte.
enum NoiseEvents {
    static let all: [[UInt8]] = load()

    private static func load() -> [[UInt8]] {
        // A missing file leaves no events, which the harness's count check reports.
        guard let text = try? TestFixtures.text("hci-events/noise.jsonl") else { return [] }
        return text.split(separator: "\n").compactMap { line -> [UInt8]? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let hex = object["hex"] as? String
            else { return nil }
            let digits = Array(hex.utf8)
            var bytes: [UInt8] = []
            for index in stride(from: 0, to: digits.count - 1, by: 2) {
                guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                    return nil
                }
                bytes.append(byte)
            }
            return bytes.first == 0x04 ? Array(bytes.dropFirst()) : nil
        }
    }
}

// MARK: - Observing the broker

/// Everything a subscriber received, recorded by a background task.
final class Observer: Sendable {
    private let received = Mutex<[MQTTMessage]>([])
    private let subscribed = Atomic<Int>(0)

    var messages: [MQTTMessage] { received.withLock { $0 } }
    var subscriptions: Int { subscribed.load(ordering: .relaxed) }

    func record(_ message: MQTTMessage) { received.withLock { $0.append(message) } }
    func recordSubscription() { subscribed.add(1, ordering: .relaxed) }

    /// Payloads received on `topic`, as text, in order.
    func payloads(on topic: String) -> [String] {
        messages.filter { $0.topic == topic }.map { String(decoding: $0.payload, as: UTF8.self) }
    }
}

/// Subscribes to one agent's topics on `broker` while `body` runs.
func observing<Result>(
    _ broker: MosquittoBroker, agent: String, persistent: Bool = false, account: (String, String)? = nil,
    name: String? = nil,
    _ body: (Observer) async throws -> Result
) async throws -> Result {
    let configuration = MQTTClientConfiguration(
        host: broker.host, port: broker.port, clientID: "observer-\(name ?? agent)", username: account?.0,
        password: account?.1, tls: broker.certificates.map { MQTTTLSConfiguration(caFile: $0.caFile) },
        keepAlive: .seconds(5),
        cleanStart: !persistent, sessionExpiry: .seconds(600),
        reconnect: MQTTReconnectPolicy(
            initialDelay: .milliseconds(50), maximumDelay: .milliseconds(300), stableConnection: .zero),
        connectTimeout: .seconds(5))
    let client = try MQTTClient(configuration)
    try client.subscribe("whereabouts/v1/\(site)/agents/\(agent)/#", qos: .atLeastOnce)
    let observer = Observer()
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await client.run() }
        group.addTask {
            for await event in client.events { if case .subscribed = event { observer.recordSubscription() } }
        }
        group.addTask { for await message in client.messages { observer.record(message) } }
        do {
            try await waitUntil("the observer's subscription") { observer.subscriptions > 0 }
            let result = try await body(observer)
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

/// Polls `condition` until it holds; throws once the waiter has spent `timeout` awake (``Patience``), which only
/// turns a hang into a failure.
func waitUntil(_ what: String, timeout: Duration = .seconds(60), _ condition: () -> Bool) async throws {
    try await poll(what, timeout: timeout) { condition() ? true : nil }
}

/// The reading batches an observer received from one agent, decoded as the locator would decode them.
struct ReceivedBatches {
    /// Every batch in arrival order, duplicates included.
    var raw: [DecodedBatch] = []
    /// Payloads the decoder refused.
    var rejected = 0

    init(_ observer: Observer, agent: String) throws {
        guard let agentID = AgentID(agent) else { throw HarnessError("bad agent id \(agent)") }
        // Replayed readings may be stamped ahead of the clock (fast replay): time checks are not under test here.
        let decoder = BatchDecoder(tolerance: .init(futureSkew: 1e9, maximumAge: 1e9))
        for payload in observer.messages.filter({ $0.topic.hasSuffix("/readings") }).map(\.payload) {
            if let batch = decoder.decode(
                payload, topicAgent: agentID, knownAgents: [agentID], now: Date().timeIntervalSince1970
            ).batch {
                raw.append(batch)
            } else {
                rejected += 1
            }
        }
    }

    /// The first copy of each seq, in arrival order.
    var unique: [DecodedBatch] {
        var seen: Set<Int> = []
        return raw.filter { seen.insert($0.seq).inserted }
    }

    var duplicates: Int { raw.count - unique.count }

    /// Adverts per tag, summed over the unique batches (`n` of every reading).
    var adverts: [TagIdentity: Int] {
        var counts: [TagIdentity: Int] = [:]
        for batch in unique {
            for reading in batch.accepted { counts[reading.tag, default: 0] += reading.count }
        }
        return counts
    }

    var readingRejections: Int { unique.reduce(0) { $0 + $1.rejections.count } }
}
