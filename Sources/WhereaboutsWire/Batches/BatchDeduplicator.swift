/// Remembers which (agent, epoch, seq) batches the locator has taken, so that QoS 1 redeliveries and replays are
/// dropped while every fresh batch counts; and counts the batches that never arrived.
///
/// An agent's `epoch` is its process start time in milliseconds and `seq` counts its batches from 0. Per agent:
///
/// - the last ``memory`` batches taken are remembered by (epoch, seq): one of them again is a duplicate. Nothing
///   else is: a batch the ledger has not seen is new, whatever its seq, so no batch (a hostile one with seq 2^53,
///   say) can make the agent's next batches look old. A redelivery too old to be remembered is harmless: its
///   readings are older than the locator accepts;
/// - the newest epoch supersedes the older ones for good: a batch of an older epoch that was sent before the newest
///   run started (its `sent` time before the newest epoch, less the clock skew) is left over from an earlier run
///   and refused. A batch of an older epoch sent since is fresh and taken: a bogus newer epoch cannot silence the
///   agent's real run;
/// - gaps in the newest run's seqs are counted as missing batches (a late batch that fills one counts back), so
///   that a broker that lost messages shows in the metrics; a run's first batches too, counted from seq 0, when the
///   run began (its epoch) since the locator has been watching (``watching(since:)``), or when the ledger knew an
///   earlier run of the agent;
/// - a gap larger than the agent could have sent in the time between the two batches (by their `sent` times, one
///   batch a window of at least ``shortestWindow``, with ``burstAllowance`` for a backlog sent at once) is a jump,
///   not a loss: counted in ``jumps`` and not as missing, and the agent's next batches count on from where they
///   were (an agent's own account can forge its seq, and a +1,000 logged "1000 batches missing").
///
/// Memory is bounded: ``memory`` keys per agent, and at most `maximumAgents` agents; when full, the agent heard
/// from least recently is forgotten.
///
/// The ledger outlives the process through ``agentLedgers`` and ``init(restoring:maximumAgents:clockSkew:)`` (and
/// its file form, ``BatchLedger``): a batch taken just before a stop whose acknowledgement never reached the broker
/// is delivered again to the next run, which must know it.
public struct BatchDeduplicator: Sendable {
    /// How many batches per agent are remembered.
    public static let memory = 1024
    /// A jump in seq larger than this is not counted as missing batches (a day of one-second windows).
    public static let largestCountedGap = 86_400
    /// The shortest batching window an agent has (`--window`, 0.1-60 s): it sends at most one batch per this many
    /// seconds of its clock.
    public static let shortestWindow = 0.1
    /// Seconds of windows an agent may send at once, beyond those its clock moved: a backlog after a stall of its
    /// loop, all stamped when it caught up.
    public static let burstAllowance = 10.0

    /// The most agents remembered at once.
    public let maximumAgents: Int
    /// How far an agent's clock may run ahead of the locator's, seconds.
    public let clockSkew: Double

    /// A batch as the ledger knows it: its agent's run and its number in that run.
    public struct BatchKey: Hashable, Sendable {
        /// The agent's run: its start time, milliseconds.
        public var epoch: Int
        /// The batch's number in the run, from 0.
        public var seq: Int

        public init(epoch: Int, seq: Int) {
            self.epoch = epoch
            self.seq = seq
        }
    }

    /// A gap larger than the agent could have sent: its seq went from `from` to `to` while its clock moved `seconds`.
    public struct Jump: Sendable, Hashable {
        /// The highest seq before, -1 at a run's start.
        public var from: Int
        public var to: Int
        public var seconds: Double

        public init(from: Int, to: Int, seconds: Double) {
            self.from = from
            self.to = to
            self.seconds = seconds
        }
    }

    /// What the ledger knows of one agent, as saved and restored.
    public struct AgentLedger: Sendable, Equatable {
        /// The agent.
        public var agent: AgentID
        /// Its newest run.
        public var newestEpoch: Int
        /// The highest seq of the newest run taken.
        public var highest: Int
        /// Batches missing from its newest run.
        public var missing: Int
        /// The batches remembered, oldest first (at most ``BatchDeduplicator/memory``).
        public var batches: [BatchKey]

        public init(agent: AgentID, newestEpoch: Int, highest: Int, missing: Int, batches: [BatchKey]) {
            self.agent = agent
            self.newestEpoch = newestEpoch
            self.highest = highest
            self.missing = missing
            self.batches = batches
        }
    }

    private struct History {
        var seen: Set<BatchKey> = []
        /// The remembered keys, oldest first from `head`, for forgetting the oldest.
        var order: [BatchKey] = []
        var head = 0
        var newestEpoch: Int
        /// The highest seq of the newest epoch taken so far.
        var highest: Int
        var missing = 0
        /// The `sent` time of the batch with the highest seq, when this run of the locator took it.
        var highestSent: Double?
        /// Jumps in its seqs, and the last one.
        var jumps = 0
        var lastJump: Jump?
        var lastUsed: UInt64

        /// Counts the batches before `seq` of a run that began at `epoch` as missing, or as a jump when its clock has
        /// not moved enough since for that many.
        mutating func countRunStart(seq: Int, epoch: Int, sent: Double) {
            let start = Double(epoch) / 1000
            if seq <= BatchDeduplicator.mostBatches(from: start, to: sent) {
                missing += seq
            } else {
                jumped(Jump(from: -1, to: seq, seconds: sent - start))
            }
        }

        mutating func jumped(_ jump: Jump) {
            jumps += 1
            lastJump = jump
        }

        mutating func remember(_ key: BatchKey) {
            seen.insert(key)
            order.append(key)
            if order.count - head > BatchDeduplicator.memory {
                seen.remove(order[head])
                head += 1
                if head >= BatchDeduplicator.memory {
                    order.removeFirst(head)
                    head = 0
                }
            }
        }
    }

    private var histories: [AgentID: History] = [:]
    private var useCounter: UInt64 = 0
    /// Since when (Unix seconds) the locator has received every batch the broker passed on: a run that began later
    /// is counted from seq 0.
    public private(set) var watchingSince = Double.infinity

    /// Counts the changes to the ledger (every batch admitted, every agent forgotten), so that a shell saves it only
    /// when it changed.
    public private(set) var revision: UInt64 = 0

    /// A deduplicator remembering at most `maximumAgents` agents (at least 1); `clockSkew` seconds is how far apart
    /// a batch's `sent` time and its run's start may seem.
    public init(maximumAgents: Int = 1024, clockSkew: Double = 5) {
        self.maximumAgents = max(1, maximumAgents)
        self.clockSkew = clockSkew.isFinite ? max(clockSkew, 0) : 5
    }

    /// A deduplicator that knows what `ledgers` say (least recently heard agent first, as ``agentLedgers`` gives
    /// them), within its bounds: the most recently heard `maximumAgents` agents, the newest ``memory`` batches of
    /// each; an agent listed twice counts once (its last entry), a batch listed twice once.
    public init(restoring ledgers: [AgentLedger], maximumAgents: Int = 1024, clockSkew: Double = 5) {
        self.init(maximumAgents: maximumAgents, clockSkew: clockSkew)
        for ledger in ledgers.suffix(self.maximumAgents) {
            useCounter &+= 1
            var history = History(
                newestEpoch: ledger.newestEpoch, highest: ledger.highest, missing: max(ledger.missing, 0),
                lastUsed: useCounter)
            for key in ledger.batches.suffix(Self.memory) where !history.seen.contains(key) { history.remember(key) }
            histories[ledger.agent] = history
        }
        while histories.count > self.maximumAgents { evictLeastRecentlyUsed() }
    }

    /// What the ledger knows, least recently heard agent first (the order ``init(restoring:maximumAgents:clockSkew:)``
    /// takes).
    public var agentLedgers: [AgentLedger] {
        histories.sorted { $0.value.lastUsed < $1.value.lastUsed }.map { agent, history in
            AgentLedger(
                agent: agent, newestEpoch: history.newestEpoch, highest: history.highest, missing: history.missing,
                batches: Array(history.order[history.head...]))
        }
    }

    /// How many agents are remembered now.
    public var trackedAgentCount: Int { histories.count }

    /// Batches missing from each agent's newest run so far.
    public var missing: [AgentID: Int] { histories.compactMapValues { $0.missing > 0 ? $0.missing : nil } }

    /// Jumps in each agent's seqs so far (see the overview), with the last one; not kept across restarts.
    public var jumps: [AgentID: (count: Int, last: Jump)] {
        histories.compactMapValues { history in history.lastJump.map { (history.jumps, $0) } }
    }

    /// The locator receives every batch the broker passes on from `time` (Unix seconds): its first connection. An
    /// agent run that began after it, less the clock skew, is counted from seq 0 (one before would count the batches
    /// an earlier locator took). The earliest time told counts.
    public mutating func watching(since time: Double) {
        if time.isFinite { watchingSince = min(watchingSince, time) }
    }

    /// How many batches an agent can have sent after one sent at `earlier` (its clock) and before one sent at `later`.
    public static func mostBatches(from earlier: Double, to later: Double) -> Int {
        let seconds = max(later - earlier, 0) + burstAllowance
        return Int(min(seconds / shortestWindow, Double(largestCountedGap)))
    }

    /// A batch taken, as ``takeAdmissions()`` lists it for the shell's journal and ``replay(_:)`` takes it back.
    public struct Admission: Sendable, Hashable {
        public var agent: AgentID
        public var epoch: Int
        public var seq: Int
        public var sent: Double

        public init(agent: AgentID, epoch: Int, seq: Int, sent: Double) {
            self.agent = agent
            self.epoch = epoch
            self.seq = seq
            self.sent = sent
        }
    }

    /// Whether the batches taken are listed for ``takeAdmissions()`` (a shell that journals them between saves).
    public var recordsAdmissions = false
    private var admissions: [Admission] = []

    /// The batches taken since the last call, oldest first, when ``recordsAdmissions``.
    public mutating func takeAdmissions() -> [Admission] {
        defer { admissions.removeAll(keepingCapacity: true) }
        return admissions
    }

    /// Takes again, in order, the batches a journal listed (those taken after the ledger was saved), so that the
    /// ledger, its gaps included, is what it was when the journal ended.
    public mutating func replay(_ journal: [Admission]) {
        for admission in journal {
            _ = decide(agent: admission.agent, epoch: admission.epoch, seq: admission.seq, sent: admission.sent)
        }
    }

    /// Records a batch and says whether to take it.
    ///
    /// - Returns: nil when the batch is new (and is now remembered); ``RejectionReason/duplicateBatch`` when it was
    ///   taken before; ``RejectionReason/supersededEpoch`` when it is left over from an earlier run.
    public mutating func admit(agent: AgentID, epoch: Int, seq: Int, sent: Double) -> RejectionReason? {
        let verdict = decide(agent: agent, epoch: epoch, seq: seq, sent: sent)
        if verdict == nil, recordsAdmissions {
            admissions.append(Admission(agent: agent, epoch: epoch, seq: seq, sent: sent))
        }
        return verdict
    }

    private mutating func decide(agent: AgentID, epoch: Int, seq: Int, sent: Double) -> RejectionReason? {
        useCounter &+= 1
        revision &+= 1
        let key = BatchKey(epoch: epoch, seq: seq)
        guard var history = histories[agent] else {
            if histories.count >= maximumAgents { evictLeastRecentlyUsed() }
            var history = History(newestEpoch: epoch, highest: seq, highestSent: sent, lastUsed: useCounter)
            // A run that began while the locator watched: its batches before this one never came.
            if Double(epoch) / 1000 >= watchingSince + clockSkew {
                history.countRunStart(seq: seq, epoch: epoch, sent: sent)
            }
            history.remember(key)
            histories[agent] = history
            return nil
        }
        history.lastUsed = useCounter
        defer { histories[agent] = history }
        if history.seen.contains(key) { return .duplicateBatch }
        if epoch < history.newestEpoch {
            // Sent before the newest run began: a leftover of an earlier run.
            if sent < Double(history.newestEpoch) / 1000 - clockSkew { return .supersededEpoch }
        } else if epoch > history.newestEpoch {
            history.newestEpoch = epoch
            history.highest = seq
            history.highestSent = sent
            // Batches 0..<seq of the new run never came (a run starts at 0).
            history.countRunStart(seq: seq, epoch: epoch, sent: sent)
        } else if seq > history.highest {
            let gap = seq - history.highest - 1
            let most = history.highestSent.map { Self.mostBatches(from: $0, to: sent) } ?? Self.largestCountedGap
            if gap <= most {
                history.missing += gap
                history.highest = seq
                history.highestSent = sent
            } else {
                history.jumped(Jump(from: history.highest, to: seq, seconds: sent - (history.highestSent ?? sent)))
            }
        } else if history.missing > 0 {
            history.missing -= 1  // a late batch filled a gap
        }
        history.remember(key)
        return nil
    }

    /// Records a decoded batch; see ``admit(agent:epoch:seq:sent:)``.
    public mutating func admit(_ batch: DecodedBatch) -> RejectionReason? {
        admit(agent: batch.agent, epoch: batch.epoch, seq: batch.seq, sent: batch.sent)
    }

    /// Forgets an agent (removed from the map).
    public mutating func forget(_ agent: AgentID) {
        guard histories.removeValue(forKey: agent) != nil else { return }
        revision &+= 1
    }

    private mutating func evictLeastRecentlyUsed() {
        guard let oldest = histories.min(by: { $0.value.lastUsed < $1.value.lastUsed }) else { return }
        histories[oldest.key] = nil
    }
}
