public import WhereaboutsWire

/// One service's life with the broker, as a state machine: status, outbox, acknowledgements and the goodbye.
///
/// Both services (the locator and the agent) hold one. Their shell reports what the MQTT client says and sends
/// what the session hands out; the session does no I/O:
///
/// ```swift
/// session.connected(now: t)                       // on the client's `connected` event
/// session.publish(publication)                    // whatever the service wants to say
/// while let entry = session.nextToSend() {        // after every input: the shell publishes…
///     session.sent(id: entry.id, result: …)       // …and reports the message id, or why not
/// }
/// session.acknowledged(messageID: id, success: …) // on the client's acknowledgements
/// ```
///
/// What it guarantees:
/// - on every connection, the retained status `online` (or `degraded`) comes first, then what was held, in order;
/// - the will (`offline`, retained) is what ``will`` says; a clean stop says it too, last, after everything the
///   service said before stopping has left the outbox (the agent: acknowledged; the locator: handed over) or
///   ``Configuration/drainTimeout`` has passed;
/// - the session asks to disconnect once `offline` is acknowledged, or ``Configuration/goodbyeTimeout`` after it
///   was sent; a reconnect in the middle of a goodbye sends what is left and `offline` again.
public struct BrokerSession: Sendable {
    /// Settings of a session.
    public struct Configuration: Sendable, Hashable {
        /// Where the service's availability goes (retained `online`, and `offline` as the will and the goodbye).
        public var statusTopic: Topic
        /// How the outbox holds and releases publications.
        public var outbox: Outbox.Policy
        /// What the outbox does when full: drop the oldest, or hold the service's inputs back.
        public var overflow: Outbox.Overflow
        /// The longest wait, after a stop was asked for, for the outbox to empty before saying `offline`, seconds.
        public var drainTimeout: Double
        /// The longest wait for `offline` to be acknowledged before disconnecting, seconds.
        public var goodbyeTimeout: Double
        /// Whether the outbox lists what it takes and releases, for a shell that keeps it on disk.
        public var journaled: Bool
        /// The outbox's byte budget (``Outbox/byteLimit``); nil for none.
        public var outboxByteLimit: Int?

        public init(
            statusTopic: Topic, outbox: Outbox.Policy, overflow: Outbox.Overflow = .dropOldest,
            drainTimeout: Double = 10, goodbyeTimeout: Double = 2, journaled: Bool = false,
            outboxByteLimit: Int? = nil
        ) {
            self.journaled = journaled
            self.outboxByteLimit = outboxByteLimit
            self.statusTopic = statusTopic
            self.outbox = outbox
            self.overflow = overflow
            self.drainTimeout = max(drainTimeout, 0)
            self.goodbyeTimeout = max(goodbyeTimeout, 0)
        }
    }

    /// Where the session stands.
    public enum Phase: Sendable, Hashable {
        /// Working: publications flow.
        case running
        /// A stop was asked for: waiting (until `deadline`) for the outbox to empty.
        case draining(deadline: Double)
        /// `offline` is queued (its entry `entry`) or sent as `messageID`; disconnecting on its acknowledgement or
        /// at `deadline`.
        case farewell(entry: Int, messageID: Int?, deadline: Double)
        /// Disconnect asked for; nothing more is sent.
        case closing
    }

    /// How one publish attempt went, as the shell reports it.
    public enum SendResult: Sendable, Hashable {
        /// The client took it under this message id.
        case accepted(messageID: Int)
        /// The client is not connected: keep it for the next connection.
        case noConnection
        /// The client refused it for good (too large, invalid topic): drop it.
        case refused
    }

    /// What the session asks of its shell, besides sending from the outbox.
    public enum Command: Sendable, Hashable {
        /// Send DISCONNECT and stop the client.
        case disconnect
        /// The broker accepted the first connection: the service is up (tell systemd).
        case ready
        /// The broker refused a publication (its acknowledgement carried a failure reason).
        case refused(Publication)
        /// The client refused a publication for good.
        case unsendable(Publication)
        /// Publications were still held when the session gave up waiting at a stop.
        case abandoned(count: Int)
    }

    /// The settings.
    public let configuration: Configuration
    /// Where the session stands.
    public private(set) var phase = Phase.running
    /// Whether the broker has accepted the current connection, as far as the session knows.
    public private(set) var isConnected = false
    /// Connections the broker accepted so far.
    public private(set) var connections = 0
    /// What waits to be sent or released.
    public private(set) var outbox: Outbox
    /// Whether the service says `degraded` rather than `online` (see ``setDegraded(_:)``).
    public private(set) var isDegraded = false

    /// A session, not yet connected.
    public init(configuration: Configuration) {
        self.configuration = configuration
        outbox = Outbox(
            policy: configuration.outbox, overflow: configuration.overflow, recordsChanges: configuration.journaled,
            byteLimit: configuration.outboxByteLimit)
    }

    /// What the outbox took and released since the last call, for the journal (see ``Outbox/takeChanges()``).
    public mutating func takeOutboxChanges() -> [Outbox.Change] {
        outbox.takeChanges()
    }

    /// The last will to register with the client: `offline`, retained, QoS 1.
    public var will: Publication { status(.offline) }

    /// Whether the session has asked to disconnect for good.
    public var isClosing: Bool { phase == .closing }

    // MARK: - Connection

    /// The broker accepted a connection.
    public mutating func connected() -> [Command] {
        isConnected = true
        connections += 1
        switch phase {
        case .running, .draining:
            outbox.enqueueFirst(status(availability))
        case .farewell, .closing:
            break
        }
        return connections == 1 ? [.ready] : []
    }

    /// The service works without a safeguard it should have (the agent's journal cannot be written), or has it back:
    /// its retained status says `degraded`, or `online` again, at once when connected (ahead of what is held), else
    /// at the next connection. Nothing changes once the goodbye has begun: `offline` has the last word.
    public mutating func setDegraded(_ degraded: Bool) {
        guard degraded != isDegraded else { return }
        isDegraded = degraded
        switch phase {
        case .running, .draining:
            if isConnected { outbox.enqueueFirst(status(availability)) }
        case .farewell, .closing:
            break
        }
    }

    /// What the status says while the service runs.
    private var availability: Availability { isDegraded ? .degraded : .online }

    /// The connection dropped (or a publish found none): what was in flight is sent again after the reconnect.
    public mutating func disconnected() {
        isConnected = false
        outbox.connectionLost()
        if case .farewell(let entry, _?, let deadline) = phase {
            // `offline` may not have reached the broker: send it again after the reconnect.
            phase = .farewell(entry: entry, messageID: nil, deadline: deadline)
            if outbox.held.allSatisfy({ $0.id != entry }) {
                outbox.enqueue(status(.offline), control: true)
                phase = .farewell(entry: lastEntryID, messageID: nil, deadline: deadline)
            }
        }
    }

    // MARK: - Publishing

    /// Queues a publication; it leaves through ``nextToSend()``. Ignored once closing.
    public mutating func publish(_ publication: Publication) {
        guard phase != .closing else { return }
        outbox.enqueue(publication)
    }

    /// Discards every unsent publication of the service (not the session's status); returns how many.
    @discardableResult
    public mutating func discardHeld() -> Int {
        outbox.discardUnsent()
    }

    /// The next publication the shell should hand to the client, if connected and the outbox allows.
    public func nextToSend() -> Outbox.Entry? {
        guard isConnected, phase != .closing else { return nil }
        return outbox.nextToSend()
    }

    /// The shell's report on sending the entry `id`.
    public mutating func sent(id: Int, result: SendResult, now: Double) -> [Command] {
        switch result {
        case .accepted(let messageID):
            outbox.sent(id: id, messageID: messageID)
            if case .farewell(let entry, nil, let deadline) = phase, entry == id {
                phase = .farewell(entry: entry, messageID: messageID, deadline: deadline)
            }
            return checkDrained(now: now)
        case .noConnection:
            disconnected()
            return []
        case .refused:
            let publication = outbox.held.first { $0.id == id }?.publication
            outbox.discard(id: id)
            if case .farewell(let entry, _, _) = phase, entry == id {
                phase = .closing
                return [.disconnect]
            }
            return (publication.map { [.unsendable($0)] } ?? []) + checkDrained(now: now)
        }
    }

    /// The broker acknowledged message `messageID`; `success` is false when it carried a failure reason.
    public mutating func acknowledged(messageID: Int, success: Bool, now: Double) -> [Command] {
        if case .farewell(_, let goodbye?, _) = phase, goodbye == messageID {
            phase = .closing
            return [.disconnect]
        }
        var commands: [Command] = []
        if let entry = outbox.acknowledged(messageID: messageID, success: success), !success {
            commands.append(.refused(entry.publication))
        }
        return commands + checkDrained(now: now)
    }

    // MARK: - Stopping

    /// Begins the goodbye: what was published before this call is sent first (waiting at most
    /// ``Configuration/drainTimeout`` from `now`), then `offline`; the session asks to disconnect once that is
    /// acknowledged. A second call stops at once.
    public mutating func stop(now: Double) -> [Command] {
        switch phase {
        case .running:
            phase = .draining(deadline: now + configuration.drainTimeout)
            return checkDrained(now: now)
        case .draining, .farewell:
            phase = .closing
            return [.disconnect]
        case .closing:
            return []
        }
    }

    /// Checks the deadlines of a stop.
    public mutating func tick(now: Double) -> [Command] {
        switch phase {
        case .draining:
            return checkDrained(now: now)
        case .farewell(_, _, let deadline) where now >= deadline:
            phase = .closing
            return [.disconnect]
        default:
            return []
        }
    }

    private mutating func checkDrained(now: Double) -> [Command] {
        guard case .draining(let deadline) = phase else { return [] }
        let drained = outbox.isEmpty
        guard drained || now >= deadline else { return [] }
        var commands: [Command] = []
        if !drained { commands.append(.abandoned(count: outbox.count)) }
        guard isConnected else {
            // Nobody to say goodbye to: the will speaks for us if the broker still holds our connection.
            phase = .closing
            return commands + [.disconnect]
        }
        outbox.enqueue(status(.offline), control: true)
        phase = .farewell(entry: lastEntryID, messageID: nil, deadline: now + configuration.goodbyeTimeout)
        return commands
    }

    // MARK: - Helpers

    private var lastEntryID: Int { outbox.held.last?.id ?? -1 }

    private func status(_ availability: Availability) -> Publication {
        Publication(topic: configuration.statusTopic, payload: availability.payload, qos: .atLeastOnce, retain: true)
    }
}
