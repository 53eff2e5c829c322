import Foundation
import Glibc
import Testing
import WhereaboutsHTTPServer

/// A blocking TCP client on 127.0.0.1 that sends raw bytes, as a hostile or careless client would.
final class RawClient: Sendable {
    let descriptor: Int32

    /// Connects; `receiveBuffer` shrinks the kernel's receive buffer first (for a slow reader); `source` is the
    /// loopback address to connect from (any of 127.0.0.0/8), for a peer other than 127.0.0.1.
    init(port: UInt16, receiveBuffer: Int32? = nil, timeout: Double = 5, source: String? = nil) throws {
        // Everything that can fail happens before `self` exists, so a failure never closes the descriptor twice
        // (a class whose initializer throws after initializing its properties is deinitialized).
        descriptor = try Self.connected(port: port, receiveBuffer: receiveBuffer, source: source)
        // Timeouts for reading and writing only: a connect waits for the server's backlog like any client's.
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func connected(port: UInt16, receiveBuffer: Int32?, source: String?) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ClientError.system("socket", errno) }
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            guard inet_pton(AF_INET, source, &local.sin_addr) == 1 else {
                close(descriptor)
                throw ClientError.system("inet_pton", EINVAL)
            }
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                let number = errno
                close(descriptor)
                throw ClientError.system("bind", number)
            }
        }
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let number = errno
            close(descriptor)
            throw ClientError.system("connect", number)
        }
        return descriptor
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    deinit { close(descriptor) }

    /// Sends all of `text`; false if the server has closed.
    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }

    /// Reads until the server closes, the timeout passes, or `limit` bytes arrived.
    /// `progress` hears the running total after every receive.
    func readToEnd(limit: Int = 1 << 20, progress: (Int) -> Void = { _ in }) -> (bytes: [UInt8], closed: Bool) {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while out.count < limit {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count > 0 {
                out += buffer[0..<count]
                progress(out.count)
            } else {
                // 0 is an orderly close, ECONNRESET an abrupt one; EAGAIN is the timeout.
                return (out, count == 0 || errno == ECONNRESET)
            }
        }
        return (out, false)
    }

    /// Sends a byte every 100 ms, up to 100 of them, until the server closes the connection; whether it did. Counted in
    /// steps, not wall-clock time: a test thread that other tests keep busy must not decide the outcome (the timeout
    /// is the server's, on its own thread, and its counters say it fired). Make the client with a short timeout.
    func trickleUntilClosed() async throws -> Bool {
        for _ in 0..<100 {
            if !send("X") { return true }
            if readToEnd(limit: 1).1 { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// Asks for the event stream and reads up to its first line (`retry:`): the response head and that line.
    func openStream() -> String {
        send("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
        return read(until: "retry: 1000\n\n")
    }

    /// Reads until `marker` has arrived (or the timeout, or a close).
    func read(until marker: String) -> String {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: out, as: UTF8.self).contains(marker) {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            out += buffer[0..<count]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The whole response to one request.
    static func exchange(port: UInt16, _ request: String) throws -> String {
        let client = try RawClient(port: port)
        client.send(request)
        return String(decoding: client.readToEnd().bytes, as: UTF8.self)
    }
}

enum ClientError: Error {
    case system(String, Int32)
}

/// The status code of a response's first line, or nil.
func status(of response: String) -> Int? {
    let parts = response.split(separator: " ", maxSplits: 2)
    guard parts.count >= 2, parts[0] == "HTTP/1.1" else { return nil }
    return Int(parts[1])
}

/// Limits small enough for tests to reach quickly.
extension HTTPServerConfiguration {
    static func testing() -> HTTPServerConfiguration {
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.headerTimeout = 1
        configuration.writeTimeout = 2
        configuration.maximumConnections = 32
        configuration.maximumStreams = 4
        configuration.maximumStreamBacklog = 64 * 1024
        configuration.socketSendBuffer = 16 * 1024
        return configuration
    }
}

/// A page at `/`, a stream at `/stream`, a response with an unsafe header at `/unsafe`, 404 elsewhere.
let testHandler: HTTPServer.Handler = { request in
    switch request.path {
    case "/":
        return HTTPResponse(
            status: 200, headers: [("Content-Type", "text/plain")], body: .complete(Array("hello\n".utf8)))
    case "/stream":
        return HTTPResponse(
            status: 200, headers: [("Content-Type", "text/event-stream")],
            body: .stream(initial: Array("retry: 1000\n\n".utf8)))
    case "/unsafe":
        return HTTPResponse(
            status: 200, headers: [("X-Name", "a\r\nSet-Cookie: stolen=1"), ("Bad Name", "x"), ("X-Fine", "ok")],
            body: .complete([]))
    default:
        return HTTPResponse(status: 404, headers: [], body: .complete([]))
    }
}

/// Runs a real server on a free loopback port for the length of `body`, then stops it.
func withServer<Result: Sendable>(
    _ configuration: HTTPServerConfiguration = .testing(), handler: @escaping HTTPServer.Handler = testHandler,
    _ body: @Sendable (HTTPServer) async throws -> Result
) async throws -> Result {
    try await withServer(configuration, requestHandler: { handler($0.head) }, body)
}

/// Runs a real server whose handler takes whole requests (bodies too), for the length of `body`, then stops it.
func withServer<Result: Sendable>(
    _ configuration: HTTPServerConfiguration, requestHandler: @escaping HTTPServer.RequestHandler,
    _ body: @Sendable (HTTPServer) async throws -> Result
) async throws -> Result {
    let server = try HTTPServer(configuration, requestHandler: requestHandler)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await server.run() }
        do {
            // The tests block their threads in socket calls: let the server's thread start first.
            while !server.isServing { try await Task.sleep(for: .milliseconds(5)) }
            let result = try await body(server)
            server.stop()
            try await group.waitForAll()
            return result
        } catch {
            server.stop()
            try? await group.waitForAll()
            throw error
        }
    }
}

/// Waits (bounded) until `condition` holds.
func eventually(within seconds: Double = 5, _ condition: () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}

/// Many connections at once, from a child process (`python3`, as the repository's scripts use): it opens them all
/// without blocking, reads until `closing` of them have been closed by the server (or 60 s pass), prints what each
/// got, and holds the rest open until it is ended.
final class ConnectionCrowd {
    struct Report: Decodable, CustomStringConvertible {
        var busy: Int
        var held: Int
        var other: Int
        var description: String { "busy \(busy), held \(held), other \(other)" }
    }

    private let process = Process()
    private let output = Pipe()

    static let script = """
        import json, select, socket, sys, time
        port, count, closing = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
        sockets = []
        for _ in range(count):
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            sockets.append(s)
        got = {s.fileno(): b"" for s in sockets}
        closed = set()
        deadline = time.time() + 60
        while time.time() < deadline and len(closed) < closing:
            poller = select.poll()
            for s in sockets:
                if s.fileno() not in closed:
                    poller.register(s, select.POLLIN)
            poller.poll(100)
            for s in sockets:
                if s.fileno() in closed:
                    continue
                try:
                    data = s.recv(512)
                except BlockingIOError:
                    continue
                except OSError:
                    closed.add(s.fileno())
                    continue
                if data:
                    got[s.fileno()] += data
                else:
                    closed.add(s.fileno())
        busy = sum(1 for s in sockets if s.fileno() in closed and got[s.fileno()].startswith(b"HTTP/1.1 503 "))
        held = sum(1 for s in sockets if s.fileno() not in closed and not got[s.fileno()])
        print(json.dumps({"busy": busy, "held": held, "other": count - busy - held}), flush=True)
        time.sleep(120)  # until told to disperse (killed)
        """

    init(port: UInt16, count: Int, closing: Int) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.script, String(port), String(count), String(closing)]
        process.standardOutput = output
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Waits for the child's report (bounded by its own 60 s deadline).
    func report() throws -> Report {
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        return try JSONDecoder().decode(Report.self, from: line)
    }

    /// Closes every connection by ending the child (not by closing its input: a broker another test spawns at the
    /// same moment may inherit the pipe and keep it open).
    func disperse() {
        // SIGKILL: a test runner may leave SIGTERM ignored, and children inherit that.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
