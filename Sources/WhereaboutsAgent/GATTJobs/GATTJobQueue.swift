public import WhereaboutsWire

/// The agent's GATT jobs as a state machine: requests in (as received bytes), one job at a time out to the radio,
/// a result for every request.
///
/// One job runs at a time, because the radio has one central and a tag takes one connection. Up to ``capacity``
/// more wait; a request beyond them is answered ``GATTJobStatus/busy`` at once. Each job's deadline counts from
/// when the agent received it, waiting included: a job whose deadline passes in the queue is answered `timeout`
/// without running, and a running one past its deadline is answered `timeout` and cancelled. The next job starts
/// only when the shell says the cancelled one has stopped (``finished(_:_:now:)``), so that two jobs never share the
/// radio. A malformed request and a job id already waiting or running are answered `refused`. Times are monotonic
/// seconds from the caller.
public struct GATTJobQueue: Sendable {
    /// What the shell does.
    public enum Action: Sendable, Hashable {
        /// Run this job on the radio, for at most `remaining` seconds (what is left of its deadline); report its end
        /// with ``GATTJobQueue/finished(_:_:now:)``.
        case start(GATTJobRequest, remaining: Double)
        /// Stop the running job (its deadline passed; its result is already published).
        case cancel(GATTJobID)
        /// Publish this result on the agent's results topic.
        case publish(GATTJobResult)
    }

    /// What the queue has counted since it started.
    public struct Counters: Sendable, Hashable {
        public var received = 0
        public var refused = 0
        public var busy = 0
        public var completed = 0
        public var timedOut = 0
        /// Results the shell reported for a job already answered `timeout`, dropped.
        public var late = 0
    }

    private struct Waiting: Sendable {
        var request: GATTJobRequest
        var deadline: Double
    }

    /// The most jobs that wait behind the running one.
    public let capacity: Int
    public private(set) var counters = Counters()

    private var running: Waiting?
    /// True once the running job was answered `timeout` and cancelled: only its stop is awaited.
    private var cancelled = false
    private var waiting: [Waiting] = []

    /// A queue of up to `capacity` waiting jobs (at least 0). An agent without `--gatt` has none: it does not
    /// subscribe to its requests at all.
    public init(capacity: Int = 8) {
        self.capacity = max(0, capacity)
    }

    /// The job on the radio, if any (also while its cancellation is awaited).
    public var runningJob: GATTJobID? { running?.request.id }
    /// The jobs waiting, in the order they will run.
    public var waitingJobs: [GATTJobID] { waiting.map(\.request.id) }

    /// A request's payload arrived.
    public mutating func receive(_ bytes: [UInt8], now: Double) -> [Action] {
        counters.received += 1
        let request: GATTJobRequest
        switch GATTJobRequest.decode(bytes) {
        case .success(let decoded): request = decoded
        case .failure(let refusal): return refuse(refusal)
        }
        if runningJob == request.id || waitingJobs.contains(request.id) {
            return refuse(GATTJobRefusal(id: request.id, reason: "a job with this id is already waiting or running"))
        }
        let job = Waiting(request: request, deadline: now + request.deadline)
        if running == nil {
            running = job
            return [.start(request, remaining: request.deadline)]
        }
        guard waiting.count < capacity else {
            counters.busy += 1
            return [.publish(GATTJobResult(id: request.id, tag: request.tag, status: .busy))]
        }
        waiting.append(job)
        return []
    }

    /// The shell's job ended (or stopped after a cancel): its result is published unless it was answered already.
    public mutating func finished(_ id: GATTJobID, _ result: GATTJobResult, now: Double) -> [Action] {
        guard let job = running, job.request.id == id else {
            counters.late += 1
            return []
        }
        var actions: [Action] = []
        if cancelled {
            counters.late += 1
        } else if now > job.deadline {
            // Ended after its deadline but before a tick noticed: the operator was promised a timeout by then.
            counters.timedOut += 1
            actions.append(.publish(GATTJobResult(id: id, tag: job.request.tag, status: .timeout)))
        } else {
            counters.completed += 1
            actions.append(
                .publish(GATTJobResult(id: id, tag: job.request.tag, status: result.status, values: result.values)))
        }
        running = nil
        cancelled = false
        return actions + startNext(now: now)
    }

    /// Time passed: answers the jobs whose deadline has passed, cancelling the running one.
    public mutating func tick(now: Double) -> [Action] {
        var actions: [Action] = []
        if let job = running, !cancelled, now > job.deadline {
            counters.timedOut += 1
            cancelled = true
            actions += [
                .publish(GATTJobResult(id: job.request.id, tag: job.request.tag, status: .timeout)),
                .cancel(job.request.id),
            ]
        }
        actions += expireWaiting(now: now)
        return actions
    }

    private mutating func startNext(now: Double) -> [Action] {
        var actions = expireWaiting(now: now)
        if running == nil, !waiting.isEmpty {
            let next = waiting.removeFirst()
            running = next
            actions.append(.start(next.request, remaining: next.deadline - now))
        }
        return actions
    }

    private mutating func expireWaiting(now: Double) -> [Action] {
        var actions: [Action] = []
        waiting.removeAll { job in
            guard now > job.deadline else { return false }
            counters.timedOut += 1
            actions.append(.publish(GATTJobResult(id: job.request.id, tag: job.request.tag, status: .timeout)))
            return true
        }
        return actions
    }

    private mutating func refuse(_ refusal: GATTJobRefusal) -> [Action] {
        counters.refused += 1
        return [.publish(GATTJobResult(refusal))]
    }
}
