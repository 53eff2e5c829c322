import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The server thread's state, with one method per step of the poll loop: wait, take broadcasts and stop requests,
/// read and answer, accept, enforce deadlines. Reading and answering are in `HTTPPollLoop+Exchange.swift`.
struct HTTPPollLoop {
    let server: HTTPServer
    let parser: HTTPRequestParser
    /// What a connection refused or given up for lack of room is told.
    let busy: [UInt8]
    var connections: [Int32: HTTPConnection] = [:]
    /// Descriptors by connection id, for the budget's answers.
    var descriptors: [Int: Int32] = [:]
    var budget: ConnectionBudget
    /// The open streams (also in ``connections``), so that broadcasts and the search for a stream to give up do
    /// not walk every connection.
    var streamTable: [Int32: HTTPConnection] = [:]
    var streamsPerAddress: [String: Int] = [:]
    let streamLimit: Int
    let streamPerAddressLimit: Int
    /// Until when no stream is looked for to give up, after a search found every stream keeping up (each search
    /// asks the kernel about every stream; a flood of stream requests must not make it ask thousands of times a
    /// second).
    var streamSearchNotBefore = -Double.infinity
    var nextID = 0
    var nextKeepAlive: Double
    /// Until when the listener is left alone after running out of file descriptors.
    var acceptPausedUntil = -Double.infinity
    /// The earliest deadline of any connection when the loop last looked.
    var nextDeadline = -Double.infinity
    var refusals: RefusalLog
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
        let limits = Self.limits(configuration)
        budget = ConnectionBudget(limit: limits.connections, perAddressLimit: limits.connectionsPerAddress)
        streamLimit = limits.streams
        streamPerAddressLimit = limits.streamsPerAddress
        refusals = RefusalLog(interval: configuration.refusalLogInterval)
        if limits.connections < configuration.maximumConnections || limits.streams < configuration.maximumStreams {
            configuration.log?(
                "http: only \(limits.descriptors) file descriptors (ulimit -n): at most \(limits.connections) "
                    + "connections and \(limits.streams) streams")
        }
        nextKeepAlive = HTTPServer.monotonic() + configuration.keepAliveInterval
    }

    /// The configured budgets, shrunk to fit the process's descriptor limit with some to spare (the process has
    /// other files: standard streams, the listener, the wake pipe, a broker connection, maps), so that streams can
    /// never take every descriptor and leave requests nothing to give up.
    static func limits(_ configuration: HTTPServerConfiguration) -> (
        connections: Int, connectionsPerAddress: Int, streams: Int, streamsPerAddress: Int, descriptors: Int
    ) {
        var limit = rlimit()
        let descriptors =
            getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0
            ? Int(clamping: limit.rlim_cur) : Int.max
        let wanted = configuration.maximumConnections + configuration.maximumStreams
        let available = max(descriptors - 32, 2)
        guard wanted > available else {
            return (
                configuration.maximumConnections, configuration.maximumConnectionsPerAddress,
                configuration.maximumStreams, configuration.maximumStreamsPerAddress, descriptors
            )
        }
        let streams = max(1, min(configuration.maximumStreams, available / 5))
        let connections = max(1, min(configuration.maximumConnections, available - streams))
        return (
            connections, min(configuration.maximumConnectionsPerAddress, connections), streams,
            min(configuration.maximumStreamsPerAddress, streams), descriptors
        )
    }

    /// Waits for sockets, the wake pipe or the nearest deadline; nil when polling failed for good. The first two
    /// entries are the wake pipe and the listener (-1, which poll skips, while accepting is paused), the rest the
    /// connections.
    mutating func waitForEvents() -> [pollfd]? {
        let now = HTTPServer.monotonic()
        var due = Double.infinity
        for connection in connections.values {
            switch connection.stage {
            case .readingHead, .readingBody, .lingering: due = min(due, connection.deadline)
            case .responding, .streaming:
                if connection.pending > 0 { due = min(due, connection.lastProgress + configuration.writeTimeout) }
            }
        }
        nextDeadline = due
        var wait = min(nextKeepAlive - now, due - now, 1)
        let listening = now >= acceptPausedUntil
        if !listening { wait = min(wait, acceptPausedUntil - now) }
        var descriptors = [pollfd(fd: server.wakeRead, events: Int16(POLLIN), revents: 0)]
        descriptors.append(pollfd(fd: listening ? server.listener : -1, events: Int16(POLLIN), revents: 0))
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
            for connection in streamTable.values {
                dropStream(connection, now: now)
            }
        }
        for bytes in taken.broadcasts { enqueueOnStreams(bytes, now: now) }
        if now >= nextKeepAlive {
            nextKeepAlive = now + configuration.keepAliveInterval
            enqueueOnStreams(configuration.keepAlive, now: now)
        }
        return true
    }

    /// Takes what the kernel has queued. A newcomer that finds the budget full pushes out the oldest unfinished
    /// connection (``ConnectionBudget``); one that finds nothing to push out is refused (503) at once.
    ///
    /// At most half an address's budget per turn: a connection accepted in this turn is read at the start of the
    /// next, before any newer one is taken, and those taken after it in its own turn push out older ones first.
    mutating func acceptNewConnections(now: Double) {
        for _ in 0..<max(1, min(256, budget.perAddressLimit / 2)) {
            // accept4 is a GNU extension Swift does not import: accept, then set the flags.
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let descriptor = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(server.listener, $0, &length) }
            }
            guard descriptor >= 0 else {
                let number = errno
                if number == EINTR || number == ECONNABORTED || number == EPROTO { continue }
                if number == EAGAIN || number == EWOULDBLOCK || acceptFailed(errno: number, now: now) { return }
                continue
            }
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            _ = IPv4.setNonBlocking(descriptor)
            let peer = IPv4.describe(address)
            switch budget.decide(newcomerFrom: peer.address) {
            case .admit: break
            case .evict(let id): evict(id, now: now)
            case .refuse:
                tellBusy(descriptor)
                close(descriptor)
                note("connections refused (every slot busy answering)", now: now) { $0.refusedAtLimit += 1 }
                continue
            }
            var size = Int32(configuration.socketSendBuffer)
            setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            nextID += 1
            let connection = HTTPConnection(
                id: nextID, descriptor: descriptor, peer: peer, now: now,
                firstByteTimeout: min(configuration.firstByteTimeout, configuration.headerTimeout))
            connections[descriptor] = connection
            descriptors[connection.id] = descriptor
            budget.admit(connection.id, address: peer.address)
            let open = connections.count
            server.counters.withLock {
                $0.accepted += 1
                $0.openConnections = open
                $0.peakConnections = max($0.peakConnections, open)
            }
            // A client that means to ask has usually asked by now: answer it in this turn, not the next.
            if read(connection, now: now), connections[descriptor] != nil, connection.pending > 0 {
                _ = flush(connection, now: now)
            }
        }
    }

    /// After `accept` failed for want of descriptors or memory (the connection stays queued in the kernel and the
    /// listener stays readable): gives up a connection to make room, or pauses accepting. True to stop accepting for
    /// this turn.
    private mutating func acceptFailed(errno number: Int32, now: Double) -> Bool {
        note("connections not taken (\(IPv4.message(number)))", now: now) { $0.acceptFailures += 1 }
        guard number == EMFILE || number == ENFILE || number == ENOBUFS || number == ENOMEM else { return true }
        if let victim = budget.anyEvictable() {
            evict(victim, now: now)
            return false
        }
        acceptPausedUntil = now + configuration.descriptorShortagePause
        return true
    }

    /// Gives up a connection to make room for a newcomer: an unfinished one is told 503 first.
    mutating func evict(_ id: Int, now: Double) {
        guard let descriptor = descriptors[id], let connection = connections[descriptor] else {
            budget.remove(id)
            return
        }
        if connection.stage == .lingering {
            finish(connection)
            note("answered connections closed early to make room", now: now) { $0.evictedLingering += 1 }
        } else {
            tellBusy(descriptor)
            finish(connection)
            note("unfinished connections given up to make room (oldest first)", now: now) {
                $0.evictedUnfinished += 1
            }
        }
    }

    /// Closes connections whose time is up: no first byte, a head or body too slow, a lingering close, a reader that
    /// stopped reading. Then logs what is due.
    mutating func applyDeadlines(now: Double) {
        defer { if let line = refusals.line(now: now) { configuration.log?(line) } }
        // Nothing is due before the earliest deadline the last wait saw (connections since then have later ones).
        guard now >= nextDeadline else { return }
        for connection in Array(connections.values) {
            switch connection.stage {
            case .readingHead where now >= connection.deadline:
                if connection.received.isEmpty {
                    note("connections closed sending nothing (first-byte timeout)", now: now) {
                        $0.firstByteTimeouts += 1
                    }
                } else {
                    note("connections closed for a slow head (header timeout)", now: now) { $0.headTimeouts += 1 }
                }
                finish(connection)
            case .readingBody where now >= connection.deadline:
                note("connections closed for a slow body (request timeout)", now: now) { $0.bodyTimeouts += 1 }
                finish(connection)
            case .lingering where now >= connection.deadline:
                finish(connection)
            case .responding
            where connection.pending > 0 && now - connection.lastProgress > configuration.writeTimeout:
                finish(connection)
            case .streaming
            where connection.pending > 0 && now - connection.lastProgress > configuration.writeTimeout:
                dropStream(connection, now: now)
            default:
                break
            }
        }
    }

    mutating func finishAll() {
        for connection in Array(connections.values) { finish(connection) }
        if let line = refusals.line(now: HTTPServer.monotonic(), final: true) { configuration.log?(line) }
    }

    /// Counts a refusal in the statistics and in the rate-bounded log.
    mutating func note(
        _ kind: String, now: Double, _ update: (inout HTTPServerStatistics) -> Void
    ) {
        server.counters.withLock { update(&$0) }
        if let line = refusals.record(kind, now: now) { configuration.log?(line) }
    }

    /// Best effort: a 503 on a socket about to be closed (never blocks; a full buffer just means no message).
    func tellBusy(_ descriptor: Int32) {
        busy.withUnsafeBytes {
            _ = send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        }
    }

    mutating func finish(_ connection: HTTPConnection) {
        close(connection.descriptor)
        connections[connection.descriptor] = nil
        descriptors[connection.id] = nil
        if connection.stage == .streaming {
            streamTable[connection.descriptor] = nil
            let left = (streamsPerAddress[connection.peer.address] ?? 1) - 1
            streamsPerAddress[connection.peer.address] = left > 0 ? left : nil
        } else {
            budget.remove(connection.id)
        }
        let open = connections.count
        let openStreams = streamTable.count
        server.counters.withLock {
            $0.openConnections = open
            $0.openStreams = openStreams
        }
    }
}
