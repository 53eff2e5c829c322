import TestFixtures
import Testing
import WhereaboutsCore
import WhereaboutsSimulation
import WhereaboutsWire

/// A survey's tag in the simulator: it stands until steered, then walks where it is sent (`sim --survey-tag`).
@Suite("Steered tags", .ownThread)
struct SteeredTagTests {
    static let surveyTag = TagIdentity(wire: "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-7-7")

    static func configuration(steered: Bool) throws -> SimulationConfiguration {
        var configuration = SimulationConfiguration()
        configuration.tagCount = 3
        configuration.duration = 120
        configuration.steeredTags = steered ? [try #require(surveyTag)] : []
        return configuration
    }

    @Test("a steered tag stands until sent, walks to the point at a walking speed, and stands there")
    func walksWhereSent() throws {
        let tag = try #require(Self.surveyTag)
        var simulator = try Simulator(
            map: try scenarioMap("walled-rooms"), configuration: try Self.configuration(steered: true), seed: 5)
        var track: [TruthRecord] = []
        for second in 0..<120 {
            if second == 20 {
                let sent = simulator.steer(tag, to: Point(x: 20, y: 11), floor: 1)
                #expect(sent)
            }
            let next = simulator.nextWindow()
            let window = try #require(next)
            track += window.truth.filter { $0.tag == tag }
        }
        #expect(track.count == 120)
        let start = Point(x: track[0].x, y: track[0].y)
        #expect(track[..<20].allSatisfy { Point(x: $0.x, y: $0.y) == start }, "stands until sent")
        let arrival = try #require(
            track.firstIndex { Point(x: $0.x, y: $0.y).distance(to: Point(x: 20, y: 11)) < 1e-6 })
        #expect(track[arrival...].allSatisfy { $0.x == 20 && $0.y == 11 && $0.floor == 1 }, "stands where sent")
        // At 0.7–1.4 m/s, around the walls: never faster than the fastest walker.
        for (earlier, later) in zip(track[20..<arrival], track[21...arrival]) {
            #expect(Point(x: earlier.x, y: earlier.y).distance(to: Point(x: later.x, y: later.y)) <= 1.4 + 1e-3)
        }
        let toNowhere = simulator.steer(tag, to: Point(x: 1, y: 1), floor: 9)
        #expect(!toNowhere, "no such floor")
        let walker = try #require(simulator.tagIdentities.first)
        let walkerSteered = simulator.steer(walker, to: Point(x: 1, y: 1), floor: 1)
        #expect(!walkerSteered, "walking tags are not steered")
    }

    @Test("walking tags walk and are heard the same with or without a steered tag")
    func othersUnchanged() throws {
        let tag = try #require(Self.surveyTag)
        let map = try scenarioMap("open-office")
        var without = try Simulator(map: map, configuration: try Self.configuration(steered: false), seed: 9)
        var with = try Simulator(map: map, configuration: try Self.configuration(steered: true), seed: 9)
        var heardSteered = 0
        while let plain = without.nextWindow() {
            if plain.end == 1_767_225_630 {
                let sent = with.steer(tag, to: Point(x: 12, y: 8), floor: 1)
                #expect(sent)
            }
            let next = with.nextWindow()
            let steered = try #require(next)
            let others = steered.batches.map { batch in
                var batch = batch
                batch.readings.removeAll { $0.tag == tag }
                return batch
            }
            heardSteered += steered.batches.reduce(0) { $0 + $1.readings.filter { $0.tag == tag }.count }
            #expect(others == plain.batches)
            #expect(steered.truth.filter { $0.tag != tag } == plain.truth)
        }
        #expect(heardSteered > 100, "the steered tag is heard too")
    }

    /// The RSSI each agent hears from the steered tag standing at (6, 4), in the last window of a run with `seed`.
    static func heard(placeSigma: Double, seed: UInt64) throws -> [String: Double] {
        let tag = try #require(surveyTag)
        var configuration = SimulationConfiguration()
        configuration.tagCount = 0
        configuration.duration = 60
        configuration.steeredTags = [tag]
        // Nothing random but the place: no shadowing in time, next to no fading, no lost adverts, the exact power.
        configuration.channel.shadowingSigma = 0
        configuration.channel.ricianK = 1e9
        configuration.channel.advertLoss = 0
        configuration.channel.measuredPowerSpread = 0
        configuration.channel.placeShadowingSigma = placeSigma
        var simulator = try Simulator(map: try scenarioMap("open-office"), configuration: configuration, seed: seed)
        let sent = simulator.steer(tag, to: Point(x: 6, y: 4), floor: 1)
        #expect(sent)
        var last: [String: Double] = [:]
        while let window = simulator.nextWindow() {
            for batch in window.batches {
                for reading in batch.readings where reading.tag == tag { last[batch.agent.rawValue] = reading.rssi }
            }
        }
        return last
    }

    @Test("shadowing of the place is the same in every run on the map, whatever the seed; off by default")
    func placeShadowing() throws {
        let first = try Self.heard(placeSigma: 4, seed: 1)
        let second = try Self.heard(placeSigma: 4, seed: 2)
        let without = try Self.heard(placeSigma: 0, seed: 1)
        #expect(first.count == 6)
        #expect(first == second)
        let differences = first.keys.compactMap { agent in without[agent].map { abs($0 - (first[agent] ?? 0)) } }
        #expect(differences.count == 6)
        #expect(differences.contains { $0 >= 1 }, "the place shifts some agent by a dB or more: \(differences)")
    }
}
