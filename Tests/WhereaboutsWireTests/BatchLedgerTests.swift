import Testing
import WhereaboutsWire

/// The deduplicator's ledger written to bytes and read back, as a locator restart does.
@Suite("Batch ledger")
struct BatchLedgerTests {
    let agent = WireFixtures.agent
    let other = WireFixtures.agentID("hall-2")
    let epoch = 1_764_475_200_123
    let now = 1_764_475_201.0

    /// A ledger that has seen two runs of `agent` (with a gap in the newest) and one of `other`.
    func busyLedger() -> BatchDeduplicator {
        var dedup = BatchDeduplicator()
        for seq in 0..<5 { _ = dedup.admit(agent: agent, epoch: epoch - 60_000, seq: seq, sent: now - 60) }
        for seq in [0, 1, 2, 5, 6] { _ = dedup.admit(agent: agent, epoch: epoch, seq: seq, sent: now) }
        for seq in 0..<3 { _ = dedup.admit(agent: other, epoch: 7_000, seq: seq, sent: now) }
        return dedup
    }

    func reloaded(_ dedup: BatchDeduplicator) throws -> BatchDeduplicator {
        try BatchLedger.decode(BatchLedger.encode(dedup))
    }

    @Test("a batch taken before the save is a duplicate after the load; a fresh one is not")
    func duplicateAcrossRestart() throws {
        var restored = try reloaded(busyLedger())
        #expect(restored.admit(agent: agent, epoch: epoch, seq: 6, sent: now) == .duplicateBatch)
        #expect(restored.admit(agent: agent, epoch: epoch, seq: 0, sent: now) == .duplicateBatch)
        #expect(restored.admit(agent: other, epoch: 7_000, seq: 2, sent: now) == .duplicateBatch)
        #expect(restored.admit(agent: agent, epoch: epoch, seq: 7, sent: now) == nil)
        #expect(restored.admit(agent: other, epoch: 7_000, seq: 3, sent: now) == nil)
        // Without the ledger, the same redelivery would be taken again: the bug this file exists for.
        var empty = BatchDeduplicator()
        #expect(empty.admit(agent: agent, epoch: epoch, seq: 6, sent: now) == nil)
    }

    @Test("the newest epoch and the missing counts survive the round trip")
    func epochsAndMissing() throws {
        let original = busyLedger()
        #expect(original.missing == [agent: 2])
        var restored = try reloaded(original)
        #expect(restored.missing == [agent: 2])
        #expect(restored.agentLedgers == original.agentLedgers)
        // A leftover of the older run, sent before the newest began: superseded, as before the restart.
        #expect(restored.admit(agent: agent, epoch: epoch - 60_000, seq: 9, sent: now - 60) == .supersededEpoch)
        // A late batch fills one of the two gaps; a jump counts new ones from the restored highest seq.
        #expect(restored.admit(agent: agent, epoch: epoch, seq: 3, sent: now) == nil)
        #expect(restored.missing == [agent: 1])
        #expect(restored.admit(agent: agent, epoch: epoch, seq: 9, sent: now) == nil)
        #expect(restored.missing == [agent: 3])
    }

    @Test("consecutive batches are stored as runs: a full agent of in-order batches takes a few dozen bytes")
    func compact() throws {
        var dedup = BatchDeduplicator()
        for seq in 0..<5_000 { _ = dedup.admit(agent: agent, epoch: epoch, seq: seq, sent: now) }
        let bytes = BatchLedger.encode(dedup)
        #expect(bytes.count < 100)
        var restored = try BatchLedger.decode(bytes)
        #expect(restored.admit(agent: agent, epoch: epoch, seq: 4_999, sent: now) == .duplicateBatch)
        #expect(restored.admit(agent: agent, epoch: epoch, seq: 5_000 - BatchDeduplicator.memory, sent: now) != nil)
        // Older than the memory: forgotten before the save as it would have been without it.
        #expect(restored.admit(agent: agent, epoch: epoch, seq: 10, sent: now) == nil)
    }

    @Test("the least recently heard agent is still the first forgotten after a restart")
    func recencySurvives() throws {
        var dedup = BatchDeduplicator(maximumAgents: 2)
        _ = dedup.admit(agent: agent, epoch: 1, seq: 0, sent: now)
        _ = dedup.admit(agent: other, epoch: 1, seq: 0, sent: now)
        _ = dedup.admit(agent: agent, epoch: 1, seq: 1, sent: now)
        var restored = try BatchLedger.decode(BatchLedger.encode(dedup), maximumAgents: 2)
        _ = restored.admit(agent: WireFixtures.agentID("hall-3"), epoch: 1, seq: 0, sent: now)
        #expect(restored.admit(agent: agent, epoch: 1, seq: 1, sent: now) == .duplicateBatch)
        #expect(restored.admit(agent: other, epoch: 1, seq: 0, sent: now) == nil, "hall-2 was forgotten")
        // A reader with smaller bounds keeps the most recently heard agents.
        let smaller = try BatchLedger.decode(BatchLedger.encode(dedup), maximumAgents: 1)
        #expect(smaller.agentLedgers.map(\.agent) == [agent])
    }

    @Test("an empty ledger round-trips")
    func empty() throws {
        let restored = try reloaded(BatchDeduplicator())
        #expect(restored.trackedAgentCount == 0)
    }

    @Test(
        "damaged bytes are an error, never a partial ledger",
        arguments: [
            ([UInt8](), BatchLedger.Error.notALedger),
            (Array("{\"agents\":[]}".utf8), .notALedger),
            (Array("WBLED".utf8), .truncated),
            (Array("WBLEDGR".utf8) + [2, 0, 0, 0, 0, 0, 0, 0, 0], .notALedger),
        ])
    func notLedgers(bytes: [UInt8], error: BatchLedger.Error) {
        #expect(throws: error) { try BatchLedger.decode(bytes) }
    }

    @Test("a ledger cut short, or with any one bit flipped, is refused")
    func damage() {
        let bytes = BatchLedger.encode(busyLedger())
        for length in 0..<bytes.count {
            #expect(throws: BatchLedger.Error.self) { try BatchLedger.decode(Array(bytes.prefix(length))) }
        }
        for index in bytes.indices {
            for bit in 0..<8 {
                var flipped = bytes
                flipped[index] ^= 1 << bit
                #expect(throws: BatchLedger.Error.self) { try BatchLedger.decode(flipped) }
            }
        }
        #expect(throws: BatchLedger.Error.self) { try BatchLedger.decode(bytes + [0]) }
    }

    /// A ledger whose checksum matches: what a hostile writer (not a damaged disk) would make.
    func signed(_ body: [UInt8]) -> [UInt8] {
        var bytes = BatchLedger.header + body
        var crc = CRC32()
        crc.update(bytes)
        for index in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: crc.value >> (8 * UInt32(index)))) }
        return bytes
    }

    func le(_ value: Int, _ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: Int64(value)) >> (8 * UInt64($0))) }
    }

    func agentEntry(
        id: String = "hall-1", newest: Int = 10, highest: Int = 5, missing: Int = 0,
        runs: [(epoch: Int, first: Int, count: Int)]
    ) -> [UInt8] {
        var bytes = [UInt8(id.utf8.count)] + Array(id.utf8) + le(newest, 8) + le(highest, 8) + le(missing, 8)
        bytes += le(runs.count, 4)
        for run in runs { bytes += le(run.epoch, 8) + le(run.first, 8) + le(run.count, 4) }
        return bytes
    }

    @Test("a hostile ledger with a good checksum is refused by its content, with the reason")
    func hostile() throws {
        // Well formed: the helpers make what the encoder makes.
        var fine = try BatchLedger.decode(signed(le(1, 4) + agentEntry(runs: [(10, 0, 3)])))
        #expect(fine.admit(agent: agent, epoch: 10, seq: 2, sent: now) == .duplicateBatch)
        let cases: [[UInt8]] = [
            le(2_000, 4),  // more agents than a ledger holds
            le(2, 4) + agentEntry(runs: []),  // fewer agents than it says
            le(1, 4) + agentEntry(id: "../../etc", runs: []),  // not an agent id
            le(2, 4) + agentEntry(runs: []) + agentEntry(runs: []),  // an agent twice
            le(1, 4) + agentEntry(missing: -1, runs: []),
            le(1, 4) + agentEntry(runs: [(10, 0, 0)]),  // an empty run
            le(1, 4) + agentEntry(runs: [(10, 0, 1 << 31)]),  // a run past the memory
            le(1, 4) + agentEntry(runs: [(10, 0, 600), (10, 1_000, 600)]),  // runs past the memory together
            le(1, 4) + agentEntry(runs: [(10, 0, 3), (10, 2, 1)]),  // a batch twice
            le(1, 4) + agentEntry(runs: [(11, 0, 1)]),  // after the newest epoch
            le(1, 4) + agentEntry(runs: [(10, Int.max, 2)]),  // seqs past Int.max
            // Numbers the deduplicator's arithmetic would trap on at the next batch, at every start.
            le(1, 4) + agentEntry(highest: Int.min, runs: []),
            le(1, 4) + agentEntry(newest: -1, runs: []),
            le(1, 4) + agentEntry(newest: 1 << 60, runs: []),
            le(1, 4) + agentEntry(missing: Int.max, runs: []),
            le(1, 4) + agentEntry(runs: [(-5, 0, 1)]),
            le(1, 4) + agentEntry(newest: 1 << 60, runs: [(1 << 55, 0, 1)]),
            le(1, 4) + agentEntry(runs: [(10, (1 << 53) - 1, 3)]),  // seqs past the wire's largest
            le(1, 4) + agentEntry(runs: []) + [0],  // bytes after the last agent
            le(1, 4) + Array(agentEntry(runs: []).prefix(30)),  // cut inside an agent
        ]
        for body in cases {
            #expect(throws: BatchLedger.Error.self) { try BatchLedger.decode(signed(body)) }
        }
        // 2,000 agents of a few bytes each fit the size bound; each could have listed 1,024 batches.
        var many = le(2_000, 4)
        for index in 0..<2_000 { many += agentEntry(id: "a\(index)", runs: [(10, 0, 1)]) }
        #expect(throws: BatchLedger.Error.self) { try BatchLedger.decode(signed(many)) }
        let tooLarge = [UInt8](repeating: 0, count: BatchLedger.maximumSize(maximumAgents: 1) + 1)
        #expect(throws: BatchLedger.Error.tooLarge(tooLarge.count)) {
            try BatchLedger.decode(tooLarge, maximumAgents: 1)
        }
    }

    @Test("random bytes, with or without the header and a good checksum, never crash the reader")
    func randomBytes() {
        var generator = SplitMix64(seed: 0x1ed9e7)
        for round in 0..<2_000 {
            let count = Int.random(in: 0..<200, using: &generator)
            let body = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let bytes = round.isMultiple(of: 2) ? signed(body) : body
            _ = try? BatchLedger.decode(bytes)
        }
    }
}
