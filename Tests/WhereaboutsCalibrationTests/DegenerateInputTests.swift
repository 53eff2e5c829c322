import Foundation
import Testing
import WhereaboutsCalibration
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsMapFile
import WhereaboutsWire

@Suite("Degenerate calibration inputs")
struct DegenerateInputTests {
    static let agents = [("a", 3.0, 3.0), ("b", 27.0, 3.0), ("c", 15.0, 17.0), ("d", 27.0, 17.0)]
    static let defaults = Array(repeating: AgentConstants(rssiOffset: 0, pathLossExponent: 2), count: 4)

    @Test("a tag that never moves: every agent is refused by name, and nothing is written")
    func stillTag() throws {
        let mapDocument = try squareMap(agents: Self.agents)
        let map = try loadMap(mapDocument)
        let still = Array(repeating: Point(x: 12, y: 9), count: 300)
        let walk = try syntheticWalk(
            map: map, tag: try testTag(), points: still, power: -59, constants: Self.defaults, noise: 3, seed: 5)
        let calibration = try GuidedCalibration(document: mapDocument, readings: walk.readings, truth: walk.truth)
        #expect(throws: CalibrationError.self) { try calibration.calibrate() }
        do {
            _ = try calibration.calibrate()
        } catch .nothingToFit(let reasons) {
            #expect(reasons.count == 4)
            for agent in Self.agents {
                #expect(reasons.contains { $0.contains("agent \(agent.0):") && $0.contains("distances span") })
            }
        } catch {
            Issue.record("unexpected \(error)")
        }
        // The fit itself stays bounded and finite.
        let result = calibration.fit()
        for agent in result.agents {
            #expect(!agent.isFitted)
            #expect(agent.after == agent.before)
        }
        for tag in result.transmitters { #expect(tag.after.isFinite) }
    }

    @Test("an agent that hears nothing keeps its map values and is named; the others are fitted")
    func silentAgent() throws {
        let mapDocument = try squareMap(agents: Self.agents)
        let map = try loadMap(mapDocument)
        let walk = try syntheticWalk(
            map: map, tag: try testTag(), points: lawnmower(), power: -59, constants: Self.defaults, noise: 3,
            seed: 6)
        let readings = walk.readings.filter { $0.agent.rawValue != "d" }
        let result = try GuidedCalibration(document: mapDocument, readings: readings, truth: walk.truth).calibrate()
        let silent = try #require(result.agents.first { $0.id == "d" })
        #expect(silent.refusal == .notHeard)
        #expect(silent.after == AgentConstants(rssiOffset: 0, pathLossExponent: 2))
        #expect(result.agents.filter(\.isFitted).count == 3)
        let written = MapDocument.apply(agents: result.fittedAgents, powers: [:], to: mapDocument)
        let agentsJSON = try #require(written.object?["agents"]?.array)
        #expect(agentsJSON[3].object?["rssi_offset"] == nil)
        #expect(agentsJSON[0].object?["rssi_offset"] != nil)
    }

    @Test("too few samples: the agent is refused with the count")
    func tooFewSamples() throws {
        let mapDocument = try squareMap(agents: Self.agents)
        let map = try loadMap(mapDocument)
        let walk = try syntheticWalk(
            map: map, tag: try testTag(), points: lawnmower(), power: -59, constants: Self.defaults, noise: 3,
            seed: 7)
        var kept = 0
        let readings = walk.readings.filter { reading in
            guard reading.agent.rawValue == "c" else { return true }
            kept += 1
            return kept <= 12
        }
        let result = try GuidedCalibration(document: mapDocument, readings: readings, truth: walk.truth).calibrate()
        let sparse = try #require(result.agents.first { $0.id == "c" })
        #expect(sparse.refusal == .tooFewSamples(12, needed: 30))
        #expect("\(try #require(sparse.refusal))".contains("only 12 samples"))
    }

    @Test("collinear agents: guided and automatic values are finite and bounded")
    func collinearAgents() throws {
        let line = [("a", 3.0, 10.0), ("b", 10.0, 10.0), ("c", 18.0, 10.0), ("d", 27.0, 10.0)]
        let mapDocument = try squareMap(agents: line)
        let map = try loadMap(mapDocument)
        let truth = [(4.0, 2.6), (-3.0, 2.2), (0.0, 3.1), (8.0, 1.9)].map {
            AgentConstants(rssiOffset: $0.0, pathLossExponent: $0.1)
        }
        let walk = try syntheticWalk(
            map: map, tag: try testTag(), points: lawnmower(), power: -59, constants: truth, noise: 4, seed: 8)
        let settings = CalibrationSettings()
        let guided = try GuidedCalibration(document: mapDocument, readings: walk.readings, truth: walk.truth)
            .calibrate()
        for agent in guided.agents {
            #expect(settings.offsetBounds.contains(agent.after.rssiOffset))
            #expect(settings.exponentBounds.contains(agent.after.pathLossExponent))
        }

        var calibrator = AgentLinkCalibrator(map: map)
        var generator = SplitMix64(seed: 9)
        for second in 0..<200 {
            for receiver in map.agents.indices {
                for transmitter in map.agents.indices where transmitter != receiver {
                    let distance = calibrator.distance(from: transmitter, to: receiver)
                    let rssi =
                        -59 - 10 * truth[receiver].pathLossExponent * log10(distance) - truth[receiver].rssiOffset
                        + 3 * generator.nextGaussian()
                    calibrator.take(
                        receiver: receiver, transmitter: transmitter, rssi: rssi.rounded(), advertisedPower: -59,
                        time: Double(second))
                }
            }
        }
        let fit = calibrator.fit(inForce: Self.defaults, now: 200)
        #expect(fit.links == 12)
        for agent in fit.result.agents {
            #expect(agent.isFitted)
            #expect(settings.offsetBounds.contains(agent.after.rssiOffset))
            #expect(settings.exponentBounds.contains(agent.after.pathLossExponent))
            #expect(fit.heldOutAfter[agent.agentIndex]?.isFinite == true)
        }
    }

    @Test("automatic: agents heard by too few others keep their constants; bad values are not taken")
    func automaticRefusals() throws {
        let map = try loadMap(try squareMap(agents: Self.agents))
        var calibrator = AgentLinkCalibrator(map: map)
        // Only "a" and "b" hear each other.
        for second in 0..<100 {
            calibrator.take(receiver: 0, transmitter: 1, rssi: -80, time: Double(second))
            calibrator.take(receiver: 1, transmitter: 0, rssi: -82, time: Double(second))
        }
        let refused = [
            calibrator.take(receiver: 0, transmitter: 0, rssi: -50, time: 1),
            calibrator.take(receiver: 0, transmitter: 2, rssi: .nan, time: 1),
            calibrator.take(receiver: 0, transmitter: 2, rssi: -60, count: 0, time: 1),
            calibrator.take(receiver: 9, transmitter: 2, rssi: -60, time: 1),
            calibrator.take(receiver: 0, transmitter: 2, rssi: -60, time: .infinity),
        ]
        #expect(refused == [false, false, false, false, false])
        let fit = calibrator.fit(inForce: Self.defaults, now: 100)
        #expect(fit.result.agents[0].refusal == .tooFewSamples(1, needed: 3))
        #expect(fit.result.agents[2].refusal == .notHeard)
        for agent in fit.result.agents { #expect(agent.after == agent.before) }
    }

    @Test("readings with nothing to fit against give a clear error, not an empty fit")
    func noSamples() throws {
        let mapDocument = try squareMap(agents: Self.agents)
        let id = try #require(AgentID("a"))
        let readings = [RecordedReading(time: 10, agent: id, tag: try testTag(), rssi: -60)]
        let truth = [TruthRecord(time: 100, tag: try testTag(), x: 1, y: 1, floor: 1)]
        #expect(throws: CalibrationError.self) {
            try GuidedCalibration(document: mapDocument, readings: readings, truth: truth)
        }
        let invalid = [RecordedReading(time: 100, agent: id, tag: try testTag(), rssi: .nan)]
        #expect(throws: CalibrationError.self) {
            try GuidedCalibration(document: mapDocument, readings: invalid, truth: truth)
        }
    }

    @Test("a document that is not a map is refused before anything is written")
    func refusesBrokenDocuments() throws {
        #expect(throws: CalibrationError.self) {
            try GuidedCalibration(document: ["agents": []], readings: [], truth: [])
        }
    }
}
