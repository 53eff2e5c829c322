import Testing
import WhereaboutsWire

@Suite("Batch deduplicator")
struct BatchDeduplicatorTests {
    let agent = WireFixtures.agent

    @Test("refuses a batch redelivered after a reconnect")
    func duplicateAfterReconnect() {
        var dedup = BatchDeduplicator()
        for seq in 0..<10 { #expect(dedup.admit(agent: agent, epoch: 100, seq: seq) == nil) }
        // QoS 1 redelivers the in-flight batches 7...9 after the reconnect, then new ones follow.
        for seq in 7..<10 { #expect(dedup.admit(agent: agent, epoch: 100, seq: seq) == .duplicateBatch) }
        #expect(dedup.admit(agent: agent, epoch: 100, seq: 10) == nil)
    }

    @Test("accepts new seqs that arrive out of order within the window, once")
    func outOfOrderWithinWindow() {
        var dedup = BatchDeduplicator()
        for seq in [0, 1, 2, 3, 10, 5, 9, 4] { #expect(dedup.admit(agent: agent, epoch: 1, seq: seq) == nil) }
        #expect(dedup.admit(agent: agent, epoch: 1, seq: 5) == .duplicateBatch)
        #expect(dedup.admit(agent: agent, epoch: 1, seq: 10) == .duplicateBatch)
        #expect(dedup.admit(agent: agent, epoch: 1, seq: 6) == nil)
    }

    @Test("treats seqs below the window as duplicates, being too old to tell")
    func belowWindow() {
        var dedup = BatchDeduplicator()
        #expect(dedup.admit(agent: agent, epoch: 1, seq: 1000) == nil)
        #expect(dedup.admit(agent: agent, epoch: 1, seq: 1000 - BatchDeduplicator.windowSize + 1) == nil)
        #expect(dedup.admit(agent: agent, epoch: 1, seq: 1000 - BatchDeduplicator.windowSize) == .duplicateBatch)
        // A jump wider than the window forgets the window.
        #expect(dedup.admit(agent: agent, epoch: 1, seq: 5000) == nil)
        #expect(dedup.admit(agent: agent, epoch: 1, seq: 4999) == nil)
    }

    @Test("starts afresh on a new epoch, even an earlier one, and refuses retired epochs")
    func newEpoch() {
        var dedup = BatchDeduplicator()
        #expect(dedup.admit(agent: agent, epoch: 2000, seq: 50) == nil)
        #expect(dedup.admit(agent: agent, epoch: 3000, seq: 0) == nil)
        #expect(dedup.admit(agent: agent, epoch: 3000, seq: 0) == .duplicateBatch)
        // A late batch of the previous run is a replay.
        #expect(dedup.admit(agent: agent, epoch: 2000, seq: 51) == .duplicateBatch)
        // A restart whose clock went back still gets through.
        #expect(dedup.admit(agent: agent, epoch: 5, seq: 0) == nil)
        #expect(dedup.admit(agent: agent, epoch: 5, seq: 1) == nil)
    }

    @Test("remembers a bounded number of retired epochs")
    func retiredEpochsBounded() {
        var dedup = BatchDeduplicator()
        let epochs = Array(1...(BatchDeduplicator.retiredEpochLimit + 2))
        for epoch in epochs { #expect(dedup.admit(agent: agent, epoch: epoch, seq: 0) == nil) }
        // The oldest retired epoch has been forgotten; the newer retired ones are still refused.
        #expect(dedup.admit(agent: agent, epoch: epochs[0], seq: 0) == nil)
        #expect(dedup.admit(agent: agent, epoch: epochs[epochs.count - 2], seq: 1) == .duplicateBatch)
    }

    @Test("keeps agents apart")
    func agentsApart() {
        var dedup = BatchDeduplicator()
        let other = WireFixtures.agentID("hall-2")
        #expect(dedup.admit(agent: agent, epoch: 1, seq: 0) == nil)
        #expect(dedup.admit(agent: other, epoch: 1, seq: 0) == nil)
        #expect(dedup.admit(agent: other, epoch: 1, seq: 0) == .duplicateBatch)
    }

    @Test("bounds the number of agents, forgetting the least recently heard")
    func boundedAgents() {
        var dedup = BatchDeduplicator(maximumAgents: 8)
        let keeper = WireFixtures.agentID("keeper")
        #expect(dedup.admit(agent: keeper, epoch: 1, seq: 0) == nil)
        for index in 0..<1000 {
            #expect(dedup.admit(agent: WireFixtures.agentID("a\(index)"), epoch: 1, seq: 0) == nil)
            #expect(dedup.admit(agent: keeper, epoch: 1, seq: index + 1) == nil)
            #expect(dedup.trackedAgentCount <= 8)
        }
        // The keeper, heard all along, is still remembered; an early agent was forgotten.
        #expect(dedup.admit(agent: keeper, epoch: 1, seq: 1000) == .duplicateBatch)
        #expect(dedup.admit(agent: WireFixtures.agentID("a0"), epoch: 1, seq: 0) == nil)
        dedup.forget(keeper)
        #expect(dedup.admit(agent: keeper, epoch: 1, seq: 1000) == nil)
    }

    @Test("admits decoded batches by their agent, epoch and seq")
    func admitsDecodedBatches() throws {
        var dedup = BatchDeduplicator()
        let batch = try #require(WireFixtures.decode(WireFixtures.sampleBatch.payload).batch)
        #expect(dedup.admit(batch) == nil)
        #expect(dedup.admit(batch) == .duplicateBatch)
    }
}
