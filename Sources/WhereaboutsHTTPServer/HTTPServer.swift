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
/// **Strict.** One request per connection (`Connection: close`), GET and HEAD only unless bodies are allowed
/// (``HTTPServerConfiguration/maximumBodyBytes``: then POST and PUT with `Content-Length` bodies), heads bounded and
/// parsed by ``HTTPRequestParser``; a refused request gets its status and is closed (405 with `Allow`). A HEAD is
/// answered as its GET would be, head only.
///
/// **Bounded, and fair.** Two budgets, so that streams never starve page loads: at most
/// ``HTTPServerConfiguration/maximumConnections`` request connections and ``HTTPServerConfiguration/maximumStreams``
/// streams, each also per peer address. A full request budget gives up its oldest unfinished connection for a newcomer
/// (``ConnectionBudget`` says why that is fair even when attacker and good client share an address); a full stream
/// budget gives up the stream furthest behind (if any is). Both shrink to the process's descriptor limit. A silent
/// connection waits in the kernel (``HTTPServerConfiguration/deferAccept``); the first byte must arrive within
/// ``HTTPServerConfiguration/firstByteTimeout``, the head within ``HTTPServerConfiguration/headerTimeout``; a stream
/// whose reader falls more than ``HTTPServerConfiguration/maximumStreamBacklog`` behind is dropped, not buffered (its
/// browser reconnects and gets a fresh snapshot). Every refusal is counted in ``statistics`` and reported through
/// ``HTTPServerConfiguration/log`` at a bounded rate. Out of file descriptors, the server gives up a connection or
/// pauses taking new ones; it does not spin.
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

    let listener: Int32
    let wakeRead: Int32
    private let wakeWrite: Int32
    let handler: RequestHandler
    let inbox = Mutex(Inbox())
    let counters = Mutex(HTTPServerStatistics())
    private let started = Atomic<Bool>(false)
    private let serving = Atomic<Bool>(false)
    let listenerOpen = Atomic<Bool>(true)

    /// Broadcasts and a stop request waiting for the loop.
    struct Inbox {
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
        // A connection that sends nothing waits in the kernel, not in our budget (see `deferAccept`).
        var deferSeconds = Int32(max(0, min(configuration.deferAccept, 60)).rounded(.up))
        setsockopt(
            descriptor, Int32(IPPROTO_TCP), TCP_DEFER_ACCEPT, &deferSeconds, socklen_t(MemoryLayout<Int32>.size))
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

    private func serve() {
        serving.store(true, ordering: .releasing)
        defer { serving.store(false, ordering: .releasing) }
        var loop = HTTPPollLoop(server: self)
        while let descriptors = loop.waitForEvents() {
            let now = Self.monotonic()
            guard loop.takeBroadcasts(woken: descriptors[0].revents != 0, now: now) else { break }
            // Sockets with something to read first, then newcomers: a request that arrived is answered before a
            // newcomer could push its connection out.
            loop.serveReadySockets(descriptors.dropFirst(2), now: now)
            if descriptors[1].revents & Int16(POLLIN) != 0 { loop.acceptNewConnections(now: now) }
            loop.applyDeadlines(now: now)
        }
        loop.finishAll()
        // Free the port as soon as the server stops, so that a successor can bind it at once.
        closeListener()
    }

    private func closeListener() {
        if listenerOpen.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged {
            close(listener)
        }
    }

    static func monotonic() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
