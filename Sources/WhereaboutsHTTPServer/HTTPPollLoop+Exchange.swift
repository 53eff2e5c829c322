import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reading requests, answering them, writing responses and streams.
extension HTTPPollLoop {
    /// Reads from and writes to the sockets poll found ready.
    mutating func serveReadySockets(_ entries: ArraySlice<pollfd>, now: Double) {
        for entry in entries where entry.revents != 0 {
            guard let connection = connections[entry.fd] else { continue }
            if entry.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                guard read(connection, now: now) else { continue }
            }
            if connections[entry.fd] != nil, connection.pending > 0 || connection.stage == .responding {
                _ = flush(connection, now: now)
            }
        }
    }

    /// Reads what a socket has; answers a complete request. False when the connection is gone.
    mutating func read(_ connection: HTTPConnection, now: Double) -> Bool {
        let count = recv(connection.descriptor, &scratch, scratch.count, Int32(MSG_DONTWAIT))
        if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            // The peer closed or failed: nothing more can be asked or delivered.
            finish(connection)
            return false
        }
        guard count > 0 else { return true }
        switch connection.phase {
        case .readingHead:
            if connection.received.isEmpty {
                // The first byte: from now on the head has until the header timeout.
                connection.deadline = connection.accepted + configuration.headerTimeout
            }
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

    /// Hands a request whose body has all arrived to the handler and queues the answer. A HEAD is handed over as
    /// the GET it asks about, and only the answer's head is sent (a stream's too, without opening one).
    private mutating func answerIfWhole(_ connection: HTTPConnection, now: Double) {
        guard case .readingBody(var head, let headLength, let length) = connection.phase,
            connection.received.count >= headLength + length
        else { return }
        let headOnly = head.method == "HEAD"
        if headOnly { head.method = "GET" }
        let request = HTTPRequest(
            head: head, body: Array(connection.received[headLength..<(headLength + length)]),
            peer: connection.peer.address, isLoopbackPeer: connection.peer.loopback)
        // Bytes beyond the body count as discarded (one request per connection).
        connection.discarded = connection.received.count - headLength - length
        var response = server.handler(request)
        if case .stream = response.body, !headOnly, !makeRoomForStream(from: connection.peer.address, now: now) {
            note("stream requests refused (every stream keeping up)", now: now) { $0.refused[503, default: 0] += 1 }
            response = .refusal(503)
        }
        server.counters.withLock {
            $0.requests += 1
            if headOnly { $0.headRequests += 1 }
        }
        respond(connection, response, headOnly: headOnly, now: now)
    }

    /// Whether a new stream from `address` fits its budgets, after giving up the stream furthest behind if they are
    /// full. Readers that keep up are never given up for a newcomer: one that stopped reading shows it by bytes
    /// waiting for it (ours, and the kernel's unsent ones, more than a quarter of the backlog limit), and the one with
    /// most waiting goes.
    private mutating func makeRoomForStream(from address: String, now: Double) -> Bool {
        let addressFull = streamsPerAddress[address] ?? 0 >= streamPerAddressLimit
        guard addressFull || streamTable.count >= streamLimit else { return true }
        guard now >= streamSearchNotBefore else { return false }
        var victim: HTTPConnection?
        // Behind means more than a moment's worth: a reader that keeps up can have a few bytes waiting at any
        // instant, and must never be the one given up just because every other stream is fresh.
        var worst = max(configuration.maximumStreamBacklog / 4, 1)
        for connection in streamTable.values where !addressFull || connection.peer.address == address {
            let behind = connection.pending + Self.unsent(connection.descriptor)
            if behind > worst {
                worst = behind
                victim = connection
            }
        }
        guard let victim else {
            streamSearchNotBefore = now + 0.1
            return false
        }
        finish(victim)
        note("streams given up for a new one (their reader had stopped reading)", now: now) {
            $0.evictedStreams += 1
        }
        return true
    }

    /// Bytes the kernel holds for a socket and has not yet sent, because the peer's window is closed (its reader is
    /// not reading) or the link is slow: `SIOCOUTQNSD` (0x894B, linux/sockios.h, not imported into Swift); 0 when it
    /// cannot say. Not `SIOCOUTQ`: that counts bytes sent and not yet acknowledged, which includes whatever a reader
    /// that keeps up received in the last delayed-ACK interval.
    private static func unsent(_ descriptor: Int32) -> Int {
        var bytes: Int32 = 0
        guard ioctl(descriptor, UInt(0x894B), &bytes) == 0 else { return 0 }
        return Int(bytes)
    }

    private mutating func respond(
        _ connection: HTTPConnection, _ response: HTTPResponse, headOnly: Bool = false, now: Double
    ) {
        connection.received = []
        connection.enqueue(response.encoded(headOnly: headOnly), now: now)
        connection.lastProgress = now
        if case .stream = response.body, !headOnly {
            budget.remove(connection.id)
            connection.phase = .streaming
            streamTable[connection.descriptor] = connection
            streamsPerAddress[connection.peer.address, default: 0] += 1
            let openStreams = streamTable.count
            server.counters.withLock {
                $0.streamsOpened += 1
                $0.openStreams = openStreams
            }
        } else {
            budget.set(connection.id, .busy)
            connection.phase = .responding
        }
    }

    private mutating func refuse(_ connection: HTTPConnection, status: Int, now: Double) {
        note("requests refused with \(status)", now: now) { $0.refused[status, default: 0] += 1 }
        let allowed = configuration.maximumBodyBytes > 0 ? "GET, HEAD, POST, PUT" : "GET, HEAD"
        respond(connection, .refusal(status, allowed: allowed), now: now)
    }

    /// Sends what it can; false when the connection is gone.
    mutating func flush(_ connection: HTTPConnection, now: Double) -> Bool {
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
        if connection.stage == .responding {
            shutdown(connection.descriptor, Int32(SHUT_WR))
            connection.phase = .lingering
            connection.deadline = now + 2
            budget.set(connection.id, .lingering)
        }
        return true
    }

    /// Queues bytes on every stream and hands them to the kernel at once, so that bytes still waiting afterwards are
    /// a sign of a reader that does not read (what ``makeRoomForStream(from:now:)`` looks for), not of this turn.
    mutating func enqueueOnStreams(_ bytes: [UInt8], now: Double) {
        for connection in streamTable.values {
            connection.enqueue(bytes, now: now)
            if connection.pending > configuration.maximumStreamBacklog {
                dropStream(connection, now: now)
            } else {
                _ = flush(connection, now: now)
            }
        }
    }

    /// Closes a stream whose reader fell too far behind (it reconnects and starts afresh).
    mutating func dropStream(_ connection: HTTPConnection, now: Double) {
        finish(connection)
        note("streams dropped (reader too far behind)", now: now) { $0.slowStreamsDropped += 1 }
    }
}
