/// What a server has done: counters since it started, and what is open now.
public struct HTTPServerStatistics: Sendable, Equatable {
    /// Connections taken (under the limit, or by giving up another).
    public var accepted = 0
    /// Connections refused with 503 because the limit was reached and no connection could be given up for them.
    public var refusedAtLimit = 0
    /// Connections given up (told 503 and closed) to make room for a newcomer: unfinished requests, oldest first.
    public var evictedUnfinished = 0
    /// Connections given up to make room that had been answered and only waited for the peer's close.
    public var evictedLingering = 0
    /// Streams given up to make room for a new one because their reader had fallen behind (stopped reading).
    public var evictedStreams = 0
    /// Connections that came from the kernel but could not be taken, because the process ran out of file
    /// descriptors (`EMFILE`, `ENFILE`) or memory.
    public var acceptFailures = 0
    /// Requests answered for HEAD (as GET, without the body).
    public var headRequests = 0
    /// Requests answered by the handler.
    public var requests = 0
    /// Requests refused, by status (400, 405, 411, 413, 414, 431, 501, 503 for streams over the limit, 505).
    public var refused: [Int: Int] = [:]
    /// Connections closed because their first byte did not arrive in time (``HTTPServerConfiguration/firstByteTimeout``).
    public var firstByteTimeouts = 0
    /// Connections closed because their head did not arrive in time.
    public var headTimeouts = 0
    /// Connections closed because their body did not arrive in time (``HTTPServerConfiguration/requestTimeout``).
    public var bodyTimeouts = 0
    /// Event streams opened.
    public var streamsOpened = 0
    /// Event streams dropped because their reader fell too far behind.
    public var slowStreamsDropped = 0
    /// Connections open now, streams included.
    public var openConnections = 0
    /// Streams open now.
    public var openStreams = 0
    /// The most connections open at once.
    public var peakConnections = 0

    public init() {}
}
