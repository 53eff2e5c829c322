import TestFixtures
import Testing
import WhereaboutsCalibration
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsMapFile
import WhereaboutsSimulation
import WhereaboutsWire

/// A scenario whose agents' true constants differ from the defaults the locator's map keeps.
struct MiscalibratedScenario {
    /// The locator's map: default constants.
    var document: JSONValue
    var map: FloorMap
    /// The map the simulated channel uses: each agent's true offset and exponent.
    var trueMap: FloorMap
    var trueConstants: [String: AgentConstants]

    /// Random offsets within ±6 dB and exponents within 1.8…3.5, seeded.
    init(scenario: String, seed: UInt64) throws {
        document = try WhereaboutsCalibrationTests.document(try fixtureText("scenarios/\(scenario).json"))
        map = try loadMap(document)
        var generator = SplitMix64(seed: seed)
        var constants: [String: AgentConstants] = [:]
        for agent in map.agents {
            constants[agent.id] = AgentConstants(
                rssiOffset: Double.random(in: -6...6, using: &generator),
                pathLossExponent: Double.random(in: 1.8...3.5, using: &generator))
        }
        trueConstants = constants
        trueMap = try loadMap(MapDocument.apply(agents: constants, powers: [:], to: document))
    }

    /// The map with some agents' constants replaced.
    func map(with constants: [String: AgentConstants]) throws -> FloorMap {
        try loadMap(MapDocument.apply(agents: constants, powers: [:], to: document))
    }

    /// A walk of `tags` tags for `duration` seconds through the true channel.
    func walk(tags: Int, duration: Double, seed: UInt64, agentBeacons: Bool = false) throws
        -> (readings: [RecordedReading], truth: [TruthRecord])
    {
        var configuration = SimulationConfiguration()
        configuration.tagCount = tags
        configuration.duration = duration
        configuration.agentBeacons = agentBeacons
        return try simulate(map: trueMap, configuration: configuration, seed: seed)
    }
}

@Suite("Calibration on simulated agents with wrong constants", .ownThread)
struct SimulatedCalibrationTests {
    @Test("guided calibration on one walk brings another walk within 15 % of the true constants' error")
    func guided() throws {
        let scenario = try MiscalibratedScenario(scenario: "open-office", seed: 11)
        let calibrationWalk = try scenario.walk(tags: 4, duration: 600, seed: 21)
        let calibration = try GuidedCalibration(
            document: scenario.document, readings: calibrationWalk.readings, truth: calibrationWalk.truth)
        let result = try calibration.calibrate()
        for agent in result.agents {
            let truth = try #require(scenario.trueConstants[agent.id])
            print(
                "guided \(agent.id): offset \(agent.after.rssiOffset) (true \(truth.rssiOffset)), exponent "
                    + "\(agent.after.pathLossExponent) (true \(truth.pathLossExponent)), \(agent.samples) samples")
        }
        #expect(result.agents.allSatisfy { $0.isFitted })

        let evaluation = try scenario.walk(tags: 4, duration: 600, seed: 22)
        let defaults = try replayError(map: scenario.map, readings: evaluation.readings, truth: evaluation.truth)
        let trueError = try replayError(
            map: scenario.trueMap, readings: evaluation.readings, truth: evaluation.truth)
        // The evaluation walk's tags are not the calibration walk's: only the agents' constants carry over.
        let calibrated = try replayError(
            map: try calibration.calibratedMap(result, tagPowers: false), readings: evaluation.readings,
            truth: evaluation.truth)
        print(
            "guided simulation: median error defaults \(metres(defaults.median)), true constants "
                + "\(metres(trueError.median)), calibrated \(metres(calibrated.median))")
        #expect(calibrated.median <= trueError.median * 1.15)
        #expect(calibrated.median < defaults.median)
    }

    @Test("automatic calibration from agents' beacons closes at least half the gap to the true constants")
    func automatic() throws {
        let scenario = try MiscalibratedScenario(scenario: "open-office", seed: 11)
        let beacons = try scenario.walk(tags: 0, duration: 1800, seed: 31, agentBeacons: true)
        let engine = LocatorEngine(map: scenario.map)
        var calibrator = AgentLinkCalibrator(map: scenario.map)
        for reading in beacons.readings {
            let receiver = try #require(scenario.map.agentIndex(of: reading.agent.rawValue))
            let transmitter = try #require(engine.agentIndex(ofBeacon: reading.tag))
            let taken = calibrator.take(
                receiver: receiver, transmitter: transmitter, rssi: reading.rssi, count: reading.count,
                advertisedPower: reading.power.map(Double.init), time: reading.time)
            #expect(taken)
        }
        let defaults = scenario.map.agents.map { AgentConstants($0, in: scenario.map) }
        let fit = calibrator.fit(inForce: defaults, now: beacons.readings.last?.time ?? 0)
        var applied: [String: AgentConstants] = [:]
        for agent in fit.result.agents {
            let truth = try #require(scenario.trueConstants[agent.id])
            let before = fit.heldOutBefore[agent.agentIndex] ?? -1
            let after = fit.heldOutAfter[agent.agentIndex] ?? -1
            print(
                "auto \(agent.id): offset \(agent.after.rssiOffset) (true \(truth.rssiOffset)), exponent "
                    + "\(agent.after.pathLossExponent) (true \(truth.pathLossExponent)), held out \(before) -> "
                    + "\(after) dB, \(agent.refusal.map { "kept: \($0)" } ?? "fitted")")
            if agent.isFitted, after < before { applied[agent.id] = agent.after }
        }
        #expect(fit.links == 30)
        #expect(!applied.isEmpty)

        let evaluation = try scenario.walk(tags: 4, duration: 600, seed: 22)
        let defaultError = try replayError(map: scenario.map, readings: evaluation.readings, truth: evaluation.truth)
        let trueError = try replayError(
            map: scenario.trueMap, readings: evaluation.readings, truth: evaluation.truth)
        let autoError = try replayError(
            map: try scenario.map(with: applied), readings: evaluation.readings, truth: evaluation.truth)
        print(
            "automatic simulation: median error defaults \(metres(defaultError.median)), true constants "
                + "\(metres(trueError.median)), automatic \(metres(autoError.median))")
        #expect(defaultError.median - autoError.median >= 0.5 * (defaultError.median - trueError.median))
    }
}
