import Testing
import WhereaboutsWire

@Suite("Batch deduplicator")
struct BatchDeduplicatorTests {
    let agent = WireFixtures.agent
    let epoch = 1_764_475_200_123
    let now = 1_764_475_201.0

    @Test("refuses a batch redelivered after a reconnect")
    func duplicateAfterReconnect() {
        var dedup = BatchDeduplicator()
        for seq in 0..<10 { #expect(dedup.admit(agent: agent, epoch: 100, seq: seq, sent: 1) == nil) }
        // QoS 1 redelivers the in-flight batches 7...9 after the reconnect, then new ones follow.
        for seq in 7..<10 { #expect(dedup.admit(agent: agent, epoch: 100, seq: seq, sent: 1) == .duplicateBatch) }
        #expect(dedup.admit(agent: agent, epoch: 100, seq: 10, sent: 1) == nil)
    }

    @Test("accepts new seqs that arrive out of order, once")
    func outOfOrder() {
        var dedup = BatchDeduplicator()
        for seq in [0, 1, 2, 3, 10, 5, 9, 4] { #expect(dedup.admit(agent: agent, epoch: 1, seq: seq, sent: 1) == nil) }
        #expect(dedup.admit(agent: agent, epoch: 1, seq: 5, sent: 1) == .duplicateBatch)
        #expect(dedup.admit(agent: agent, epoch: 1, seq: 10, sent: 1) == .duplicateBatch)
        #expect(dedup.admit(agent: agent, epoch: 1, seq: 6, sent: 1) == nil)
    }

    @Test("a seq jumped to 2^53 or by 1,000 does not make the agent's next batches look old")
    func seqJumps() {
        var dedup = BatchDeduplicator()
        for seq in 0..<10 { #expect(dedup.admit(agent: agent, epoch: epoch, seq: seq, sent: now) == nil) }
        #expect(dedup.admit(agent: agent, epoch: epoch, seq: 1 << 53, sent: now) == nil)
        #expect(dedup.admit(agent: agent, epoch: epoch, seq: 1010, sent: now) == nil)
        var accepted = 0
        for seq in 10..<60 where dedup.admit(agent: agent, epoch: epoch, seq: seq, sent: now) == nil { accepted += 1 }
        #expect(accepted == 50)
        #expect(dedup.admit(agent: agent, epoch: epoch, seq: 1 << 53, sent: now) == .duplicateBatch)
    }

    @Test("a newer epoch supersedes the older ones for good, but a bogus newer epoch cannot silence the real run")
    func newerEpochSupersedes() {
        var dedup = BatchDeduplicator()
        // Run A, then the agent restarts as run B (an hour later).
        for seq in 0..<5 { #expect(dedup.admit(agent: agent, epoch: epoch, seq: seq, sent: now + Double(seq)) == nil) }
        let restart = epoch + 3_600_000
        #expect(dedup.admit(agent: agent, epoch: restart, seq: 0, sent: now + 3600) == nil)
        // Run A's leftovers, redelivered late or replayed, are refused however many epochs come after.
        #expect(dedup.admit(agent: agent, epoch: epoch, seq: 5, sent: now + 5) == .supersededEpoch)
        for n in 1...6 {
            let started = restart + n * 60_000
            #expect(dedup.admit(agent: agent, epoch: started, seq: 0, sent: Double(started) / 1000 + 1) == nil)
        }
        #expect(dedup.admit(agent: agent, epoch: epoch, seq: 6, sent: now + 6) == .supersededEpoch)
        #expect(dedup.admit(agent: agent, epoch: restart, seq: 1, sent: now + 3601) == .supersededEpoch)
        // A hostile batch claims a newer epoch; the real run (started before it, sending now) goes on.
        let real = restart + 6 * 60_000
        let sending = Double(real) / 1000 + 30
        #expect(dedup.admit(agent: agent, epoch: real + 20_000, seq: 0, sent: sending) == nil)
        var accepted = 0
        for seq in 1...50 where dedup.admit(agent: agent, epoch: real, seq: seq, sent: sending + Double(seq)) == nil {
            accepted += 1
        }
        #expect(accepted == 50)
    }

    @Test("counts the seqs of the newest run that never came, and takes one back when it comes late")
    func gaps() {
        var dedup = BatchDeduplicator()
        for seq in [0, 1, 2, 5, 6, 9] { #expect(dedup.admit(agent: agent, epoch: epoch, seq: seq, sent: now) == nil) }
        #expect(dedup.missing[agent] == 4)
        #expect(dedup.admit(agent: agent, epoch: epoch, seq: 3, sent: now) == nil)
        #expect(dedup.missing[agent] == 3)
        // A new run whose first batch is seq 2 lost batches 0 and 1.
        #expect(dedup.admit(agent: agent, epoch: epoch + 60_000, seq: 2, sent: now + 60) == nil)
        #expect(dedup.missing[agent] == 5)
        // A jump beyond a day of windows is not believed as a gap.
        #expect(dedup.admit(agent: agent, epoch: epoch + 60_000, seq: 1 << 53, sent: now + 60) == nil)
        #expect(dedup.missing[agent] == 5)
    }

    @Test("remembers a bounded number of batches per agent")
    func boundedMemory() {
        var dedup = BatchDeduplicator()
        for seq in 0..<(BatchDeduplicator.memory + 10) {
            #expect(dedup.admit(agent: agent, epoch: epoch, seq: seq, sent: now) == nil)
        }
        // The oldest are forgotten (their readings are too old by now); the recent ones are still refused.
        #expect(dedup.admit(agent: agent, epoch: epoch, seq: 0, sent: now) == nil)
        #expect(dedup.admit(agent: agent, epoch: epoch, seq: BatchDeduplicator.memory, sent: now) == .duplicateBatch)
    }

    @Test("keeps agents apart")
    func agentsApart() {
        var dedup = BatchDeduplicator()
        let other = WireFixtures.agentID("hall-2")
        #expect(dedup.admit(agent: agent, epoch: 1, seq: 0, sent: 1) == nil)
        #expect(dedup.admit(agent: other, epoch: 1, seq: 0, sent: 1) == nil)
        #expect(dedup.admit(agent: other, epoch: 1, seq: 0, sent: 1) == .duplicateBatch)
    }

    @Test("bounds the number of agents, forgetting the least recently heard")
    func boundedAgents() {
        var dedup = BatchDeduplicator(maximumAgents: 8)
        let keeper = WireFixtures.agentID("keeper")
        #expect(dedup.admit(agent: keeper, epoch: 1, seq: 0, sent: 1) == nil)
        for index in 0..<1000 {
            #expect(dedup.admit(agent: WireFixtures.agentID("a\(index)"), epoch: 1, seq: 0, sent: 1) == nil)
            #expect(dedup.admit(agent: keeper, epoch: 1, seq: index + 1, sent: 1) == nil)
            #expect(dedup.trackedAgentCount <= 8)
        }
        // The keeper, heard all along, is still remembered; an early agent was forgotten.
        #expect(dedup.admit(agent: keeper, epoch: 1, seq: 1000, sent: 1) == .duplicateBatch)
        #expect(dedup.admit(agent: WireFixtures.agentID("a0"), epoch: 1, seq: 0, sent: 1) == nil)
        dedup.forget(keeper)
        #expect(dedup.admit(agent: keeper, epoch: 1, seq: 1000, sent: 1) == nil)
    }

    @Test("admits decoded batches by their agent, epoch and seq")
    func admitsDecodedBatches() throws {
        var dedup = BatchDeduplicator()
        let batch = try #require(WireFixtures.decode(WireFixtures.sampleBatch.payload).batch)
        #expect(dedup.admit(batch) == nil)
        #expect(dedup.admit(batch) == .duplicateBatch)
    }
}
