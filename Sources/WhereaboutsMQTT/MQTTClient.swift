import DetachedThread
import Dispatch
import Synchronization

/// An MQTT v5 client over libmosquitto that keeps itself connected.
///
/// ```swift
/// let client = try MQTTClient(MQTTClientConfiguration(host: "broker", clientID: "agent-kitchen"))
/// try client.subscribe("whereabouts/v1/config/#", qos: .atLeastOnce)
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { try await client.run() }
///     for await message in client.messages { … }
/// }
/// ```
///
/// **Connection.** ``run()`` connects and stays connected until it is cancelled or ``disconnect()`` is
/// called, then sends DISCONNECT (so the broker discards the will) and returns. After a failed attempt or a
/// lost connection it waits according to ``MQTTClientConfiguration/reconnect`` (exponential backoff with
/// jitter) and tries again. The session is persistent by default (clean start off, a session expiry
/// interval on every CONNECT), so QoS 1 messages published while the client was away arrive when it
/// returns. Subscriptions are remembered and sent again after every connection. A broker that refuses
/// the credentials or the client id ends ``run()`` with ``MQTTConnectionFailure/refused(_:)``, because
/// retrying cannot help; every other failure is retried.
///
/// **Threading.** Each ``run()`` drives `mosquitto_loop` on a thread of its own (a detached pthread, not a
/// Dispatch queue or Swift's cooperative pool, since the loop blocks in `select`). libmosquitto's callbacks run on that
/// thread; they only copy data into Swift values and hand it to the two streams or to `Mutex`-guarded
/// state, never blocking. ``publish(topic:payload:qos:retain:messageExpiry:)``, ``subscribe(_:qos:)`` and
/// ``unsubscribe(_:)`` may be called from any task; they queue the packet with libmosquitto, which the loop
/// thread then writes. The C handle is freed only when the client is released, after the loop has stopped.
/// Host lookup and the TCP connect itself block the loop thread (libmosquitto has no asynchronous
/// connect that carries MQTT v5 properties), so against a host that drops SYNs a stop request waits
/// for the kernel's connect timeout; ``MQTTClientConfiguration/connectTimeout`` bounds the rest.
///
/// **Buffering.** Inbound messages go to ``messages``. A QoS 1 message is acknowledged to the broker before it
/// is queued here, so it is never dropped: with ``MQTTClientConfiguration/inboxLimit`` the loop thread waits
/// for room instead (reading and acknowledging nothing meanwhile), otherwise the buffer is unbounded. Its depth and
/// peak are in ``statistics``. Connection events go to ``events``, unbounded too unless
/// ``MQTTClientConfiguration/eventBufferLimit`` says otherwise, so no acknowledgement is lost. Outbound,
/// the client refuses to publish while disconnected (``MQTTError/noConnection``) rather than letting
/// libmosquitto queue without bound: the caller keeps the message in its own bounded buffer and releases
/// it on ``MQTTConnectionEvent/acknowledged(messageID:reason:)``. Messages accepted while connected but
/// not yet acknowledged when the connection drops are re-sent by libmosquitto after reconnecting, unless the
/// deadline set by ``limitSending(until:)`` has passed.
public final class MQTTClient: Sendable {
    /// The settings the client was made with.
    public let configuration: MQTTClientConfiguration
    /// Messages from the broker, in arrival order; ends when ``run()`` returns. Iterate from one task.
    public let messages: MQTTInbox
    /// Connection events and acknowledgements, in order; ends when ``run()`` returns. Iterate from one task.
    public let events: AsyncStream<MQTTConnectionEvent>

    private let core: MQTTClientCore
    private let handle: MosquittoHandle

    /// Makes a client; it does not connect until ``run()``.
    ///
    /// Throws ``MQTTError/invalidArgument`` for an empty client id, a keepalive outside 5...65535 s, or an
    /// unreadable TLS file.
    public init(_ configuration: MQTTClientConfiguration) throws(MQTTError) {
        let keepAlive = configuration.keepAlive.components.seconds
        guard !configuration.clientID.isEmpty, (5...65535).contains(keepAlive), (1...65535).contains(configuration.port)
        else { throw .invalidArgument }
        let (messageStream, messageContinuation) = AsyncStream.makeStream(
            of: MQTTMessage.self, bufferingPolicy: .unbounded
        )
        let eventPolicy: AsyncStream<MQTTConnectionEvent>.Continuation.BufferingPolicy =
            configuration.eventBufferLimit.map { .bufferingNewest(max($0, 1)) } ?? .unbounded
        let (eventStream, eventContinuation) = AsyncStream.makeStream(
            of: MQTTConnectionEvent.self, bufferingPolicy: eventPolicy
        )
        let core = MQTTClientCore(
            messages: messageContinuation, events: eventContinuation, inboxLimit: configuration.inboxLimit,
            payloadLimit: configuration.payloadLimit, reportsQoS0Completions: configuration.reportsQoS0Completions)
        self.configuration = configuration
        self.core = core
        self.messages = MQTTInbox(stream: messageStream, counters: core.inbox, core: core)
        self.events = eventStream
        self.handle = try MosquittoHandle.make(configuration, core: core)
    }

    deinit {
        handle.destroy()
        core.messages.finish()
        core.events.finish()
    }

    /// Counters for received messages, the inbox queue and connections.
    public var statistics: MQTTClientStatistics {
        core.statistics
    }

    /// QoS 0 publications handed over and not yet written to the socket: libmosquitto queues them without a bound,
    /// so a publisher that must stay within a fixed amount of memory waits while this is high. Nil unless
    /// ``MQTTClientConfiguration/reportsQoS0Completions`` is off (only then are QoS 0 publications told apart).
    public var unwrittenQoS0Publications: Int? {
        core.unwrittenQoS0
    }

    /// Whether the broker has accepted the current connection.
    public var isConnected: Bool {
        core.link.withLock { $0.phase == .connected }
    }

    /// Connects and keeps the connection up until the task is cancelled or ``disconnect()`` is called.
    ///
    /// Returns normally after a clean DISCONNECT. Throws ``MQTTConnectionFailure/refused(_:)`` when the
    /// broker refuses the connection for a reason retrying cannot fix (bad credentials, not authorized,
    /// banned, invalid client id), and ``MQTTError/invalidArgument`` if the client has already run. A
    /// client runs once; ``messages`` and ``events`` end when this returns.
    public func run() async throws {
        guard core.started.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { throw MQTTError.invalidArgument }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // A thread of its own: the loop blocks in select() for the client's whole life.
                let started = DetachedThread.start(name: "mqtt-loop") {
                    do {
                        try self.serve()
                        continuation.resume()
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
                if started != 0 { continuation.resume(throwing: MQTTError.noMemory) }
            }
        } onCancel: {
            core.requestStop(.disconnect)
        }
    }

    /// Asks ``run()`` to send DISCONNECT and return; the broker discards the will. Returns at once.
    public func disconnect() {
        core.requestStop(.disconnect)
    }

    /// Drops the connection without DISCONNECT and makes ``run()`` return, so the broker publishes the will.
    ///
    /// This is how tests (and a supervisor) simulate an agent that crashed or lost power. Returns at once.
    public func abandonConnection() {
        core.requestStop(.abandon)
    }

    /// Publishes a message and returns its message id.
    ///
    /// The message is queued with libmosquitto, not yet sent. Its
    /// ``MQTTConnectionEvent/acknowledged(messageID:reason:)`` event follows once the broker has
    /// acknowledged it (QoS 1 and 2) or it has been written (QoS 0, unless
    /// ``MQTTClientConfiguration/reportsQoS0Completions`` is off). `messageExpiry` asks the broker to
    /// drop it if it could not be delivered in time (MQTT v5 message expiry interval, whole seconds,
    /// rounded up).
    ///
    /// Throws ``MQTTError/noConnection`` while not connected (nothing was queued; keep the message),
    /// ``MQTTError/invalidArgument`` for a topic with wildcards or an empty topic, and
    /// ``MQTTError/payloadTooLarge`` for an oversized payload.
    @discardableResult
    public func publish(
        topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = false,
        messageExpiry: Duration? = nil
    ) throws(MQTTError) -> Int {
        let expirySeconds = messageExpiry.map(Self.wholeSecondsRoundedUp)
        let messageID = try core.link.withLock { link throws(MQTTError) -> Int in
            guard link.phase == .connected else { throw .noConnection }
            return try handle.publish(
                topic: topic, payload: payload, qos: qos, retain: retain, expirySeconds: expirySeconds
            )
        }
        core.handedOverPublication()
        if let reason = core.published(messageID: messageID, qos: qos) {
            core.events.yield(.acknowledged(messageID: messageID, reason: reason))
        }
        return messageID
    }

    /// Ends, at `deadline` (seconds on `CLOCK_BOOTTIME`, `WallClock.monotonic()`), what the client may still deliver
    /// of the publications handed to it before; nil, as at the start, for no end. Once it has passed, a publication
    /// handed over before it and perhaps not yet written makes the client drop the connection rather than write it,
    /// and a reconnect starts with libmosquitto's queue emptied, so that nothing in flight is sent again (the session,
    /// or the caller, decides what to publish anew). For a locator of a pair: the end of its lease, so that a process
    /// paused past it (SIGSTOP, a suspended machine) cannot deliver what it said as the holder after the standby took
    /// over. Cheap: call it before every hand-over.
    public func limitSending(until deadline: Double?) {
        core.limitSending(until: deadline)
    }

    /// Subscribes to `filter` now if connected, and again after every reconnect.
    ///
    /// Returns the SUBSCRIBE's message id when it was sent now (its ``MQTTConnectionEvent/subscribed``
    /// event follows), `nil` when it will be sent on the next connection. Subscribing again to the same
    /// filter replaces its QoS. With `noLocal`, the broker does not send this client its own publications on the
    /// filter (MQTT v5). Throws ``MQTTError/invalidArgument`` for an invalid filter.
    @discardableResult
    public func subscribe(_ filter: String, qos: MQTTQoS, noLocal: Bool = false) throws(MQTTError) -> Int? {
        try MosquittoHandle.validateFilter(filter)
        return try core.link.withLock { link throws(MQTTError) -> Int? in
            let sentBefore = link.subscriptions.first { $0.filter == filter }?.sentBefore ?? false
            link.subscriptions.removeAll { $0.filter == filter }
            link.subscriptions.append(.init(filter: filter, qos: qos, noLocal: noLocal, sentBefore: sentBefore))
            guard link.phase == .connected else { return nil }
            do throws(MQTTError) {
                // An explicit subscribe wants the retained messages, so no "only if new" option here.
                let messageID = try handle.subscribe(filter, qos: qos, onlyNewRetained: false, noLocal: noLocal)
                link.subscriptions[link.subscriptions.count - 1].sentBefore = true
                return messageID
            } catch .noConnection {
                return nil  // the connection just dropped; the reconnect will subscribe
            } catch {
                link.subscriptions.removeLast()
                throw error
            }
        }
    }

    /// Forgets `filter` and unsubscribes if connected; returns the UNSUBSCRIBE's message id if one was sent.
    @discardableResult
    public func unsubscribe(_ filter: String) throws(MQTTError) -> Int? {
        try MosquittoHandle.validateFilter(filter)
        return try core.link.withLock { link throws(MQTTError) -> Int? in
            link.subscriptions.removeAll { $0.filter == filter }
            guard link.phase == .connected else { return nil }
            do throws(MQTTError) {
                return try handle.unsubscribe(filter)
            } catch .noConnection {
                return nil
            }
        }
    }

    // MARK: - The loop thread

    /// The body of the loop thread: connect, serve, back off, repeat; then close and end the streams.
    private func serve() throws(MQTTConnectionFailure) {
        defer {
            core.messages.finish()
            core.events.finish()
        }
        let outcome: Result<Void, MQTTConnectionFailure>
        do {
            try keepConnected()
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        let wasConnected = core.close()
        switch core.stopRequest {
        case .abandon:
            handle.dropSocket()
            if wasConnected { core.events.yield(.disconnected(.abandoned)) }
        case .disconnect, .none:
            if handle.hasSocket {
                handle.disconnect()
                // Let the loop write DISCONNECT; libmosquitto closes the socket once it is sent.
                let deadline = ContinuousClock.now + .seconds(2)
                while handle.hasSocket, ContinuousClock.now < deadline, handle.loop(timeoutMilliseconds: 100) == nil {}
            }
            if wasConnected { core.events.yield(.disconnected(.requested)) }
        }
        try outcome.get()
    }

    private func keepConnected() throws(MQTTConnectionFailure) {
        let keepAlive = Int32(clamping: configuration.keepAlive.components.seconds)
        let sessionExpiry = UInt32(clamping: configuration.sessionExpiry.components.seconds)
        var failures = 0
        while core.stopRequest == .none {
            core.beginAttempt()
            if core.isPastDeadline {
                // What libmosquitto holds was handed over before the deadline: it must not go out after it.
                do throws(MQTTError) {
                    try handle.forgetMessages(configuration, core: core)
                } catch {
                    throw .failed(error, detail: "cannot reset the client to drop messages past its deadline")
                }
            }
            var failure = handle.connect(
                host: configuration.host, port: configuration.port, keepAliveSeconds: keepAlive,
                sessionExpirySeconds: sessionExpiry,
                receiveMaximum: configuration.receiveMaximum.map { UInt16(clamping: $0) },
                maximumPacketSize: configuration.maximumPacketSize.map { UInt32(clamping: $0) }
            )
            var lastError = MQTTError.connectionLost
            var acceptedAt: ContinuousClock.Instant?
            if failure == nil {
                let started = ContinuousClock.now
                var timedOut = false
                while core.stopRequest == .none {
                    // Paused between rounds past the deadline: what waits to be written must not go.
                    if core.mustCutConnection { handle.dropSocket() }
                    let error = handle.loop(timeoutMilliseconds: 100)
                    core.loopRoundEnded()
                    if let error {
                        lastError = timedOut ? .timeout : error
                        break
                    }
                    if acceptedAt == nil, core.acceptedThisAttempt {
                        acceptedAt = .now
                    }
                    if !timedOut, acceptedAt == nil, ContinuousClock.now - started > configuration.connectTimeout {
                        timedOut = true
                        handle.dropSocket()  // the next loop round reports the closed socket
                    }
                }
            }
            guard core.stopRequest == .none else { return }
            let attempt = core.endAttempt(error: lastError)
            if attempt.accepted {
                // A connection dropped right after CONNACK keeps backing off (see MQTTReconnectPolicy).
                if let acceptedAt, ContinuousClock.now - acceptedAt >= configuration.reconnect.stableConnection {
                    failures = 0
                }
            } else {
                if let refusal = attempt.refusal {
                    failure = .refused(refusal)
                } else if failure == nil {
                    failure = .failed(lastError, detail: core.lastLibraryError.withLock { $0 })
                } else if case .failed(let error, nil) = failure {
                    failure = .failed(error, detail: core.lastLibraryError.withLock { $0 })
                }
                if let failure {
                    core.events.yield(.connectionFailed(failure))
                    if case .refused(let reason) = failure, reason.isPermanentConnectRefusal {
                        throw failure
                    }
                }
            }
            failures += 1
            let delay = configuration.reconnect.delay(afterFailures: failures, unitRandom: Double.random(in: 0...1))
            core.events.yield(.reconnectScheduled(attempt: failures, delay: delay))
            core.sleep(for: delay)
        }
    }

    private static func wholeSecondsRoundedUp(_ duration: Duration) -> UInt32 {
        let (seconds, attoseconds) = duration.components
        return UInt32(clamping: max(1, seconds + (attoseconds > 0 ? 1 : 0)))
    }
}
