import WhereaboutsSession

/// Where a service's own inputs come from (the agent: a Bluetooth controller or a btsnoop capture).
///
/// A source runs in a task of the runner's and hands its inputs to a ``SourceFeed``, which holds it back while the
/// service falls behind: nothing is dropped between a source and its service.
public protocol ServiceSource: Sendable {
    /// What the source produces.
    associatedtype Input: Sendable
    /// What the service may ask of the source.
    associatedtype Effect: Sendable & Hashable

    /// Produces inputs until the source ends or the task is cancelled. A source that ends says so with an input
    /// of its own, so that the service decides what follows.
    func run(into feed: inout SourceFeed<Input>) async
    /// Does what the service asked (restart a scan, say).
    func perform(_ effect: Effect) async
}

/// A service with no source of its own (the locator): it only hears the broker.
public struct NoSource: ServiceSource {
    public typealias Input = Never
    public typealias Effect = Never

    public init() {}

    public func run(into feed: inout SourceFeed<Never>) async {}
    public func perform(_ effect: Never) async {}
}

/// Hands a source's inputs to the service, a few at a time: after `limit` inputs not yet taken, ``send(_:)`` waits
/// for the service to take one.
public struct SourceFeed<Input: Sendable> {
    private var credits: AsyncStream<Void>.Iterator
    private let deliver: @Sendable (Input) -> Void
    private var outstanding = 0
    private let limit: Int

    /// A feed that delivers with `deliver`; the service yields one credit per input it took.
    public init(credits: AsyncStream<Void>, limit: Int = 4, deliver: @escaping @Sendable (Input) -> Void) {
        self.credits = credits.makeAsyncIterator()
        self.deliver = deliver
        self.limit = max(limit, 1)
    }

    /// Delivers an input; waits while too many are untaken. False once the service has stopped taking inputs or
    /// the task was cancelled: the source should return.
    public mutating func send(_ input: Input) async -> Bool {
        deliver(input)
        outstanding += 1
        while outstanding >= limit {
            guard await credits.next() != nil else { return false }
            outstanding -= 1
        }
        return !Task.isCancelled
    }
}
