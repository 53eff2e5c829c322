import BrokerFixture
import Foundation
import Glibc
import Synchronization
import Testing
import WhereaboutsWire

/// A TCP proxy on loopback between one client and the broker that can be frozen: while frozen it moves no byte either
/// way and keeps both connections open, as a network partition does (what each side sends waits in its socket, and
/// goes through at the heal).
final class PartitionProxy: Sendable {
    let port: Int
    private let listener: Int32
    private let target: Int
    private let frozen = Atomic<Bool>(false)
    private let closed = Atomic<Bool>(false)

    init(to target: Int) throws {
        self.target = target
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) }
        }
        try #require(bound == 0 && named == 0 && listen(socketFD, 8) == 0)
        listener = socketFD
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Stops moving bytes (both ways), or starts again.
    func freeze(_ on: Bool) { frozen.store(on, ordering: .sequentiallyConsistent) }

    /// Stops accepting and moving; the connections close as their pumps notice.
    func close() {
        closed.store(true, ordering: .sequentiallyConsistent)
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        while !closed.load(ordering: .sequentiallyConsistent) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: target)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                Glibc.close(client)
                Glibc.close(server)
                continue
            }
            Thread.detachNewThread { [self] in pump(from: client, to: server) }
            Thread.detachNewThread { [self] in pump(from: server, to: client) }
        }
    }

    /// Copies bytes until either side closes; while frozen, reads nothing.
    private func pump(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        defer {
            shutdown(source, Int32(SHUT_RDWR))
            shutdown(destination, Int32(SHUT_RDWR))
        }
        while !closed.load(ordering: .sequentiallyConsistent) {
            if frozen.load(ordering: .sequentiallyConsistent) {
                usleep(5_000)
                continue
            }
            var poller = pollfd(fd: source, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 20) >= 0 else { return }
            guard poller.revents != 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes {
                    write(destination, $0.baseAddress.map { $0 + offset }, count - offset)
                }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}

/// A locator of a pair on a given port (the broker's, or a proxy's).
final class HealLocator: Sendable {
    let id: String
    let process: ChildProcess
    let logPath: String

    init(_ id: String, map: String, port: Int, scratch: ScratchDirectory) throws {
        self.id = id
        logPath = scratch.file("\(id).log")
        process = try ChildProcess(
            executable: BuiltProducts.path("whereabouts-locator"),
            arguments: [
                "--map", map, "--broker", "mqtt://127.0.0.1:\(port)", "--client-id", id, "--role", "auto",
                "--warm-up", "1", "--log-level", "debug",
            ],
            outputPath: logPath)
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    func holds(_ lease: LocatorLease?) -> Bool {
        lease.map { $0.holder.hasPrefix(id + "/") } ?? false
    }
}

/// Two `whereabouts-locator --role auto` processes, the active one behind a ``PartitionProxy``: cut off from the broker
/// for longer than a lease, then healed.
@Suite("Lease after a partition heals", .serialized)
struct LeaseHealTests {
    /// When each line of a locator's log containing `text` was written (seconds since 1970).
    static func times(_ log: String, _ text: String) -> [Double] {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return log.split(separator: "\n").filter { $0.contains(text) }.compactMap { line in
            line.split(separator: " ").first.flatMap { format.date(from: String($0))?.timeIntervalSince1970 }
        }
    }

    @Test(
        "the active cut off for 10 s and healed: its late claims depose no one, and the site is never without an active"
    )
    func heal() async throws {
        let tests = try LocatorEndToEndTests()
        try await tests.withSite { broker, collector, agents, scratch in
            let proxy = try PartitionProxy(to: broker.port)
            defer { proxy.close() }
            func locator(_ id: String, port: Int) throws -> HealLocator {
                try HealLocator(id, map: tests.mapPath, port: port, scratch: scratch)
            }
            // The cut-off one's id sorts above the other's: before, its late claim of the same term won.
            let cut = try locator("locator-b", port: proxy.port)
            let topics = tests.topics
            try await waitFor("locator-b to hold the lease") {
                cut.holds(StandbyLocatorTests.lease(collector, topics))
            }
            let other = try locator("locator-a", port: broker.port)
            defer {
                for process in [cut.process, other.process] {
                    process.send(SIGKILL)
                    process.waitForExitBlocking()
                }
            }
            let sender = StandbyLocatorTests.Sender()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await sender.run(tests, agents: agents) }
                try await waitFor("locator-a to run as a standby") { other.log.contains("connected to ") }
                try await Task.sleep(for: .seconds(2))
                proxy.freeze(true)
                let cutAt = now()
                try await waitFor("locator-a to take over") { other.log.contains("active: took over") }
                try await Task.sleep(for: .seconds(7))
                let healed = now()
                proxy.freeze(false)
                try await Task.sleep(for: .seconds(8))
                sender.stop()
                group.cancelAll()
                // Each locator's role from its own log ("active: …" and "standby: …" lines, which a locator also
                // writes when it gives up a claim), merged in time: the longest stretch after the heal with neither
                // active.
                let events =
                    (Self.times(other.log, "active: ").map { ($0, 0, true) }
                    + Self.times(other.log, "standby: ").map { ($0, 0, false) }
                    + Self.times(cut.log, "active: ").map { ($0, 1, true) }
                    + Self.times(cut.log, "standby: ").map { ($0, 1, false) }).sorted { $0.0 < $1.0 }
                var roles = [false, false]
                var withoutSince: Double?
                var longest = 0.0
                for (time, index, active) in events {
                    roles[index] = active
                    if !roles.contains(true), withoutSince == nil { withoutSince = time }
                    if roles.contains(true), let since = withoutSince {
                        if time > healed { longest = max(longest, time - max(since, healed)) }
                        withoutSince = nil
                    }
                }
                if let since = withoutSince { longest = max(longest, now() - max(since, healed)) }
                let deposed = Self.times(other.log, "standby: ").filter { $0 > healed }.count
                print(
                    "partition of the active for \(healed - cutAt) s, healed: locator-a stood down "
                        + "\(deposed) times after the heal; longest time without an active locator after it \(longest) s "
                        + "(lease 3 s)")
                #expect(longest < 3, "no active locator for \(longest) s after the heal")
                #expect(deposed == 0, "the late claim deposed the active: \(other.log.suffix(2000))")
                #expect(other.holds(StandbyLocatorTests.lease(collector, topics)))
            }
        }
    }
}
