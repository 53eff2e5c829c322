import DetachedThread
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A small, strict HTTP/1.1 server for one page and its event stream, over plain sockets and `poll`.
///
/// ```swift
/// let server = try HTTPServer(configuration) { request in HTTPResponse(status: 200, headers: [], body: .complete(bytes)) }
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { try await server.run() }
///     server.broadcast(Array("data: hello\n\n".utf8))   // to every open stream
/// }
/// ```
///
/// **Strict.** One request per connection (`Connection: close`), GET only unless bodies are allowed
/// (``HTTPServerConfiguration/maximumBodyBytes``: then POST and PUT with `Content-Length` bodies), heads bounded and
/// parsed by ``HTTPRequestParser``; a refused request gets its status and is closed. **Bounded.** At most
/// ``HTTPServerConfiguration/maximumConnections`` connections (the next one gets 503 at once) and
/// ``HTTPServerConfiguration/maximumStreams`` streams; a head must arrive within
/// ``HTTPServerConfiguration/headerTimeout``; a stream whose reader falls more than
/// ``HTTPServerConfiguration/maximumStreamBacklog`` behind is dropped, not buffered (its browser reconnects and gets
/// a fresh snapshot).
///
/// **Threading.** ``run()`` drives the sockets on a thread of its own (`poll` blocks), and calls
/// the handler there, one request at a time: keep it quick. ``broadcast(_:)`` and ``stop()`` may be called from any
/// thread; they queue under a `Mutex` and wake the loop through a pipe. The loop's connection table is its own.
public final class HTTPServer: Sendable {
    /// What a request is answered with; called on the server's thread.
    public typealias Handler = @Sendable (HTTPRequestHead) -> HTTPResponse
    /// What a whole request (head, body, peer) is answered with; called on the server's thread.
    public typealias RequestHandler = @Sendable (HTTPRequest) -> HTTPResponse

    /// The settings the server runs with.
    public let configuration: HTTPServerConfiguration
    /// The port it listens on (the kernel's pick when the configuration said 0).
    public let port: UInt16

    private let listener: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let handler: RequestHandler
    private let inbox = Mutex(Inbox())
    private let counters = Mutex(HTTPServerStatistics())
    private let started = Atomic<Bool>(false)
    private let serving = Atomic<Bool>(false)
    private let listenerOpen = Atomic<Bool>(true)

    /// Broadcasts and a stop request waiting for the loop.
    private struct Inbox {
        var broadcasts: [[UInt8]] = []
        var bytes = 0
        var overflowed = false
        var stopping = false
    }

    /// Binds and listens; serves nothing until ``run()``. The handler sees request heads only (GET).
    public convenience init(_ configuration: HTTPServerConfiguration, handler: @escaping Handler)
        throws(HTTPServerError)
    {
        try self.init(configuration, requestHandler: { request in handler(request.head) })
    }

    /// Binds and listens; serves nothing until ``run()``. The handler sees whole requests: with
    /// ``HTTPServerConfiguration/maximumBodyBytes`` above 0, their bodies too.
    public init(_ configuration: HTTPServerConfiguration, requestHandler handler: @escaping RequestHandler)
        throws(HTTPServerError)
    {
        guard let address = IPv4.parse(configuration.host) else { throw .invalidAddress(configuration.host) }
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .system(call: "socket", errno: errno) }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = configuration.port.bigEndian
        socketAddress.sin_addr = address
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let number = errno
            close(descriptor)
            throw .system(call: "bind", errno: number)
        }
        guard listen(descriptor, Int32(clamping: configuration.listenBacklog)) == 0, IPv4.setNonBlocking(descriptor)
        else {
            let number = errno
            close(descriptor)
            throw .system(call: "listen", errno: number)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            let number = errno
            close(descriptor)
            throw .system(call: "pipe", errno: number)
        }
        for end in pipeEnds {
            _ = IPv4.setNonBlocking(end)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        self.configuration = configuration
        self.port = UInt16(bigEndian: socketAddress.sin_port)
        self.listener = descriptor
        self.wakeRead = pipeEnds[0]
        self.wakeWrite = pipeEnds[1]
        self.handler = handler
    }

    deinit {
        closeListener()
        close(wakeRead)
        close(wakeWrite)
    }

    /// Whether the server's thread is taking connections (from shortly after ``run()`` starts until it ends).
    public var isServing: Bool { serving.load(ordering: .acquiring) }

    /// What the server has done so far.
    public var statistics: HTTPServerStatistics { counters.withLock { $0 } }

    /// Serves until the task is cancelled or ``stop()`` is called, then closes every connection and returns.
    /// A server runs once.
    public func run() async throws {
        guard started.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { throw HTTPServerError.alreadyRun }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                do {
                    try Self.startThread {
                        self.serve()
                        continuation.resume()
                    }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            stop()
        }
    }

    /// Asks ``run()`` to close everything and return. Returns at once.
    public func stop() {
        inbox.withLock { $0.stopping = true }
        wake()
    }

    /// Sends bytes to every open stream. Returns at once; the server's thread writes them.
    ///
    /// If the server's thread falls more than ``HTTPServerConfiguration/maximumPendingBroadcast`` behind, the
    /// waiting broadcasts are discarded and every stream is closed, so that its reader reconnects and starts afresh.
    public func broadcast(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        let limit = configuration.maximumPendingBroadcast
        inbox.withLock { inbox in
            if inbox.bytes + bytes.count > limit {
                inbox.broadcasts.removeAll()
                inbox.bytes = 0
                inbox.overflowed = true
            } else {
                inbox.broadcasts.append(bytes)
                inbox.bytes += bytes.count
            }
        }
        wake()
    }

    /// Runs `body` on a thread of its own (``DetachedThread``): the loop blocks in `poll`.
    private static func startThread(_ body: @escaping @Sendable () -> Void) throws(HTTPServerError) {
        let result = DetachedThread.start(name: "http-poll", body)
        guard result == 0 else { throw .system(call: "pthread_create", errno: result) }
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // a full pipe already means "wake up"
    }

    // MARK: - The loop (the server's thread only)

    private enum Phase: Equatable {
        /// Waiting for the request head, until the deadline.
        case readingHead
        /// Head accepted; waiting for the body's `length` bytes after the head's `headLength`, until the deadline.
        case readingBody(head: HTTPRequestHead, headLength: Int, length: Int)
        /// Sending a response, then closing.
        case responding
        /// Response sent and our side shut; reading until the peer closes (so that no reset cuts the response).
        case lingering
        /// An open event stream.
        case streaming
    }

    private final class Connection {
        let descriptor: Int32
        /// The peer's address, dotted, and whether it is on loopback.
        let peer: (address: String, loopback: Bool)
        let accepted: Double
        var phase = Phase.readingHead
        var received: [UInt8] = []
        var output = OutputQueue()
        var discarded = 0
        var deadline: Double
        var lastProgress: Double

        init(descriptor: Int32, peer: (address: String, loopback: Bool), now: Double, headerTimeout: Double) {
            self.descriptor = descriptor
            self.peer = peer
            accepted = now
            deadline = now + headerTimeout
            lastProgress = now
        }

        var pending: Int { output.pending }

        /// Queues bytes to send. A connection that had nothing to send starts its write timeout now: the time it
        /// sat idle is not a reader failing to keep up (a stream quiet for longer than the timeout was dropped at its
        /// next broadcast, before the poll loop had even tried to write it).
        func enqueue(_ bytes: [UInt8], now: Double) {
            if output.pending == 0 { lastProgress = now }
            output.append(bytes)
        }
    }

    private func serve() {
        serving.store(true, ordering: .releasing)
        defer { serving.store(false, ordering: .releasing) }
        var loop = PollLoop(server: self)
        while let descriptors = loop.waitForEvents() {
            let now = Self.monotonic()
            guard loop.takeBroadcasts(woken: descriptors[0].revents != 0, now: now) else { break }
            if descriptors[1].revents & Int16(POLLIN) != 0 { loop.acceptNewConnections(now: now) }
            loop.serveReadySockets(descriptors.dropFirst(2), now: now)
            loop.applyDeadlines(now: now)
        }
        loop.finishAll()
        // Free the port as soon as the server stops, so that a successor can bind it at once.
        closeListener()
    }

    /// The server thread's state, with one method per step of the poll loop: wait, take broadcasts and stop
    /// requests, accept, read and answer, enforce deadlines.
    private struct PollLoop {
        let server: HTTPServer
        let parser: HTTPRequestParser
        let busy: [UInt8]
        var connections: [Int32: Connection] = [:]
        var streams = 0
        var nextKeepAlive: Double
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)

        var configuration: HTTPServerConfiguration { server.configuration }

        init(server: HTTPServer) {
            self.server = server
            let configuration = server.configuration
            parser = HTTPRequestParser(
                maximumRequestLineBytes: configuration.maximumRequestLineBytes,
                maximumHeadBytes: configuration.maximumHeadBytes, maximumHeaderCount: configuration.maximumHeaderCount,
                maximumBodyBytes: configuration.maximumBodyBytes)
            busy = HTTPResponse.refusal(503).encoded()
            nextKeepAlive = HTTPServer.monotonic() + configuration.keepAliveInterval
        }

        /// Waits for sockets, the wake pipe or the nearest deadline; nil when polling failed for good. The first two
        /// entries are the wake pipe and the listener, the rest the connections.
        mutating func waitForEvents() -> [pollfd]? {
            let now = HTTPServer.monotonic()
            var wait = min(nextKeepAlive - now, 1)
            for connection in connections.values {
                switch connection.phase {
                case .readingHead, .readingBody, .lingering: wait = min(wait, connection.deadline - now)
                case .responding, .streaming:
                    if connection.pending > 0 {
                        wait = min(wait, connection.lastProgress + configuration.writeTimeout - now)
                    }
                }
            }
            var descriptors = [pollfd(fd: server.wakeRead, events: Int16(POLLIN), revents: 0)]
            descriptors.append(pollfd(fd: server.listener, events: Int16(POLLIN), revents: 0))
            for (descriptor, connection) in connections {
                var events = Int16(POLLIN)
                if connection.pending > 0 { events |= Int16(POLLOUT) }
                descriptors.append(pollfd(fd: descriptor, events: events, revents: 0))
            }
            let milliseconds = Int32(max(0, min(wait, 1)) * 1000) + 1
            let ready = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
            if ready < 0 && errno != EINTR { return nil }
            return descriptors
        }

        /// Queues the broadcasts (and keep-alives) on every stream; false when the server is asked to stop.
        mutating func takeBroadcasts(woken: Bool, now: Double) -> Bool {
            if woken {
                while Glibc.read(server.wakeRead, &scratch, scratch.count) > 0 {}
            }
            let taken = server.inbox.withLock { inbox in
                defer {
                    inbox.broadcasts.removeAll()
                    inbox.bytes = 0
                    inbox.overflowed = false
                }
                return (broadcasts: inbox.broadcasts, overflowed: inbox.overflowed, stopping: inbox.stopping)
            }
            if taken.stopping { return false }
            if taken.overflowed {
                for connection in connections.values where connection.phase == .streaming { dropStream(connection) }
            }
            for bytes in taken.broadcasts { enqueueOnStreams(bytes, now: now) }
            if now >= nextKeepAlive {
                nextKeepAlive = now + configuration.keepAliveInterval
                enqueueOnStreams(configuration.keepAlive, now: now)
            }
            return true
        }

        /// Takes what the kernel has queued, refusing those beyond the limit at once.
        mutating func acceptNewConnections(now: Double) {
            for _ in 0..<256 {
                // accept4 is a GNU extension Swift does not import: accept, then set the flags.
                var address = sockaddr_in()
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                let descriptor = withUnsafeMutablePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(server.listener, $0, &length) }
                }
                guard descriptor >= 0 else { break }
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
                _ = IPv4.setNonBlocking(descriptor)
                if connections.count >= configuration.maximumConnections {
                    busy.withUnsafeBytes {
                        _ = send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                    }
                    close(descriptor)
                    server.counters.withLock { $0.refusedAtLimit += 1 }
                    continue
                }
                var size = Int32(configuration.socketSendBuffer)
                setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
                connections[descriptor] = Connection(
                    descriptor: descriptor, peer: IPv4.describe(address), now: now,
                    headerTimeout: configuration.headerTimeout)
                let open = connections.count
                server.counters.withLock {
                    $0.accepted += 1
                    $0.openConnections = open
                    $0.peakConnections = max($0.peakConnections, open)
                }
            }
        }

        /// Reads from and writes to the sockets poll found ready.
        mutating func serveReadySockets(_ entries: ArraySlice<pollfd>, now: Double) {
            for entry in entries where entry.revents != 0 {
                guard let connection = connections[entry.fd] else { continue }
                if entry.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    guard read(connection, now: now) else { continue }
                }
                if connections[entry.fd] != nil, connection.pending > 0 || connection.phase == .responding {
                    _ = flush(connection, now: now)
                }
            }
        }

        /// Reads what a socket has; answers a complete request. False when the connection is gone.
        private mutating func read(_ connection: Connection, now: Double) -> Bool {
            let count = recv(connection.descriptor, &scratch, scratch.count, Int32(MSG_DONTWAIT))
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                // The peer closed or failed: nothing more can be asked or delivered.
                finish(connection)
                return false
            }
            guard count > 0 else { return true }
            switch connection.phase {
            case .readingHead:
                connection.received += scratch[0..<count]
                switch parser.parse(connection.received) {
                case .incomplete:
                    break
                case .refused(let status):
                    refuse(connection, status: status, now: now)
                case .complete(let head):
                    let headLength = HTTPRequestParser.headLength(of: connection.received) ?? connection.received.count
                    connection.phase = .readingBody(
                        head: head, headLength: headLength, length: HTTPRequestParser.bodyLength(of: head))
                    connection.deadline = connection.accepted + configuration.requestTimeout
                    if head.header("Expect")?.lowercased() == "100-continue",
                        connection.received.count == headLength
                    {
                        connection.enqueue(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), now: now)
                    }
                    answerIfWhole(connection, now: now)
                }
            case .readingBody:
                connection.received += scratch[0..<count]
                answerIfWhole(connection, now: now)
            default:
                // Bytes after the request (or on a stream) are read and ignored: one request per connection. A peer
                // that keeps sending anyway is not drained for long.
                connection.discarded += count
                if connection.discarded > configuration.maximumHeadBytes {
                    finish(connection)
                    return false
                }
            }
            return true
        }

        /// Hands a request whose body has all arrived to the handler and queues the answer.
        private mutating func answerIfWhole(_ connection: Connection, now: Double) {
            guard case .readingBody(let head, let headLength, let length) = connection.phase,
                connection.received.count >= headLength + length
            else { return }
            let request = HTTPRequest(
                head: head, body: Array(connection.received[headLength..<(headLength + length)]),
                peer: connection.peer.address, isLoopbackPeer: connection.peer.loopback)
            // Bytes beyond the body count as discarded (one request per connection).
            connection.discarded = connection.received.count - headLength - length
            var response = server.handler(request)
            if case .stream = response.body, streams >= configuration.maximumStreams {
                server.counters.withLock { $0.refused[503, default: 0] += 1 }
                response = .refusal(503)
            }
            server.counters.withLock { $0.requests += 1 }
            respond(connection, response, now: now)
        }

        /// Closes connections whose time is up: a head too slow, a lingering close, a reader that stopped reading.
        mutating func applyDeadlines(now: Double) {
            for connection in Array(connections.values) {
                switch connection.phase {
                case .readingHead where now >= connection.deadline:
                    server.counters.withLock { $0.headTimeouts += 1 }
                    finish(connection)
                case .readingBody where now >= connection.deadline:
                    server.counters.withLock { $0.bodyTimeouts += 1 }
                    finish(connection)
                case .lingering where now >= connection.deadline:
                    finish(connection)
                case .responding
                where connection.pending > 0 && now - connection.lastProgress > configuration.writeTimeout:
                    finish(connection)
                case .streaming
                where connection.pending > 0 && now - connection.lastProgress > configuration.writeTimeout:
                    dropStream(connection)
                default:
                    break
                }
            }
        }

        mutating func finishAll() {
            for connection in Array(connections.values) { finish(connection) }
        }

        // MARK: - Connections

        private mutating func enqueueOnStreams(_ bytes: [UInt8], now: Double) {
            for connection in connections.values where connection.phase == .streaming {
                connection.enqueue(bytes, now: now)
                if connection.pending > configuration.maximumStreamBacklog { dropStream(connection) }
            }
        }

        private mutating func finish(_ connection: Connection, slowReader: Bool = false) {
            close(connection.descriptor)
            connections[connection.descriptor] = nil
            if connection.phase == .streaming { streams -= 1 }
            let open = connections.count
            let openStreams = streams
            server.counters.withLock {
                $0.openConnections = open
                $0.openStreams = openStreams
                if slowReader { $0.slowStreamsDropped += 1 }
            }
        }

        private mutating func respond(_ connection: Connection, _ response: HTTPResponse, now: Double) {
            connection.received = []
            connection.enqueue(response.encoded(), now: now)
            connection.lastProgress = now
            if case .stream = response.body {
                connection.phase = .streaming
                streams += 1
                let openStreams = streams
                server.counters.withLock {
                    $0.streamsOpened += 1
                    $0.openStreams = openStreams
                }
            } else {
                connection.phase = .responding
            }
        }

        private mutating func refuse(_ connection: Connection, status: Int, now: Double) {
            server.counters.withLock { $0.refused[status, default: 0] += 1 }
            respond(
                connection, .refusal(status, allowed: configuration.maximumBodyBytes > 0 ? "GET, POST, PUT" : "GET"),
                now: now)
        }

        /// Sends what it can; false when the connection is gone.
        private mutating func flush(_ connection: Connection, now: Double) -> Bool {
            while connection.pending > 0 {
                let count = connection.output.withFirstChunk { buffer in
                    send(
                        connection.descriptor, buffer.baseAddress, buffer.count,
                        Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                }
                if count > 0 {
                    connection.output.consume(count)
                    connection.lastProgress = now
                } else if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                    return true
                } else {
                    finish(connection)
                    return false
                }
            }
            if connection.phase == .responding {
                shutdown(connection.descriptor, Int32(SHUT_WR))
                connection.phase = .lingering
                connection.deadline = now + 2
            }
            return true
        }

        private mutating func dropStream(_ connection: Connection) {
            finish(connection, slowReader: true)
        }
    }

    private func closeListener() {
        if listenerOpen.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged {
            close(listener)
        }
    }

    private static func monotonic() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
