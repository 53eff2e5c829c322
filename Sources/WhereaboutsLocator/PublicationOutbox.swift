import WhereaboutsWire

/// Publications held while the broker is unreachable, sent in order when it returns.
///
/// Retained messages are coalesced by topic (only the newest state of a topic matters); the rest (events,
/// metrics) are kept in order up to a bound, dropping the oldest first and counting what was dropped.
public struct PublicationOutbox: Sendable {
    /// The most non-retained publications held.
    public let capacity: Int
    /// How many publications were dropped for lack of room.
    public private(set) var dropped = 0

    private var queue: [Publication] = []
    private var retainedIndex: [String: Int] = [:]

    public init(capacity: Int = 10_000) {
        self.capacity = max(capacity, 1)
    }

    /// How many publications wait.
    public var count: Int { queue.count }

    /// Holds a publication.
    public mutating func enqueue(_ publication: Publication) {
        if publication.retain, let index = retainedIndex[publication.topic.name] {
            queue[index] = publication
            return
        }
        if queue.count - retainedIndex.count >= capacity, let oldest = queue.firstIndex(where: { !$0.retain }) {
            queue.remove(at: oldest)
            dropped += 1
            reindex()
        }
        queue.append(publication)
        if publication.retain { retainedIndex[publication.topic.name] = queue.count - 1 }
    }

    /// Takes every held publication, oldest first.
    public mutating func drain() -> [Publication] {
        defer {
            queue.removeAll()
            retainedIndex.removeAll()
        }
        return queue
    }

    private mutating func reindex() {
        retainedIndex.removeAll(keepingCapacity: true)
        for (index, publication) in queue.enumerated() where publication.retain {
            retainedIndex[publication.topic.name] = index
        }
    }
}
