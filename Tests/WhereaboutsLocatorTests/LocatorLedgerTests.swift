import Testing
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsSession
import WhereaboutsWire

/// The batch ledger across a locator restart: what one run took, the next drops; and when the service saves it.
@Suite("Locator batch ledger")
struct LocatorLedgerTests {
    let start = 1_764_000_000.0

    @Test("a pipeline restored from the last run's ledger drops the batches that run took, and takes fresh ones")
    func restart() throws {
        var first = try PipelineHarness(configuration: recording)
        let taken = first.batches(tag: try alice(), at: Point(x: 5, y: 4), floor: 1, time: start)
        for (topic, payload) in taken {
            first.perform(first.pipeline.receive(topic: topic, payload: payload, now: start))
        }
        #expect(first.pipeline.counters.rejected.isEmpty)
        let recorded = first.records.count
        #expect(recorded > 0)

        var second = try PipelineHarness(configuration: recording)
        try second.pipeline.restoreLedger(first.pipeline.ledger)
        #expect(second.pipeline.ledgerAgentCount == first.pipeline.ledgerAgentCount)
        // The broker delivers the batches again (their acknowledgements never reached it): none is taken twice.
        for (topic, payload) in taken {
            second.perform(second.pipeline.receive(topic: topic, payload: payload, now: start + 1))
        }
        #expect(second.pipeline.counters.rejected[.duplicateBatch] == taken.count)
        #expect(second.records.isEmpty)
        // The agents' next batches are taken.
        second.sequence = first.sequence
        for (topic, payload) in second.batches(tag: try alice(), at: Point(x: 5, y: 4), floor: 1, time: start + 1) {
            second.perform(second.pipeline.receive(topic: topic, payload: payload, now: start + 1))
        }
        #expect(second.records.count == recorded)
        #expect(second.pipeline.counters.rejected[.duplicateBatch] == taken.count)
    }

    @Test("after a kill between two saves, the ledger and its journal make the next run count only the batches lost")
    func killBetweenSaves() throws {
        var first = try PipelineHarness(configuration: recording)
        first.pipeline.journalsLedger()
        var saved: [UInt8] = []
        var journal: [UInt8] = []
        // Batches every second for 20 s; the ledger saved at 5 s (the journal starts again then); killed at 19 s.
        for second in 0..<20 {
            let now = start + Double(second)
            for (topic, payload) in first.batches(tag: try alice(), at: Point(x: 5, y: 4), floor: 1, time: now) {
                first.perform(first.pipeline.receive(topic: topic, payload: payload, now: now))
                journal += first.pipeline.takeLedgerJournal()
            }
            if second == 5 {
                saved = first.pipeline.ledger
                journal = []
            }
        }
        let agents = first.pipeline.ledgerAgentCount
        #expect(agents > 1)
        // The batches of 20 s and 21 s were in its inbox at the kill: acknowledged to the broker, never taken.
        for second in 20..<22 {
            _ = first.batches(tag: try alice(), at: Point(x: 5, y: 4), floor: 1, time: start + Double(second))
        }
        func restarted(journal: [UInt8]?) throws -> PipelineHarness {
            var next = try PipelineHarness(configuration: recording)
            try next.pipeline.restoreLedger(saved)
            if let journal { #expect(next.pipeline.replayLedgerJournal(journal) == 14 * agents) }
            next.sequence = first.sequence
            let now = start + 22
            for (topic, payload) in next.batches(tag: try alice(), at: Point(x: 5, y: 4), floor: 1, time: now) {
                next.perform(next.pipeline.receive(topic: topic, payload: payload, now: now))
            }
            next.perform(next.pipeline.tick(now: now + 1))
            return next
        }
        let next = try restarted(journal: journal)
        #expect(next.pipeline.metrics(now: start + 23).batchesMissing == 2 * agents, "the two lost, each agent")
        #expect(
            next.logs.contains {
                $0.hasSuffix(": 2 batches missing (gaps in its seqs) since the last report, 2 in all")
            })
        // The ledger alone, 14 s old: the batches the killed run took after it count as missing too.
        let stale = try restarted(journal: nil)
        #expect(stale.pipeline.metrics(now: start + 23).batchesMissing == 16 * agents)
    }

    var recording: LocatorPipeline.Configuration {
        var configuration = LocatorPipeline.Configuration()
        configuration.recordsReadings = true
        return configuration
    }

    @Test("a corrupt ledger changes nothing and says why")
    func corrupt() throws {
        var first = try PipelineHarness(configuration: recording)
        let taken = first.batches(tag: try alice(), at: Point(x: 5, y: 4), floor: 1, time: start)
        for (topic, payload) in taken {
            first.perform(first.pipeline.receive(topic: topic, payload: payload, now: start))
        }
        var damaged = first.pipeline.ledger
        damaged[damaged.count / 2] ^= 0x40
        var second = try PipelineHarness(configuration: recording)
        #expect(throws: BatchLedger.Error.checksumMismatch) { try second.pipeline.restoreLedger(damaged) }
        #expect(throws: BatchLedger.Error.notALedger) { try second.pipeline.restoreLedger(Array("{}".utf8)) }
        #expect(second.pipeline.ledgerAgentCount == 0)
        for (topic, payload) in taken {
            second.perform(second.pipeline.receive(topic: topic, payload: payload, now: start + 1))
        }
        #expect(second.pipeline.counters.rejected.isEmpty)
    }

    func ledgerSaves(_ commands: [ServiceState<LocatorService>.Command]) -> [[UInt8]] {
        commands.compactMap {
            guard case .effect(.saveLedger(let bytes)) = $0 else { return nil }
            return bytes
        }
    }

    @Test("the service hands the ledger over at most every interval, and only when it changed")
    func periodicSave() throws {
        var harness = try LocatorServiceHarness()
        harness.state = ServiceState(
            pipeline: LocatorService(pipeline: harness.batches.pipeline, updateInterval: 0.02, ledgerInterval: 5))
        harness.connect(at: ServiceTime(now: start, monotonic: 0))
        func tick(_ second: Double) -> [[UInt8]] {
            let time = ServiceTime(now: start + second, monotonic: second)
            return ledgerSaves(harness.state.tick(at: time))
        }
        #expect(tick(0.5).isEmpty, "nothing taken yet: nothing to save")
        var saves: [[UInt8]] = []
        for second in 1..<12 {
            let now = start + Double(second)
            for (topic, payload) in harness.batches.batches(
                tag: try alice(), at: Point(x: 5, y: 4), floor: 1, time: now)
            {
                let time = ServiceTime(now: now, monotonic: Double(second))
                saves += ledgerSaves(harness.state.receive(topic: topic, payload: payload, at: time))
            }
            saves += tick(Double(second) + 0.5)
        }
        // Batches every second from 1 to 11: saved at the first tick after them (1.5 s), then every 5 s (6.5, 11.5).
        #expect(saves.count == 3)
        let last = try #require(saves.last)
        #expect(try BatchLedger.decode(last).trackedAgentCount == harness.state.pipeline.pipeline.ledgerAgentCount)
        #expect(tick(12).isEmpty, "nothing new since the save at 11.5 s")
        let late = ServiceTime(now: start + 13, monotonic: 13)
        for (topic, payload) in harness.batches.batches(
            tag: try alice(), at: Point(x: 5, y: 4), floor: 1, time: start + 13)
        {
            #expect(ledgerSaves(harness.state.receive(topic: topic, payload: payload, at: late)).isEmpty)
        }
        #expect(tick(14).isEmpty, "changed, but within 5 s of the last save")
        #expect(tick(16.5).count == 1, "the batches since the last save, 5 s after it")
        #expect(tick(40).isEmpty, "nothing new since")
        // No interval: never saved while running (the shell saves at the stop).
        var plain = try LocatorServiceHarness()
        plain.connect(at: ServiceTime(now: start, monotonic: 0))
        var plainSaves: [[UInt8]] = []
        for (topic, payload) in plain.batches.batches(tag: try alice(), at: Point(x: 5, y: 4), floor: 1, time: start) {
            let time = ServiceTime(now: start, monotonic: 0)
            plainSaves += ledgerSaves(plain.state.receive(topic: topic, payload: payload, at: time))
        }
        let time = ServiceTime(now: start + 10, monotonic: 10)
        plainSaves += ledgerSaves(plain.state.tick(at: time))
        #expect(plainSaves.isEmpty)
        #expect(plain.state.pipeline.pipeline.ledgerAgentCount > 0)
    }
}
