/// What a server has done: counters since it started, and what is open now.
public struct HTTPServerStatistics: Sendable, Equatable {
    /// Connections taken under the limit.
    public var accepted = 0
    /// Connections refused with 503 because the limit was reached.
    public var refusedAtLimit = 0
    /// Requests answered by the handler.
    public var requests = 0
    /// Requests refused, by status (400, 405, 411, 413, 414, 431, 501, 503 for streams over the limit, 505).
    public var refused: [Int: Int] = [:]
    /// Connections closed because their head did not arrive in time.
    public var headTimeouts = 0
    /// Connections closed because their body did not arrive in time (``HTTPServerConfiguration/requestTimeout``).
    public var bodyTimeouts = 0
    /// Event streams opened.
    public var streamsOpened = 0
    /// Event streams dropped because their reader fell too far behind.
    public var slowStreamsDropped = 0
    /// Connections open now.
    public var openConnections = 0
    /// Streams open now.
    public var openStreams = 0
    /// The most connections open at once.
    public var peakConnections = 0

    public init() {}
}
