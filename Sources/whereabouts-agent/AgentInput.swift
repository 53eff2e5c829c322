import CommandLineSupport
import WhereaboutsAdvertising
import WhereaboutsMQTT

/// What reaches the task that owns the agent's state.
enum AgentInput: Sendable {
    /// Raw HCI events with the time each was heard (or is stamped with, in a replay). The consumer hands back a
    /// credit after each of these, which is how the sources are held back when it falls behind.
    case events([HeardEvent], framing: HCIFraming)
    /// A replay's time moved on with no event: windows up to it may close.
    case replayTime(Double)
    /// The source has no more events; `problem` says why, if not simply the end of a capture.
    case sourceEnded(problem: SourceProblem?)
    /// A connection event or acknowledgement from the MQTT client.
    case connection(MQTTConnectionEvent)
    /// The periodic tick (windows in live mode, watchdogs, counters, shutdown deadlines).
    case tick
    /// SIGINT or SIGTERM.
    case signal(Int32)
    /// The MQTT client stopped, with its error if it failed.
    case clientStopped((any Error)?)
}

/// One HCI event and when it was heard, Unix seconds.
struct HeardEvent: Sendable {
    var bytes: [UInt8]
    var time: Double
}

/// Why a source ended other than by reaching the end of a capture.
struct SourceProblem: Sendable, CustomStringConvertible {
    var message: String
    /// Whether the agent should exit with a failure (a live controller failed) rather than finish normally (a
    /// capture with a damaged tail).
    var isFailure: Bool

    var description: String { message }
}

/// Hands the consumer's credits to a source: a source may have a few inputs in flight, then waits for a credit.
///
/// Used from the one task that runs the source.
struct CreditGate {
    private var iterator: AsyncStream<Void>.Iterator
    private var outstanding = 0
    private let limit: Int

    init(_ credits: AsyncStream<Void>, limit: Int = 4) {
        iterator = credits.makeAsyncIterator()
        self.limit = limit
    }

    /// Counts one input sent; waits for a credit when too many are outstanding. False once cancelled.
    mutating func sent() async -> Bool {
        outstanding += 1
        while outstanding >= limit {
            guard await iterator.next() != nil else { return false }
            outstanding -= 1
        }
        return !Task.isCancelled
    }
}
