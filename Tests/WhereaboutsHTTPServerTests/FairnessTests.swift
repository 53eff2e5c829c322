import Foundation
import Glibc
import Synchronization
import Testing
import WhereaboutsHTTPServer

/// One local client must not lock everyone out: floods of each kind (from 127.0.0.1, like the page loads they compete
/// with) against the real server, at four times its budget. Page loads are counted, not timed: each has the client's
/// 5 s; before fairness, nearly all of them got 503.
@Suite("HTTP server fairness under floods")
struct FairnessTests {
    /// The tests' small budgets, with timeouts long enough that only the budget's choice of whom to give up helps.
    static func longTimeouts() -> HTTPServerConfiguration {
        var configuration = HTTPServerConfiguration.testing()
        configuration.firstByteTimeout = 30
        configuration.headerTimeout = 30
        return configuration
    }

    /// Idle connections mostly wait in the kernel (`TCP_DEFER_ACCEPT`) and never reach the budget; those the kernel
    /// hands over after its wait are pushed out oldest first (the 1,000-connection test in `HostileRequestTests`).
    /// Slowloris clients send a byte a second and never a whole head: the oldest unfinished is given up first.
    @Test(
        "idle or slowloris connections four times the budget: page loads are answered",
        arguments: [HostileFlood.Kind.idle, .slowloris])
    func requestFlood(_ kind: HostileFlood.Kind) async throws {
        try await withServer(Self.longTimeouts()) { server in
            let flood = try HostileFlood(
                port: server.port, kind: kind, count: 4 * server.configuration.maximumConnections)
            let answered = pageLoads(port: server.port, count: 20)
            flood.disperse()
            #expect(answered >= 19, "\(kind): \(answered) of 20 page loads answered; \(server.statistics)")
        }
    }

    @Test("streams never read, sixteen times their budget: page loads are answered and a reader keeps receiving")
    func unreadStreams() async throws {
        try await withServer(Self.longTimeouts()) { server in
            let reader = try RawClient(port: server.port, timeout: 10)
            #expect(reader.openStream().contains("200 OK"))
            let flood = try HostileFlood(port: server.port, kind: .sse, count: 16 * server.configuration.maximumStreams)
            let answered = pageLoads(port: server.port, count: 20)
            server.broadcast(Array("data: during the flood\n\n".utf8))
            #expect(reader.read(until: "during the flood").contains("data: during the flood"), "\(server.statistics)")
            flood.disperse()
            #expect(answered >= 19, "\(answered) of 20 page loads answered; \(server.statistics)")
            #expect(server.statistics.refused[503] ?? 0 > 0, "stream requests over the budget are refused")
            #expect(server.statistics.openStreams >= 1)
        }
    }

    @Test("all three floods at once, with a stream reader connected: page loads answered, the reader receives")
    func everyFlood() async throws {
        try await withServer(Self.longTimeouts()) { server in
            let reader = try RawClient(port: server.port, timeout: 10)
            #expect(reader.openStream().contains("200 OK"))
            let count = 2 * server.configuration.maximumConnections
            let floods = try [HostileFlood.Kind.idle, .slowloris, .sse].map {
                try HostileFlood(port: server.port, kind: $0, count: count)
            }
            let answered = pageLoads(port: server.port, count: 20)
            server.broadcast(Array("data: still here\n\n".utf8))
            #expect(reader.read(until: "still here").contains("data: still here"))
            for flood in floods { flood.disperse() }
            #expect(answered >= 19, "\(answered) of 20 page loads answered; \(server.statistics)")
        }
    }

    @Test("a full stream budget gives up the reader that stopped reading for a new stream, never those keeping up")
    func streamBehindGivenUp() async throws {
        var configuration = HTTPServerConfiguration.testing()
        configuration.keepAliveInterval = 3600
        configuration.writeTimeout = 60  // a busy machine's pauses must not drop the stalled reader first
        try await withServer(configuration) { server in
            let stalled = try RawClient(port: server.port, receiveBuffer: 4096, timeout: 5)
            #expect(stalled.openStream().contains("200 OK"))
            // The others read nothing during the burst either, but their kernel buffers hold it: not behind.
            let readers = try (1..<server.configuration.maximumStreams).map { _ in
                let reader = try RawClient(port: server.port, timeout: 5)
                #expect(reader.openStream().contains("200 OK"))
                return reader
            }
            // 40 KiB: more than a quarter of the 64 KiB backlog limit waits for the stalled reader, less than the
            // limit (which would drop it anyway).
            let event = Array(("data: " + String(repeating: "z", count: 1017) + "\n\n").utf8)
            for _ in 0..<40 { server.broadcast(event) }
            try await Task.sleep(for: .milliseconds(200))
            #expect(server.statistics.slowStreamsDropped == 0)
            let newcomer = try RawClient(port: server.port, timeout: 5)
            #expect(newcomer.openStream().contains("200 OK"), "\(server.statistics)")
            #expect(server.statistics.evictedStreams == 1)
            #expect(stalled.readToEnd(limit: 1 << 20).closed, "the stalled reader's stream ended")
            server.broadcast(Array("data: after\n\n".utf8))
            for reader in readers + [newcomer] {
                #expect(reader.read(until: "data: after").hasSuffix("data: after\n\n"))
            }
        }
    }

    @Test("a connection that sends nothing is closed after the first-byte timeout, long before the header timeout")
    func firstByteTimeout() async throws {
        var configuration = HTTPServerConfiguration.testing()
        configuration.firstByteTimeout = 0.5
        configuration.headerTimeout = 30
        try await withServer(configuration) { server in
            let idle = try RawClient(port: server.port, timeout: 10)
            #expect(idle.readToEnd().closed, "the idle connection was closed")
            #expect(server.statistics.firstByteTimeouts == 1)
            #expect(server.statistics.headTimeouts == 0)
            // A byte in time buys the head its header timeout: this one is still open when the first was closed.
            let talking = try RawClient(port: server.port, timeout: 1)
            talking.send("GET / HTTP/1.1\r\n")
            #expect(!talking.readToEnd().closed)
            talking.send("Host: t\r\n\r\n")
            #expect(status(of: String(decoding: talking.readToEnd().bytes, as: UTF8.self)) == 200)
        }
    }

    @Test("a peer address at its own limit gives up its own oldest connections, never another address's")
    func perAddressLimit() async throws {
        // 127.0.0.2 holds 8 of 32; 127.0.0.1 may hold 24, so the budget is full, and the oldest connections are
        // 127.0.0.2's: without per-address limits they would be the first given up.
        var configuration = Self.longTimeouts()
        configuration.maximumConnectionsPerAddress = 24
        try await withServer(configuration) { server in
            // A first line each, so that the kernel hands them over at once (it holds silent ones back).
            let others = try (0..<8).map { _ in
                let other = try RawClient(port: server.port, timeout: 0.2, source: "127.0.0.2")
                other.send("GET / HTTP/1.1\r\n")
                return other
            }
            try await #expect(eventually { server.statistics.openConnections == 8 })
            let flood = try HostileFlood(port: server.port, kind: .slowloris, count: 64)
            try await #expect(eventually(within: 20) { server.statistics.evictedUnfinished >= 100 })
            for other in others { #expect(!other.readToEnd().closed, "127.0.0.2's connections stay open") }
            #expect(pageLoads(port: server.port, count: 5) >= 4)
            flood.disperse()
            // Each of 127.0.0.2's connections may still ask, and is answered.
            for other in others.prefix(2) {
                other.send("Host: t\r\n\r\n")
                #expect(String(decoding: other.readToEnd().bytes, as: UTF8.self).hasSuffix("hello\n"))
            }
        }
    }

    @Test("HEAD is answered like GET without the body; a HEAD of the stream opens none")
    func head() async throws {
        try await withServer { server in
            let page = try RawClient.exchange(port: server.port, "HEAD / HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(status(of: page) == 200)
            #expect(page.contains("Content-Length: 6\r\n"))
            #expect(page.hasSuffix("\r\n\r\n"), "no body: \(page.debugDescription)")
            let stream = try RawClient.exchange(port: server.port, "HEAD /stream HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(status(of: stream) == 200)
            #expect(stream.contains("text/event-stream"))
            #expect(stream.hasSuffix("\r\n\r\n"))
            let missing = try RawClient.exchange(port: server.port, "HEAD /nothing HTTP/1.0\r\n\r\n")
            #expect(status(of: missing) == 404)
            #expect(server.statistics.headRequests == 3)
            #expect(server.statistics.streamsOpened == 0)
            let withBody = try RawClient.exchange(
                port: server.port, "HEAD / HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nok")
            #expect(status(of: withBody) == 400)
        }
    }

    @Test("refusals are all counted and logged at a bounded rate: one line at once, the rest summed up at stop")
    func boundedLog() async throws {
        let lines = Mutex<[String]>([])
        var configuration = HTTPServerConfiguration.testing()
        configuration.refusalLogInterval = 3600
        configuration.log = { line in lines.withLock { $0.append(line) } }
        try await withServer(configuration) { server in
            for _ in 0..<30 {
                _ = try RawClient.exchange(port: server.port, "DELETE / HTTP/1.1\r\nHost: t\r\n\r\n")
            }
            #expect(server.statistics.refused[405] == 30)
        }
        let logged = lines.withLock { $0 }
        #expect(logged.count == 2, "\(logged)")
        #expect(logged.first?.hasSuffix(": 1 requests refused with 405") == true, "\(logged)")
        #expect(
            logged.last?.hasSuffix(": 29 requests refused with 405") == true, "the rest, when it stopped: \(logged)")
    }
}
