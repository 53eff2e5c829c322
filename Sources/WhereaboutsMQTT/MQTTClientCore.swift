import Dispatch
import Glibc
import Synchronization

/// The state shared by the client's public methods, its loop thread and libmosquitto's callbacks.
///
/// It is the `void *userdata` of the mosquitto handle (passed unretained; ``MQTTClient`` keeps it alive
/// for as long as the handle exists). Everything in it is `Sendable`: the callbacks run on the loop
/// thread while publishers call in from any task.
final class MQTTClientCore: Sendable {
    /// Where the connection stands. Publishing and subscribing only talk to libmosquitto in `connected`;
    /// the loop thread moves to `connecting` under the lock before `mosquitto_connect_bind_v5`, which
    /// recreates libmosquitto's internal wake-up socket pair, so no publish can be using it meanwhile.
    enum Phase {
        case idle
        case connecting
        case connected
        case disconnected
        case closed
    }

    struct Subscription {
        var filter: String
        var qos: MQTTQoS
        /// Whether the broker keeps this client's own publications from it (MQTT v5 "no local").
        var noLocal = false
        /// Whether it has been sent on this client before; re-sends then ask for retained messages only
        /// if the broker had lost the subscription (so a reconnect does not replay every retained message).
        var sentBefore: Bool
    }

    struct Link {
        var phase = Phase.idle
        var subscriptions: [Subscription] = []
        var refusal: MQTTReasonCode?
        var acceptedThisAttempt = false
        var connectionAttempts = 0
        var connections = 0
    }

    /// Why the loop should stop; the first request wins.
    enum StopRequest: Int {
        case none = 0
        case disconnect = 1
        case abandon = 2
    }

    let messages: AsyncStream<MQTTMessage>.Continuation
    let events: AsyncStream<MQTTConnectionEvent>.Continuation
    let inbox = InboxCounters()
    let link = Mutex(Link())
    /// The last error line libmosquitto logged (OpenSSL's reason for a failed handshake, say). Kept apart
    /// from `link` because libmosquitto logs from inside calls made while `link` is held.
    let lastLibraryError = Mutex<String?>(nil)
    let stop = Atomic<Int>(StopRequest.none.rawValue)
    let started = Atomic<Bool>(false)
    /// Signalled to cut a reconnect delay short when a stop is requested.
    let wake = DispatchSemaphore(value: 0)
    /// Free places in a bounded inbox (``MQTTClientConfiguration/inboxLimit``), nil when unbounded.
    let room: DispatchSemaphore?
    /// Where to cut oversized payloads (``MQTTClientConfiguration/payloadLimit``).
    let payloadLimit: Int?
    /// Whether every publish's completion is reported (``MQTTClientConfiguration/reportsQoS0Completions``) …
    private let reportsEveryCompletion: Bool
    /// … or, when QoS 0 ones are not, which are.
    private let completions = Mutex(Completions())

    /// The publishes whose completions have not come yet, by QoS, so that libmosquitto's callback (which is not
    /// told the QoS) can leave the QoS 0 ones unreported.
    struct Completions {
        /// Message ids published at QoS 0 …
        var quiet: Set<Int> = []
        /// … and at QoS 1 or 2.
        var reported: Set<Int> = []
        /// Completions that came before their publish call had returned the id (libmosquitto's thread may write a
        /// QoS 0 message before the caller is back), with their reasons: the call settles them.
        var early: [Int: MQTTReasonCode] = [:]
    }

    init(
        messages: AsyncStream<MQTTMessage>.Continuation, events: AsyncStream<MQTTConnectionEvent>.Continuation,
        inboxLimit: Int? = nil, payloadLimit: Int? = nil, reportsQoS0Completions: Bool = true
    ) {
        self.messages = messages
        self.events = events
        reportsEveryCompletion = reportsQoS0Completions
        room = inboxLimit.map { DispatchSemaphore(value: max($0, 1)) }
        self.payloadLimit = payloadLimit.map { max($0, 0) }
    }

    /// A publish call returned `messageID`. Returns the reason of its completion to report now, when that came
    /// first (a QoS 1 or 2 one; a QoS 0 one is dropped).
    func published(messageID: Int, qos: MQTTQoS) -> MQTTReasonCode? {
        guard !reportsEveryCompletion else { return nil }
        return completions.withLock { completions in
            if let reason = completions.early.removeValue(forKey: messageID) {
                return qos == .atMostOnce ? nil : reason
            }
            // An id comes round again after 65,535 publishes; whatever it named before never completed.
            completions.quiet.remove(messageID)
            completions.reported.remove(messageID)
            if qos == .atMostOnce {
                completions.quiet.insert(messageID)
            } else {
                completions.reported.insert(messageID)
            }
            return nil
        }
    }

    /// libmosquitto finished publish `messageID`: whether to report it now.
    func completed(messageID: Int, reason: MQTTReasonCode) -> Bool {
        guard !reportsEveryCompletion else { return true }
        return completions.withLock { completions in
            if completions.quiet.remove(messageID) != nil { return false }
            if completions.reported.remove(messageID) != nil { return true }
            // Its publish call has not returned yet (or never will: bounded all the same).
            if completions.early.count >= 1_024 { completions.early.removeAll() }
            completions.early[messageID] = reason
            return false
        }
    }

    /// QoS 0 publications handed to libmosquitto and not yet written to the socket; nil when QoS 0 completions are
    /// reported (their ids are then not kept apart). libmosquitto's queue has no bound of its own.
    var unwrittenQoS0: Int? {
        guard !reportsEveryCompletion else { return nil }
        return completions.withLock { $0.quiet.count }
    }

    /// A connection attempt begins: libmosquitto frees every packet not yet written (`packet__cleanup_all`), so no
    /// QoS 0 publication handed over before will complete. (QoS 1 ones are sent again, and do.)
    private func forgetUnwrittenQoS0() {
        guard !reportsEveryCompletion else { return }
        completions.withLock { $0.quiet.removeAll() }
    }

    // MARK: The sending deadline (MQTTClient.limitSending(until:))

    /// Seconds on `CLOCK_BOOTTIME` past which nothing handed over before may be written or sent again, as a
    /// `Double`'s bits; infinity: no limit.
    private let deadline = Atomic<UInt64>(Double.infinity.bitPattern)
    /// When a publication was last handed to libmosquitto before the deadline …
    private let handedOver = Atomic<UInt64>((-Double.infinity).bitPattern)
    /// … and when the loop thread last ended a round of `mosquitto_loop`, which writes what was queued before it.
    private let roundEnded = Atomic<UInt64>((-Double.infinity).bitPattern)

    /// Seconds on `CLOCK_BOOTTIME`, the clock of the deadline (`WallClock.monotonic()`, which the service's lease
    /// runs on): it goes on while the system is suspended.
    static func monotonicNow() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_BOOTTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    func limitSending(until seconds: Double?) {
        deadline.store((seconds ?? .infinity).bitPattern, ordering: .releasing)
    }

    private var sendingDeadline: Double {
        Double(bitPattern: deadline.load(ordering: .acquiring))
    }

    /// A publication was handed to libmosquitto: noted if the deadline had not passed (a standby's own publications,
    /// made past it, are not the holder's).
    func handedOverPublication() {
        let limit = sendingDeadline
        guard limit < .infinity else { return }
        let now = Self.monotonicNow()
        if now < limit { handedOver.store(now.bitPattern, ordering: .releasing) }
    }

    /// The loop thread ended a round: what was handed over before it has been written.
    func loopRoundEnded() {
        guard sendingDeadline < .infinity else { return }
        roundEnded.store(Self.monotonicNow().bitPattern, ordering: .releasing)
    }

    /// Whether the deadline has passed: a reconnect must not re-send what libmosquitto still holds.
    var isPastDeadline: Bool {
        let limit = sendingDeadline
        return limit < .infinity && Self.monotonicNow() >= limit
    }

    /// Whether the connection must be cut before the loop writes again: the deadline has passed, and a publication
    /// handed over before it may still be unwritten.
    var mustCutConnection: Bool {
        guard isPastDeadline else { return false }
        // Nothing handed over before the deadline (a standby's): nothing to keep from the broker.
        let handed = Double(bitPattern: handedOver.load(ordering: .acquiring))
        return handed > -.infinity && handed >= Double(bitPattern: roundEnded.load(ordering: .acquiring))
    }

    var stopRequest: StopRequest {
        StopRequest(rawValue: stop.load(ordering: .acquiring)) ?? .none
    }

    func requestStop(_ request: StopRequest) {
        _ = stop.compareExchange(
            expected: StopRequest.none.rawValue, desired: request.rawValue, ordering: .acquiringAndReleasing
        )
        wake.signal()
    }

    // MARK: Called from libmosquitto's callbacks (loop thread)

    /// Hands a message to the consumer; with a bounded inbox, first waits (on libmosquitto's thread) for room,
    /// unless the client is stopping.
    func received(_ message: MQTTMessage) {
        if let room {
            while room.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
                if stopRequest != .none { break }
            }
        }
        inbox.added()
        messages.yield(message)
    }

    /// The consumer took a message: one more place in a bounded inbox.
    func taken() {
        room?.signal()
    }

    /// CONNACK arrived. On success, `resubscribe` is called for each remembered subscription, under the
    /// lock, with whether it was sent before; it returns whether the SUBSCRIBE was queued.
    func connectionAnswered(
        reason: MQTTReasonCode, sessionPresent: Bool, resubscribe: (Subscription) -> Bool
    ) {
        link.withLock { link in
            guard !reason.isFailure else {
                link.refusal = reason
                return
            }
            guard link.phase == .connecting else { return }
            link.phase = .connected
            link.acceptedThisAttempt = true
            link.connections += 1
            events.yield(.connected(sessionPresent: sessionPresent))
            for index in link.subscriptions.indices where resubscribe(link.subscriptions[index]) {
                link.subscriptions[index].sentBefore = true
            }
        }
    }

    func connectionEnded(_ reason: MQTTDisconnectReason) {
        link.withLock { link in
            guard link.phase == .connected else { return }
            link.phase = .disconnected
            events.yield(.disconnected(reason))
        }
    }

    // MARK: Called from the loop thread

    func beginAttempt() {
        lastLibraryError.withLock { $0 = nil }
        forgetUnwrittenQoS0()
        link.withLock { link in
            link.phase = .connecting
            link.refusal = nil
            link.acceptedThisAttempt = false
            link.connectionAttempts += 1
        }
    }

    var acceptedThisAttempt: Bool {
        link.withLock { $0.acceptedThisAttempt }
    }

    /// Ends an attempt that failed or lost its connection: whether the broker had accepted it, and its
    /// CONNACK refusal if any. A connection that died without libmosquitto's disconnect callback is
    /// reported here.
    func endAttempt(error: MQTTError) -> (accepted: Bool, refusal: MQTTReasonCode?) {
        link.withLock { link in
            if link.phase == .connected {
                events.yield(.disconnected(.connectionLost(error)))
            }
            link.phase = .disconnected
            return (link.acceptedThisAttempt, link.refusal)
        }
    }

    /// Marks the client closed; returns whether it was connected.
    func close() -> Bool {
        link.withLock { link in
            let wasConnected = link.phase == .connected
            link.phase = .closed
            return wasConnected
        }
    }

    func sleep(for delay: Duration) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        _ = wake.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds)))
    }

    var statistics: MQTTClientStatistics {
        let (attempts, connections) = link.withLock { ($0.connectionAttempts, $0.connections) }
        return MQTTClientStatistics(
            messagesReceived: inbox.received.load(ordering: .relaxed),
            inboxDepth: inbox.depth.load(ordering: .acquiring), inboxPeak: inbox.peak.load(ordering: .relaxed),
            connectionAttempts: attempts, connections: connections
        )
    }
}
