/// Remembers which (agent, epoch, seq) batches the locator has taken, so that QoS 1 redeliveries and replays
/// are dropped while late but new batches still count.
///
/// Per agent it keeps the current epoch, the highest seq seen in it and a 64-bit window of the seqs just
/// below it, plus the last few epochs it has left behind:
///
/// - a seq above the highest is new (the window slides);
/// - a seq inside the window is new once, then a duplicate;
/// - a seq below the window is a duplicate: too old to tell, and dropping it is the safe side;
/// - a different epoch that is not a retired one starts afresh (the agent restarted; its clock may even have
///   gone back, so "different" rather than "greater");
/// - a retired epoch is a duplicate (a redelivery or replay from an earlier run).
///
/// Memory is bounded: a fixed amount per agent, and at most `maximumAgents` agents; when full, the agent
/// heard from least recently is forgotten.
public struct BatchDeduplicator: Sendable {
    /// How many seqs below the highest are remembered one by one.
    public static let windowSize = 64
    /// How many earlier epochs per agent are remembered and refused.
    public static let retiredEpochLimit = 4

    /// The most agents remembered at once.
    public let maximumAgents: Int

    private struct History {
        var epoch: Int
        var highest: Int
        /// Bit i set: seq `highest - i` was seen.
        var seen: UInt64
        var retiredEpochs: [Int]
        var lastUsed: UInt64
    }

    private var histories: [AgentID: History] = [:]
    private var useCounter: UInt64 = 0

    /// A deduplicator remembering at most `maximumAgents` agents (at least 1).
    public init(maximumAgents: Int = 1024) {
        self.maximumAgents = max(1, maximumAgents)
    }

    /// How many agents are remembered now.
    public var trackedAgentCount: Int { histories.count }

    /// Records a batch and says whether it is new.
    ///
    /// - Returns: nil when the batch is new (and is now remembered), ``RejectionReason/duplicateBatch`` when
    ///   it was seen before or cannot be told apart from one that was.
    public mutating func admit(agent: AgentID, epoch: Int, seq: Int) -> RejectionReason? {
        useCounter &+= 1
        guard var history = histories[agent] else {
            if histories.count >= maximumAgents { evictLeastRecentlyUsed() }
            histories[agent] = History(epoch: epoch, highest: seq, seen: 1, retiredEpochs: [], lastUsed: useCounter)
            return nil
        }
        history.lastUsed = useCounter
        defer { histories[agent] = history }
        if epoch != history.epoch {
            if history.retiredEpochs.contains(epoch) { return .duplicateBatch }
            history.retiredEpochs.append(history.epoch)
            if history.retiredEpochs.count > Self.retiredEpochLimit { history.retiredEpochs.removeFirst() }
            history.epoch = epoch
            history.highest = seq
            history.seen = 1
            return nil
        }
        if seq > history.highest {
            let shift = seq - history.highest
            history.seen = shift >= Self.windowSize ? 1 : (history.seen << UInt64(shift)) | 1
            history.highest = seq
            return nil
        }
        let offset = history.highest - seq
        guard offset < Self.windowSize else { return .duplicateBatch }
        let bit: UInt64 = 1 << UInt64(offset)
        guard history.seen & bit == 0 else { return .duplicateBatch }
        history.seen |= bit
        return nil
    }

    /// Records a decoded batch; see ``admit(agent:epoch:seq:)``.
    public mutating func admit(_ batch: DecodedBatch) -> RejectionReason? {
        admit(agent: batch.agent, epoch: batch.epoch, seq: batch.seq)
    }

    /// Forgets an agent (removed from the map).
    public mutating func forget(_ agent: AgentID) {
        histories[agent] = nil
    }

    private mutating func evictLeastRecentlyUsed() {
        guard let oldest = histories.min(by: { $0.value.lastUsed < $1.value.lastUsed }) else { return }
        histories[oldest.key] = nil
    }
}
