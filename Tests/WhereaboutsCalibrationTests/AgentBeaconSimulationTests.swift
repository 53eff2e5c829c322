import TestFixtures
import Testing
import WhereaboutsCalibration
import WhereaboutsCore
import WhereaboutsSimulation
import WhereaboutsWire

@Suite("Simulated agents hearing each other's beacons", .ownThread)
struct AgentBeaconSimulationTests {
    @Test("agents hear each other's beacons with their advertised power; tags hear the same as without beacons")
    func beaconsHeard() throws {
        let scenario = try MiscalibratedScenario(scenario: "open-office", seed: 3)
        let without = try scenario.walk(tags: 2, duration: 60, seed: 5)
        let with = try scenario.walk(tags: 2, duration: 60, seed: 5, agentBeacons: true)
        let engine = LocatorEngine(map: scenario.trueMap)
        let beaconReadings = with.readings.filter { engine.agentIndex(ofBeacon: $0.tag) != nil }
        let tagReadings = with.readings.filter { engine.agentIndex(ofBeacon: $0.tag) == nil }
        #expect(tagReadings == without.readings)
        #expect(with.truth == without.truth)

        var heard: Set<[Int]> = []
        for reading in beaconReadings {
            let receiver = try #require(scenario.trueMap.agentIndex(of: reading.agent.rawValue))
            let transmitter = try #require(engine.agentIndex(ofBeacon: reading.tag))
            #expect(receiver != transmitter)
            #expect(reading.power == -59)
            heard.insert([transmitter, receiver])
        }
        // Far links through a steep exponent may fall under the sensitivity; every agent still hears, and is
        // heard by, at least three others.
        for agent in scenario.trueMap.agents.indices {
            #expect(heard.filter { $0[1] == agent }.count >= 3)
            #expect(heard.filter { $0[0] == agent }.count >= 3)
        }
        #expect(heard.count >= 25)
    }

    @Test("beacon readings follow the receiver's offset: a receiver reading 6 dB low hears its peers 6 dB lower")
    func offsetsShowInBeacons() throws {
        let base = try MiscalibratedScenario(scenario: "open-office", seed: 3)
        func meanRSSI(_ map: FloorMap, receiver: String) throws -> Double {
            var configuration = SimulationConfiguration()
            configuration.tagCount = 0
            configuration.duration = 300
            configuration.agentBeacons = true
            let (readings, _) = try simulate(map: map, configuration: configuration, seed: 9)
            let values = readings.filter { $0.agent.rawValue == receiver }.map(\.rssi)
            return values.reduce(0, +) / Double(max(values.count, 1))
        }
        var shifted = base.trueConstants
        let id = try #require(base.map.agents.first?.id)
        let original = try #require(shifted[id])
        shifted[id] = AgentConstants(rssiOffset: original.rssiOffset + 6, pathLossExponent: original.pathLossExponent)
        let difference =
            try meanRSSI(base.trueMap, receiver: id) - meanRSSI(try base.map(with: shifted), receiver: id)
        #expect(abs(difference - 6) < 0.5)
    }
}
