import Testing
import WhereaboutsCore
import WhereaboutsSimulation
import WhereaboutsWire

@Suite("Replay")
struct ReplayTests {
    static func simulated() throws -> (map: FloorMap, readings: String, truth: String) {
        let map = try scenarioMap("walled-rooms")
        var configuration = SimulationConfiguration()
        configuration.tagCount = 3
        configuration.duration = 120
        let (readings, truth) = try simulate(map: map, configuration: configuration, seed: 8)
        return (map, readings, truth)
    }

    @Test("the same readings give byte-identical positions and events, whatever their order in the file")
    func byteIdentical() throws {
        let (map, text, _) = try Self.simulated()
        let readings = try cleanRecords(text, as: RecordedReading.self)
        let first = Replay.run(map: map, readings: readings)
        let second = Replay.run(map: map, readings: readings)
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
        let shuffled = Replay.run(map: map, readings: shuffledWindows)
        let byTimeAndTag = { (a: PositionRecord, b: PositionRecord) in (a.time, a.tag) < (b.time, b.tag) }
        #expect(shuffled.output.positions.sorted(by: byTimeAndTag) == first.output.positions.sorted(by: byTimeAndTag))
        #expect(first.statistics.taken == readings.count)
    }

    @Test("updates fall every interval of recording time, and see the readings stamped up to them")
    func cadence() throws {
        let (map, text, _) = try Self.simulated()
        let readings = try cleanRecords(text, as: RecordedReading.self)
        let (output, statistics) = Replay.run(map: map, readings: readings, interval: 2)
        let times = Set(output.positions.map(\.time))
        // Updates fall on whole multiples of the interval, as a live timer's would.
        #expect(times.allSatisfy { $0.truncatingRemainder(dividingBy: 2) == 0 })
        // Windows end on whole seconds from start + 1 to start + 120; start is even, so updates fall at
        // start + 2, start + 4, … start + 120, each seeing two windows.
        #expect(statistics.updates == 60)
        #expect(times.count == 60)
        #expect(output.positions.count == 3 * 60)
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
        let (output, statistics) = Replay.run(map: map, readings: decoded.records)
        #expect(statistics.taken == 2)
        #expect(statistics.unknownAgents == 1)
        #expect(statistics.rejected[.untrackedTag] == 1)
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
        let (output, statistics) = Replay.run(map: map, readings: readings)
        #expect(statistics.updates < 200)
        #expect(output.events.contains { $0.kind == .exit }, "the tag left its zone when it timed out")
        #expect(output.positions.last?.time == 1_000_000)
    }
}
