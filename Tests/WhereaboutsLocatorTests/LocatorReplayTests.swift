import TestFixtures
import Testing
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsSession
import WhereaboutsSimulation
import WhereaboutsWire

@Suite("Locator replay", .ownThread)
struct LocatorReplayTests {
    static func simulated() throws -> (map: FloorMap, readings: [RecordedReading]) {
        let map = try scenarioMap("walled-rooms")
        var configuration = SimulationConfiguration()
        configuration.tagCount = 3
        configuration.duration = 120
        let text = try simulatedReadings(map: map, configuration: configuration, seed: 8)
        return (map, try cleanRecords(text, as: RecordedReading.self))
    }

    /// The proof that replay is the live locator: the same batches, as payloads on the readings topics, through
    /// `receive(topic:payload:now:)` and ticks with recording on, then the recording through ``LocatorReplay``.
    /// Both with every estimate published (replay's default) and with the live publish policy.
    @Test(
        "batches fed to the live pipeline and its recording replayed give byte-identical positions and events",
        arguments: ["walled-rooms", "two-floors"], [0, 0.1])
    func liveAndReplayAgree(scenario: String, minimumMove: Double) throws {
        let map = try scenarioMap(scenario)
        var simulation = SimulationConfiguration()
        simulation.tagCount = 4
        simulation.duration = 180
        let windows = try simulatedWindows(map: map, configuration: simulation, seed: 5)
        // The live locator as its shell drives it: every batch payload on its readings topic, then a tick.
        var configuration = LocatorReplay.defaultConfiguration
        configuration.positionMinimumMove = minimumMove
        configuration.recordsReadings = true
        var live = LocatorPipeline(map: map, configuration: configuration)
        var liveOutput = LocatorReplay.Output()
        var recording = ""
        var sequences: [AgentID: Int] = [:]
        for window in windows {
            var actions: [ServiceAction<LocatorEffect>] = []
            for batch in window.batches {
                let seq = sequences[batch.agent, default: 0]
                sequences[batch.agent] = seq + 1
                let payload = ReadingBatch(
                    agent: batch.agent, epoch: 1, seq: seq, sent: window.end, readings: batch.readings
                ).payload
                actions += live.receive(
                    topic: live.topics.readings(agent: batch.agent).name, payload: Array(payload.utf8),
                    now: window.end)
            }
            actions += live.tick(now: window.end)
            for case .record(let line) in actions { recording += line }
            liveOutput.collect(actions, topics: live.topics)
        }
        let readings = try cleanRecords(recording, as: RecordedReading.self)
        configuration.recordsReadings = false
        let (replayed, replay) = LocatorReplay.run(map: map, readings: readings, configuration: configuration)
        #expect(!liveOutput.positions.isEmpty)
        #expect(!liveOutput.events.isEmpty)
        #expect(replay.counters.accepted == live.counters.accepted)
        #expect(JSONLines.encode(replayed.positions) == JSONLines.encode(liveOutput.positions))
        #expect(JSONLines.encode(replayed.events) == JSONLines.encode(liveOutput.events))
    }

    @Test("the same readings give byte-identical positions and events, whatever their order in the file")
    func byteIdentical() throws {
        let (map, readings) = try Self.simulated()
        let first = LocatorReplay.run(map: map, readings: readings)
        let second = LocatorReplay.run(map: map, readings: readings)
        let positions = JSONLines.encode(first.output.positions)
        #expect(!first.output.positions.isEmpty)
        #expect(!first.output.events.isEmpty)
        #expect(positions == JSONLines.encode(second.output.positions))
        #expect(JSONLines.encode(first.output.events) == JSONLines.encode(second.output.events))
        // Readings of one time from different agents may come in any order; replay sorts by time only, so
        // shuffling whole windows' agents gives the same engine input per update.
        var generator = SplitMix64(seed: 1)
        let shuffledWindows = Dictionary(grouping: readings, by: \.time).sorted { $0.key < $1.key }
            .flatMap { $0.value.shuffled(using: &generator) }
        let shuffled = LocatorReplay.run(map: map, readings: shuffledWindows)
        let byTimeAndTag = { (a: PositionRecord, b: PositionRecord) in (a.time, a.tag) < (b.time, b.tag) }
        #expect(shuffled.output.positions.sorted(by: byTimeAndTag) == first.output.positions.sorted(by: byTimeAndTag))
        #expect(first.replay.counters.accepted == readings.count)
    }

    @Test("ticks fall every interval of recording time, see the readings stamped up to them, and publish as live")
    func cadence() throws {
        let (map, readings) = try Self.simulated()
        let (output, replay) = LocatorReplay.run(map: map, readings: readings, interval: 2)
        let times = Set(output.positions.map(\.time))
        // Ticks fall on whole multiples of the interval, as a live timer's would.
        #expect(times.allSatisfy { $0.truncatingRemainder(dividingBy: 2) == 0 })
        // Windows end on whole seconds from start + 1 to start + 120; start is even, so ticks fall at
        // start + 2, start + 4, … start + 120, each seeing two windows.
        #expect(replay.updates == 60)
        #expect(times.count == 60)
        // The live publish policy: at most one position per tag and tick, and none held back past the heartbeat.
        #expect(output.positions.count <= 3 * 60)
        let heartbeat = LocatorReplay.defaultConfiguration.positionHeartbeat
        for tag in Set(output.positions.map(\.tag)) {
            let tagTimes = output.positions.filter { $0.tag == tag }.map(\.time)
            #expect(zip(tagTimes, tagTimes.dropFirst()).allSatisfy { $1 - $0 <= heartbeat })
        }
    }

    @Test("readings from unknown agents or for untracked tags are counted, not fatal; bad lines keep their numbers")
    func badInput() throws {
        let map = try scenarioMap("open-office")
        let tag = "ibeacon-5ce1a210-0000-4000-8000-00000000a001-1-1"
        let foreign = "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1"
        let text = """
            {"t":10,"agent":"o-1","tag":"\(tag)","rssi":-60}
            {"t":10,"agent":"nobody","tag":"\(tag)","rssi":-60}
            not json
            {"t":10,"agent":"o-2","tag":"\(foreign)","rssi":-60}
            {"t":10,"agent":"o-3","tag":"\(tag)"}
            {"t":10.5,"agent":"o-3","tag":"\(tag)","rssi":-65,"n":4,"var":3}

            """
        let decoded = JSONLines.decode(text, as: RecordedReading.self)
        #expect(decoded.errors.map(\.line) == [3, 5])
        let (output, replay) = LocatorReplay.run(map: map, readings: decoded.records)
        #expect(replay.counters.accepted == 2)
        #expect(replay.counters.rejected[.unknownAgent] == 1)
        #expect(replay.counters.rejected[.untrackedTag] == 1)
        #expect(output.positions.map(\.time) == [10, 11])
        #expect(output.positions.allSatisfy { $0.tag.description == tag })
    }

    @Test("a long silence times tags out and does not run an update per second of the gap")
    func silence() throws {
        let map = try scenarioMap("open-office")
        let tag = "ibeacon-5ce1a210-0000-4000-8000-00000000a001-1-1"
        var lines = ""
        // Loud at o-1 (4, 3), quiet elsewhere: the tag is in the south-west zone.
        let rssi = [-58, -72, -80, -72, -80, -80]
        for second in 0..<20 {
            for agent in 1...6 {
                lines += #"{"t":\#(100 + second),"agent":"o-\#(agent)","tag":"\#(tag)","rssi":\#(rssi[agent - 1]),"#
                lines += #""n":5,"var":4}"# + "\n"
            }
        }
        lines += #"{"t":1000000,"agent":"o-1","tag":"\#(tag)","rssi":-65}"# + "\n"
        let readings = try cleanRecords(lines, as: RecordedReading.self)
        let (output, replay) = LocatorReplay.run(map: map, readings: readings)
        #expect(replay.updates < 200)
        #expect(output.events.contains { $0.kind == .exit }, "the tag left its zone when it timed out")
        #expect(output.positions.last?.time == 1_000_000)
    }
}
