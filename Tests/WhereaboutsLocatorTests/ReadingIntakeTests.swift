import TestFixtures
import Testing
import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

@testable import WhereaboutsLocator

@Suite("Reading intake")
struct ReadingIntakeTests {
    let start = 1_764_000_000.0

    struct Parts {
        var engine: LocatorEngine
        var calibration: LocatorCalibration
        var monitor = LocatorMonitor(metricsInterval: 10, maximumTags: 100)
        var actions: [ServiceAction<LocatorEffect>] = []

        init(_ map: FloorMap) {
            engine = LocatorEngine(map: map)
            calibration = LocatorCalibration(map: map)
        }
    }

    func batch(agent: AgentID, seq: Int, time: Double) throws -> [UInt8] {
        let reading = ReadingBatch.Reading(tag: try alice(), time: time, rssi: -60, count: 5, variance: 4, power: -59)
        return Array(ReadingBatch(agent: agent, epoch: 1, seq: seq, sent: time, readings: [reading]).payload.utf8)
    }

    @Test("a batch is taken once: the same (agent, epoch, seq) again is refused as a duplicate and counted")
    func duplicates() throws {
        let map = try PipelineHarness().map
        var intake = ReadingIntake(limits: .init(), tolerance: .init(), recordsReadings: true)
        var parts = Parts(map)
        let agent = try #require(AgentID("g-lobby"))
        let payload = try batch(agent: agent, seq: 0, time: start)
        for _ in 0..<2 {
            _ = intake.take(
                intake.decode(payload, agent: agent, map: map, now: start), agent: agent, map: map, now: start,
                engine: &parts.engine, calibration: &parts.calibration, monitor: &parts.monitor,
                actions: &parts.actions)
        }
        #expect(parts.monitor.counters.batches == 2)
        #expect(parts.monitor.counters.accepted == 1)
        #expect(parts.monitor.counters.rejected == [.duplicateBatch: 1])
        let records = parts.actions.filter { if case .record = $0 { true } else { false } }
        #expect(records.count == 1, "the recording keeps what passed the wire checks, once")
        #expect(intake.deduplicator.revision > 0)
    }

    @Test("a batch prepared under an earlier map is decoded again; one prepared under this map is retimed")
    func preparedUnderAnotherMap() throws {
        let map = try PipelineHarness().map
        var intake = ReadingIntake(limits: .init(), tolerance: .init(), recordsReadings: false)
        let topics = Topics(site: map.site.uuid)
        let agent = try #require(AgentID("g-lobby"))
        let prepare = intake.preparation(map: map, share: nil, topics: topics)
        let prepared = try #require(
            prepare(topics.readings(agent: agent).name, try batch(agent: agent, seq: 0, time: start), start))
        #expect(prepare(topics.events.name, [], start) == nil, "only readings are prepared")
        #expect(intake.retimed(prepared, now: start + 1) != nil)
        intake.mapReplaced()
        #expect(intake.retimed(prepared, now: start + 1) == nil)
    }

    @Test("a recorded reading of an agent whose floor the share does not hear is counted, not taken")
    func recordedOtherFloor() throws {
        let map = try FloorShareTests.fiveFloors()
        let share = try FloorShare(map: map, floors: [1], margin: 1)
        let far = try #require(map.agents.first { !share.hears(floor: $0.floor) })
        let near = try #require(map.agents.first { $0.floor == 1 })
        let intake = ReadingIntake(limits: .init(), tolerance: .init(), recordsReadings: false)
        var parts = Parts(map)
        for agent in [far, near] {
            let reading = RecordedReading(
                ReadingBatch.Reading(tag: try alice(), time: start, rssi: -60, count: 5, variance: 4, power: -59),
                agent: try #require(AgentID(agent.id)))
            _ = intake.take(
                reading, map: map, share: share, now: start, engine: &parts.engine, calibration: &parts.calibration,
                monitor: &parts.monitor, actions: &parts.actions)
        }
        #expect(parts.monitor.counters.otherFloors == 1)
        #expect(parts.monitor.counters.accepted + parts.monitor.counters.rejected.values.reduce(0, +) == 1)
    }
}
