/// Holds reading batches until the broker has acknowledged them, and says which to publish next.
///
/// The MQTT client refuses to publish while disconnected and reports each QoS 1 acknowledgement by message id;
/// this outbox is the agent's side of that contract, as a state machine the shell drives:
///
/// ```swift
/// outbox.enqueue(seq: batch.seq, payload: bytes)
/// while let entry = outbox.nextToSend() {
///     do { outbox.sent(seq: entry.seq, messageID: try client.publish(...)) }
///     catch { outbox.connectionLost(); break }
/// }
/// // on .acknowledged(messageID, _): outbox.acknowledged(messageID:), then send again
/// // on .connected: outbox.connectionEstablished(), then send
/// ```
///
/// Batches leave in `seq` order, at most ``inFlightLimit`` unacknowledged at a time. When the connection drops,
/// every batch in flight becomes unsent again and is published anew after the reconnect (the broker may have
/// taken some of them already: duplicates are possible, and the locator drops them by `(agent, epoch, seq)`).
/// At most ``capacity`` batches are held; beyond that the oldest is dropped and counted in ``dropped``.
public struct BatchOutbox: Sendable {
    /// One batch waiting for its acknowledgement.
    public struct Entry: Sendable, Hashable {
        /// The batch's sequence number.
        public var seq: Int
        /// The payload to publish.
        public var payload: [UInt8]
        /// The message id of the publish in flight, nil while unsent.
        public var messageID: Int?
    }

    /// The most batches held, sent or not.
    public let capacity: Int
    /// The most batches published and not yet acknowledged.
    public let inFlightLimit: Int
    /// Whether the client is connected, as far as the outbox knows.
    public private(set) var isConnected = false
    /// Batches dropped (oldest first) because the outbox was full.
    public private(set) var dropped = 0
    /// Publishes handed out, re-sends after a reconnect included.
    public private(set) var published = 0
    /// Batches published again after a reconnect because their acknowledgement had not arrived.
    public private(set) var republished = 0
    /// Batches released by an acknowledgement.
    public private(set) var acknowledged = 0
    /// Acknowledgements carrying a failure reason (the broker refused the batch, for instance by ACL).
    public private(set) var refused = 0
    /// The most batches held at once.
    public private(set) var peak = 0

    private var entries: [Entry] = []
    /// Seqs that were in flight when a connection dropped, so that their next publish counts as a re-send.
    private var interrupted: Set<Int> = []

    /// An empty, disconnected outbox; `capacity` and `inFlightLimit` are at least 1.
    public init(capacity: Int = 600, inFlightLimit: Int = 8) {
        self.capacity = max(capacity, 1)
        self.inFlightLimit = max(inFlightLimit, 1)
    }

    /// How many batches are held.
    public var count: Int { entries.count }
    /// Whether nothing waits for sending or acknowledgement.
    public var isEmpty: Bool { entries.isEmpty }
    /// How many batches are published and unacknowledged.
    public var inFlight: Int { entries.count { $0.messageID != nil } }
    /// The seqs held, oldest first.
    public var seqs: [Int] { entries.map(\.seq) }

    /// Adds a batch at the end; drops the oldest when full.
    public mutating func enqueue(seq: Int, payload: [UInt8]) {
        entries.append(Entry(seq: seq, payload: payload, messageID: nil))
        while entries.count > capacity {
            interrupted.remove(entries.removeFirst().seq)
            dropped += 1
        }
        peak = max(peak, entries.count)
    }

    /// The next batch to publish, if connected, under the in-flight limit and one is unsent; it stays unsent until
    /// ``sent(seq:messageID:)``.
    public func nextToSend() -> Entry? {
        guard isConnected, inFlight < inFlightLimit else { return nil }
        return entries.first { $0.messageID == nil }
    }

    /// Records that the batch `seq` was published as `messageID`.
    public mutating func sent(seq: Int, messageID: Int) {
        guard let index = entries.firstIndex(where: { $0.seq == seq }) else { return }
        entries[index].messageID = messageID
        published += 1
        if interrupted.remove(seq) != nil { republished += 1 }
    }

    /// Releases the batch acknowledged under `messageID`; returns its seq, or nil for an id not in flight (an
    /// acknowledgement of a publish from before a reconnect, whose batch was sent again under a new id).
    @discardableResult
    public mutating func acknowledged(messageID: Int, success: Bool = true) -> Int? {
        guard let index = entries.firstIndex(where: { $0.messageID == messageID }) else { return nil }
        let seq = entries.remove(at: index).seq
        acknowledged += 1
        if !success { refused += 1 }
        return seq
    }

    /// Gives up on the batch `seq` (the client refused it for good, say as too large); counted in ``refused``.
    public mutating func discard(seq: Int) {
        guard let index = entries.firstIndex(where: { $0.seq == seq }) else { return }
        interrupted.remove(entries.remove(at: index).seq)
        refused += 1
    }

    /// The broker accepted a connection: sending may start.
    public mutating func connectionEstablished() {
        isConnected = true
    }

    /// The connection dropped, or a publish was refused for want of one: everything in flight is unsent again.
    public mutating func connectionLost() {
        isConnected = false
        for index in entries.indices where entries[index].messageID != nil {
            entries[index].messageID = nil
            interrupted.insert(entries[index].seq)
        }
    }
}
