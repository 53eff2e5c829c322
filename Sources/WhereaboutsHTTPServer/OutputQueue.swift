/// Bytes waiting to be sent on one connection, as the chunks they were queued in: appending and sending are
/// O(1) per chunk however long a stream runs, and nothing is copied to make room.
struct OutputQueue {
    private var chunks: [[UInt8]] = []
    private var head = 0
    private var offset = 0
    /// Bytes not yet sent.
    private(set) var pending = 0

    mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        chunks.append(bytes)
        pending += bytes.count
    }

    /// Calls `body` with the unsent part of the first chunk (empty when nothing is pending).
    func withFirstChunk<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        guard head < chunks.count else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return chunks[head].withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
    }

    /// Marks `count` bytes of the first chunk as sent.
    mutating func consume(_ count: Int) {
        guard head < chunks.count else { return }
        offset += count
        pending -= count
        if offset >= chunks[head].count {
            head += 1
            offset = 0
        }
        if head == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= chunks.count {
            chunks.removeFirst(head)
            head = 0
        }
    }
}
