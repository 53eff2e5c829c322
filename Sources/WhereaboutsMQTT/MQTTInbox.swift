import Synchronization

/// The messages a client receives, in arrival order, with the depth of the queue behind them.
///
/// The buffer is unbounded on purpose: libmosquitto acknowledges a QoS 1 message as soon as the callback
/// returns, so dropping one here would lose it for good. Watch ``MQTTClientStatistics/inboxDepth`` and
/// ``MQTTClientStatistics/inboxPeak`` instead: a growing depth means the consumer is too slow. Iterate
/// from one task only; the sequence ends when ``MQTTClient/run()`` returns.
public struct MQTTInbox: AsyncSequence, Sendable {
    public typealias Element = MQTTMessage
    public typealias Failure = Never

    let stream: AsyncStream<MQTTMessage>
    let counters: InboxCounters
    let core: MQTTClientCore

    /// Starts iterating; only one iterator should exist.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator(), counters: counters, core: core)
    }

    /// Takes messages off the queue and counts them out.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<MQTTMessage>.AsyncIterator
        let counters: InboxCounters
        let core: MQTTClientCore

        /// The next message, or `nil` once the client has stopped and the queue is empty.
        public mutating func next() async -> MQTTMessage? {
            let message = await base.next()
            if message != nil {
                counters.removed()
                core.taken()
            }
            return message
        }

        /// The next message, or `nil` once the client has stopped and the queue is empty.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> MQTTMessage? {
            let message = await base.next(isolation: actor)
            if message != nil {
                counters.removed()
                core.taken()
            }
            return message
        }
    }
}

/// Counts of received and queued messages; written by the C callback thread, read by anyone.
///
/// Atomics rather than a `Mutex`: this runs once per message, and Swift's `Mutex` on Linux is a bare
/// futex that ThreadSanitizer cannot see, so it would report every lock-protected access as a race.
/// The three counters are read one by one, so a snapshot may be a message apart between them.
final class InboxCounters: Sendable {
    let received = Atomic<Int>(0)
    let depth = Atomic<Int>(0)
    let peak = Atomic<Int>(0)

    /// Called before a message is queued, so the consumer never sees a negative depth.
    func added() {
        received.add(1, ordering: .relaxed)
        let newDepth = depth.add(1, ordering: .acquiringAndReleasing).newValue
        var currentPeak = peak.load(ordering: .relaxed)
        while newDepth > currentPeak {
            let (exchanged, original) = peak.compareExchange(
                expected: currentPeak, desired: newDepth, ordering: .relaxed
            )
            if exchanged { break }
            currentPeak = original
        }
    }

    func removed() {
        depth.subtract(1, ordering: .acquiringAndReleasing)
    }
}

/// Counters describing a client's traffic and connection history.
public struct MQTTClientStatistics: Sendable, Hashable {
    /// Messages received from the broker so far.
    public var messagesReceived: Int
    /// Messages received but not yet taken from ``MQTTClient/messages``.
    public var inboxDepth: Int
    /// The largest ``inboxDepth`` seen.
    public var inboxPeak: Int
    /// Connection attempts started (the first one included).
    public var connectionAttempts: Int
    /// Connections the broker accepted.
    public var connections: Int
}
