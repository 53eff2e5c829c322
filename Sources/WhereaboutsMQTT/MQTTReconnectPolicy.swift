/// How long the client waits before reconnecting: exponential backoff with a cap and "equal jitter".
///
/// After the n-th consecutive failure the nominal delay is `initialDelay · 2^(n-1)`, capped at
/// `maximumDelay`, and the actual delay is drawn uniformly from the upper half of it,
/// `[nominal/2, nominal]`. The jitter spreads a fleet of agents that lost the same broker (libmosquitto's
/// own reconnect has none). While the nominal delay is still doubling, the next delay is never shorter
/// than the last one (it is at least the last nominal delay); at the cap they vary within `[cap/2, cap]`.
///
/// Only a connection that stays up for ``stableConnection`` starts the count again. One the broker
/// accepts and then drops at once (two agents sharing a client id take the session from each other;
/// an ACL or quota kicks the client out) counts as a failure, so it backs off instead of flapping.
public struct MQTTReconnectPolicy: Sendable, Hashable {
    /// The nominal delay after the first failure.
    public var initialDelay: Duration
    /// The largest nominal delay.
    public var maximumDelay: Duration
    /// How long a connection must last to reset the backoff.
    public var stableConnection: Duration

    /// A policy; `maximumDelay` below `initialDelay` is raised to it.
    public init(
        initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(30),
        stableConnection: Duration = .seconds(10)
    ) {
        self.initialDelay = max(initialDelay, .zero)
        self.maximumDelay = max(maximumDelay, self.initialDelay)
        self.stableConnection = max(stableConnection, .zero)
    }

    /// The nominal (unjittered) delay after `failures` consecutive failures (1 or more).
    public func nominalDelay(afterFailures failures: Int) -> Duration {
        var delay = initialDelay
        var doublings = max(failures, 1) - 1
        while doublings > 0, delay < maximumDelay {
            delay *= 2
            doublings -= 1
        }
        return min(delay, maximumDelay)
    }

    /// The delay to wait after `failures` consecutive failures; `unitRandom` in `[0, 1]` picks the point in
    /// the jitter range, so callers (and tests) supply the randomness.
    public func delay(afterFailures failures: Int, unitRandom: Double) -> Duration {
        let nominal = nominalDelay(afterFailures: failures)
        let fraction = 0.5 + 0.5 * min(max(unitRandom, 0), 1)
        return nominal * fraction
    }
}
