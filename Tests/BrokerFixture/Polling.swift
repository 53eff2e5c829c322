/// A wait that gave up: what was awaited, and what was seen by then, if the caller said.
public struct TimedOut: Error, CustomStringConvertible {
    public let what: String

    public init(what: String) {
        self.what = what
    }

    public var description: String { "timed out waiting for \(what)" }
}

/// The time a poller has been awake to look, as opposed to the time that passed.
///
/// A test that waits for a broker, a child process or another task polls; its timeout only turns a hang into a
/// failure. But the whole suite runs in one process, on Swift's shared workers (two, on two cores), and tests that
/// compute hold them: a poller asleep for 20 ms can wake a minute later, and then find its deadline passed before
/// the task it waits on (the one that records a client's events, say) has run at all. CI failed four end-to-end
/// tests so in one run, each "timed out waiting for the collector to subscribe" after 60 s, while they take a second
/// alone. So each wake counts for at most `longestWake`: a stall, however long, costs the waiter a fraction of its
/// patience, and a condition that never holds still fails once the waiter has spent `timeout` looking.
public struct Patience {
    public let timeout: Duration
    public let longestWake: Duration
    private var spent = Duration.zero
    private var last = ContinuousClock.now

    public init(_ timeout: Duration, longestWake: Duration = .milliseconds(500)) {
        self.timeout = timeout
        self.longestWake = longestWake
    }

    /// Counts the time since the last look, at most `longestWake`; true once `timeout` has been spent.
    public mutating func isExhausted() -> Bool {
        let now = ContinuousClock.now
        spent += min(now - last, longestWake)
        last = now
        return spent >= timeout
    }
}

/// Polls `probe` every `interval` until it returns a value; throws ``TimedOut`` once the waiter has spent `timeout`
/// awake (see ``Patience``). `seen` adds what was last seen to the error.
@discardableResult
public func poll<Value>(
    _ what: String, timeout: Duration, interval: Duration = .milliseconds(20), seen: () -> String? = { nil },
    _ probe: () throws -> Value?
) async throws -> Value {
    var patience = Patience(timeout)
    while true {
        if let value = try probe() { return value }
        guard !patience.isExhausted() else {
            throw TimedOut(what: seen().map { "\(what); saw \($0)" } ?? what)
        }
        try await Task.sleep(for: interval)
    }
}
