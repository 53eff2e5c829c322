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

    @Test("a seq jump larger than the agent's clock allows is a jump, not missing batches; a loss over time is counted")
    func jumpsAreNotLosses() {
        var dedup = BatchDeduplicator()
        for seq in 0..<10 { _ = dedup.admit(agent: agent, epoch: epoch, seq: seq, sent: now + Double(seq)) }
        // An account that forges its agent's seq +1,000 a second after the last: before, "1000 batches missing".
        #expect(dedup.admit(agent: agent, epoch: epoch, seq: 1009, sent: now + 10) == nil)
        #expect(dedup.missing[agent] == nil)
        #expect(dedup.jumps[agent]?.count == 1)
        #expect(dedup.jumps[agent]?.last == BatchDeduplicator.Jump(from: 9, to: 1009, seconds: 1))
        // The agent's own batches count on from where they were: its next gap is counted.
        _ = dedup.admit(agent: agent, epoch: epoch, seq: 10, sent: now + 10)
        _ = dedup.admit(agent: agent, epoch: epoch, seq: 13, sent: now + 13)
        #expect(dedup.missing[agent] == 2)
        // A broker that lost 1,000 batches of one-second windows: the clock moved 1,001 s, and they are counted.
        _ = dedup.admit(agent: agent, epoch: epoch, seq: 1014, sent: now + 1014)
        #expect(dedup.missing[agent] == 1002)
        #expect(dedup.jumps[agent]?.count == 1)
        // A new run's first seq is judged from its start, its epoch.
        let later = epoch + 2_000_000
        _ = dedup.admit(agent: agent, epoch: later, seq: 5000, sent: Double(later) / 1000 + 3)
        #expect(dedup.missing[agent] == 1002 && dedup.jumps[agent]?.count == 2)
    }

    @Test("a run that began while the locator watched counts its first batches missing; one that began before does not")
    func runStart() {
        var dedup = BatchDeduplicator()
        dedup.watching(since: now - 100)
        // Began before the locator watched (a restarted locator): batches 0..<40 were taken by its last run, or not.
        let before = AgentID("before")!
        _ = dedup.admit(agent: before, epoch: Int((now - 200) * 1000), seq: 40, sent: now)
        #expect(dedup.missing[before] == nil)
        // Began since: its first 12 batches never came (a broker crash lost them).
        let since = AgentID("since")!
        _ = dedup.admit(agent: since, epoch: Int((now - 20) * 1000), seq: 12, sent: now)
        #expect(dedup.missing[since] == 12)
        _ = dedup.admit(agent: since, epoch: Int((now - 20) * 1000), seq: 13, sent: now + 1)
        #expect(dedup.missing[since] == 12)
    }

    @Test("the journal of batches taken, replayed over the ledger saved before it, gives the ledger as it ended")
    func journalReplay() throws {
        var dedup = BatchDeduplicator()
        dedup.recordsAdmissions = true
        for seq in [0, 1, 2, 5] { _ = dedup.admit(agent: agent, epoch: epoch, seq: seq, sent: now + Double(seq)) }
        let saved = BatchLedger.encode(dedup)
        _ = dedup.takeAdmissions()
        for seq in [6, 9, 10] { _ = dedup.admit(agent: agent, epoch: epoch, seq: seq, sent: now + Double(seq)) }
        _ = dedup.admit(agent: agent, epoch: epoch, seq: 6, sent: now + 6)  // a duplicate is not journaled
        var journal = BatchLedger.journalLines(dedup.takeAdmissions())
        #expect(String(decoding: journal, as: UTF8.self).split(separator: "\n").count == 3)
        journal += Array("west 17 11 1.5".utf8)  // a torn last line, cut by the kill
        var restored = try BatchLedger.decode(saved)
        restored.replay(BatchLedger.journal(journal))
        #expect(restored.missing == dedup.missing && restored.missing[agent] == 4)
        #expect(restored.admit(agent: agent, epoch: epoch, seq: 10, sent: now + 10) == .duplicateBatch)
        #expect(restored.admit(agent: agent, epoch: epoch, seq: 11, sent: now + 11) == nil)
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
