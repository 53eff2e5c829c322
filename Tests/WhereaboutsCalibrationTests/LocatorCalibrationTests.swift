import Testing
import WhereaboutsCalibration
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsLocator
import WhereaboutsSession
import WhereaboutsSimulation
import WhereaboutsWire

/// Runs simulated agents' batches (beacons included) through the locator's pipeline, as the shell would.
struct CalibratingLocator {
    var pipeline: LocatorPipeline
    var logs: [String] = []
    var calibrationPayloads: [String] = []

    init(map: FloorMap, mode: CalibrationMode, interval: Double = 600) {
        var configuration = LocatorPipeline.Configuration()
        configuration.calibration.mode = mode
        configuration.calibration.interval = interval
        configuration.homeAssistantDiscovery = false
        pipeline = LocatorPipeline(map: map, configuration: configuration)
    }

    mutating func perform(_ actions: [ServiceAction<LocatorEffect>]) {
        for action in actions {
            switch action {
            case .publish(let publication) where publication.topic == pipeline.topics.calibration:
                #expect(publication.retain)
                calibrationPayloads.append(publication.payload)
            case .log(_, let line): logs.append(line)
            default: break
            }
        }
    }

    /// Feeds a simulation window by window: each agent's batch, then a tick at the window's end.
    mutating func run(_ simulator: inout Simulator) {
        perform(pipeline.connected(now: simulator.configuration.startTime))
        var sequence = 0
        while let window = simulator.nextWindow() {
            sequence += 1
            for batch in window.batches {
                let payload = ReadingBatch(
                    agent: batch.agent, epoch: 1, seq: sequence, sent: batch.windowEnd, readings: batch.readings
                ).payload
                perform(
                    pipeline.receive(
                        topic: pipeline.topics.readings(agent: batch.agent).name, payload: Array(payload.utf8),
                        now: window.end))
            }
            perform(pipeline.tick(now: window.end))
        }
    }

    /// The last calibration message's agents.
    func lastAgents() throws -> [JSONObject] {
        let text = try #require(calibrationPayloads.last)
        let value = try JSONParser().parse(text)
        let agents = try #require(value.object?["agents"]?.array)
        return agents.compactMap { $0.object }
    }
}

@Suite("The locator's calibration modes")
struct LocatorCalibrationTests {
    static func beaconSimulator(_ map: FloorMap, duration: Double) throws -> Simulator {
        var configuration = SimulationConfiguration()
        configuration.tagCount = 1
        configuration.duration = duration
        configuration.agentBeacons = true
        return try Simulator(map: map, configuration: configuration, seed: 41)
    }

    @Test("auto: the locator fits agents from their beacons, applies what improves, logs it and publishes it")
    func automatic() throws {
        let scenario = try MiscalibratedScenario(scenario: "open-office", seed: 11)
        var locator = CalibratingLocator(map: scenario.map, mode: .auto, interval: 600)
        var simulator = try Self.beaconSimulator(scenario.trueMap, duration: 1300)
        locator.run(&simulator)

        #expect(locator.pipeline.counters.agentBeacons > 10_000)
        let first = try #require(locator.calibrationPayloads.first)
        #expect(first.contains(#""mode":"auto""#))
        #expect(first.contains(#""source":"map""#))
        let changes = locator.logs.filter { $0.hasPrefix("calibration: agent") && $0.contains("automatic") }
        #expect(!changes.isEmpty)
        let agents = try locator.lastAgents()
        #expect(agents.count == scenario.map.agents.count)
        let engineMap = locator.pipeline.engineState.map
        for (entry, agent) in zip(agents, engineMap.agents) {
            guard entry["source"] == "auto" else { continue }
            #expect(entry["fitted"]?.double != nil)
            let before = try #require(entry["residual_before"]?.double)
            let after = try #require(entry["residual_after"]?.double)
            #expect(after < before)
            #expect(entry["rssi_offset"]?.double == (agent.rssiOffset * 100).rounded() / 100)
            #expect(changes.contains { $0.contains("agent \(agent.id) ") })
        }
        #expect(agents.contains { $0["source"] == "auto" })
    }

    @Test("auto keeps guided values it does not clearly beat, and replaces badly wrong ones")
    func guidedValuesAreTrusted() throws {
        let scenario = try MiscalibratedScenario(scenario: "open-office", seed: 11)
        // The locator's map holds the true constants (a good guided calibration), but one agent 12 dB off.
        var guided = scenario.trueConstants
        let wrongID = try #require(scenario.map.agents.first?.id)
        let wrong = try #require(guided[wrongID])
        guided[wrongID] = AgentConstants(rssiOffset: wrong.rssiOffset + 12, pathLossExponent: wrong.pathLossExponent)
        var locator = CalibratingLocator(map: try scenario.map(with: guided), mode: .auto, interval: 600)
        var simulator = try Self.beaconSimulator(scenario.trueMap, duration: 1300)
        locator.run(&simulator)
        let agents = try locator.lastAgents()
        for entry in agents {
            if entry["agent"] == .string(wrongID) {
                #expect(entry["source"] == "auto")
            } else {
                #expect(entry["source"] == "guided", "\(entry)")
            }
        }
    }

    @Test("off ranges with the defaults whatever the map says; guided publishes the map's values")
    func offAndGuided() throws {
        let scenario = try MiscalibratedScenario(scenario: "open-office", seed: 11)
        let off = LocatorPipeline(
            map: scenario.trueMap,
            configuration: {
                var configuration = LocatorPipeline.Configuration()
                configuration.calibration.mode = .off
                return configuration
            }())
        for agent in off.engineState.map.agents {
            #expect(agent.rssiOffset == 0)
            #expect(agent.pathLossExponent == nil)
        }
        var locator = CalibratingLocator(map: scenario.trueMap, mode: .guided)
        locator.perform(locator.pipeline.connected(now: 1_767_225_600))
        for entry in try locator.lastAgents() {
            #expect(entry["source"] == "guided")
            #expect(entry["fitted"] == .null)
            let id = try #require(entry["agent"]?.string)
            let truth = try #require(scenario.trueConstants[id])
            #expect(entry["rssi_offset"] == .number((truth.rssiOffset * 100).rounded() / 100))
        }
        #expect(locator.pipeline.engineState.map.agents.map(\.rssiOffset) == scenario.trueMap.agents.map(\.rssiOffset))
    }
}
