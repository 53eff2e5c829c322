import Foundation
import Testing
import WhereaboutsCalibration
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsWire

/// A one-floor map with agents at the given points (antennas at 2.5 m) and a 30 m × 20 m outline.
func squareMap(agents: [(String, Double, Double)], extra: String = "") throws -> JSONValue {
    let list = agents.map { #"{"id": "\#($0.0)", "floor": 1, "x": \#($0.1), "y": \#($0.2), "z": 2.5}"# }
    return try document(
        """
        {"site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Test"},
         "model": {"measured_power": -59, "path_loss_exponent": 2.0, "tag_height": 1.2},
         "floors": [{"major": 1, "name": "Ground", "outline": [[0, 0], [30, 0], [30, 20], [0, 20]]}],
         "agents": [\(list.joined(separator: ", "))]\(extra)}
        """)
}

/// Readings of a tag walking a list of points, each heard by every agent with the model's RSSI for true
/// constants, plus seeded Gaussian noise; one reading per agent and second.
func syntheticWalk(
    map: FloorMap,
    tag: TagIdentity,
    points: [Point],
    power: Double,
    constants: [AgentConstants],
    noise: Double,
    seed: UInt64
) throws -> (readings: [RecordedReading], truth: [TruthRecord]) {
    var generator = SplitMix64(seed: seed)
    var readings: [RecordedReading] = []
    var truth: [TruthRecord] = []
    for (second, point) in points.enumerated() {
        let time = 1_767_225_600 + Double(second)
        truth.append(TruthRecord(time: time, tag: tag, x: point.x, y: point.y, floor: 1))
        for (index, agent) in map.agents.enumerated() {
            let dx = point.x - agent.position.x
            let dy = point.y - agent.position.y
            let dz = agent.height - map.model.tagHeight
            let distance = (dx * dx + dy * dy + dz * dz).squareRoot()
            let rssi =
                power - 10 * constants[index].pathLossExponent * log10(distance) - constants[index].rssiOffset + noise
                * generator.nextGaussian()
            let id = try #require(AgentID(agent.id))
            readings.append(RecordedReading(time: time, agent: id, tag: tag, rssi: (rssi * 100).rounded() / 100))
        }
    }
    return (readings, truth)
}

/// A walk back and forth across the whole floor.
func lawnmower(width: Double = 30, height: Double = 20, step: Double = 0.7) -> [Point] {
    var points: [Point] = []
    var y = 1.0
    var forward = true
    while y < height - 0.5 {
        var x = forward ? 1.0 : width - 1
        while x >= 0.5 && x <= width - 0.5 {
            points.append(Point(x: x, y: y))
            x += forward ? step : -step
        }
        forward.toggle()
        y += 3
    }
    return points
}

/// A tag of the test site.
func testTag(_ minor: Int = 1) throws -> TagIdentity {
    try #require(TagIdentity("ibeacon-f7826da6-4fa2-4e98-8024-bc5b71e0893e-1-\(minor)"))
}

@Suite("The path-loss fit")
struct PathLossFitTests {
    static let agents = [("a", 3.0, 3.0), ("b", 27.0, 3.0), ("c", 15.0, 17.0), ("d", 27.0, 17.0), ("e", 3.0, 17.0)]

    @Test("recovers true constants from clean data; the tag's known power settles the common shift")
    func recoversConstants() throws {
        let map = try loadMap(try squareMap(agents: Self.agents))
        let truth = [(3.0, 2.2), (-4.0, 2.8), (0.5, 1.9), (6.0, 3.3), (-2.0, 2.5)].map {
            AgentConstants(rssiOffset: $0.0, pathLossExponent: $0.1)
        }
        let walk = try syntheticWalk(
            map: map, tag: try testTag(), points: lawnmower(), power: -59, constants: truth, noise: 0.01, seed: 1)
        let withPower = walk.readings.map { reading in
            var copy = reading
            copy.power = -59
            return copy
        }
        let calibration = try GuidedCalibration(
            document: try squareMap(agents: Self.agents), readings: withPower, truth: walk.truth)
        let result = try calibration.calibrate()
        for (agent, expected) in zip(result.agents, truth) {
            #expect(agent.isFitted)
            #expect(abs(agent.after.rssiOffset - expected.rssiOffset) < 0.3, "\(agent.id): \(agent.after)")
            #expect(abs(agent.after.pathLossExponent - expected.pathLossExponent) < 0.03, "\(agent.id)")
            #expect((agent.residualAfter ?? 99) < 0.2)
        }
        let power = try #require(result.transmitters.first)
        #expect(abs(power.after - -59) < 0.5)
    }

    @Test("outliers barely move the robust fit")
    func robustToOutliers() throws {
        let map = try loadMap(try squareMap(agents: Self.agents))
        let truth = Array(repeating: AgentConstants(rssiOffset: 0, pathLossExponent: 2.5), count: 5)
        var walk = try syntheticWalk(
            map: map, tag: try testTag(), points: lawnmower(), power: -59, constants: truth, noise: 2, seed: 2)
        // One reading in eight is a reflection 25 dB too strong.
        for index in walk.readings.indices where index % 8 == 0 { walk.readings[index].rssi += 25 }
        walk.readings = walk.readings.map { reading in
            var copy = reading
            copy.power = -59
            return copy
        }
        let result = try GuidedCalibration(
            document: try squareMap(agents: Self.agents), readings: walk.readings, truth: walk.truth
        ).calibrate()
        for agent in result.agents {
            #expect(abs(agent.after.pathLossExponent - 2.5) < 0.25, "\(agent.id): \(agent.after)")
            #expect(abs(agent.after.rssiOffset) < 3, "\(agent.id): \(agent.after)")
        }
    }

    @Test("values the data push beyond their bounds stop at the bounds, never NaN")
    func bounded() throws {
        let map = try loadMap(try squareMap(agents: Self.agents))
        // A receiver reading 35 dB low with a steep exponent, and the others ordinary.
        var truth = Array(repeating: AgentConstants(rssiOffset: 0, pathLossExponent: 2), count: 5)
        truth[0] = AgentConstants(rssiOffset: 35, pathLossExponent: 6)
        let walk = try syntheticWalk(
            map: map, tag: try testTag(), points: lawnmower(), power: -40, constants: truth, noise: 1, seed: 3)
        let result = try GuidedCalibration(
            document: try squareMap(agents: Self.agents),
            readings: walk.readings.map {
                var copy = $0
                copy.power = -40
                return copy
            }, truth: walk.truth
        ).calibrate()
        let settings = CalibrationSettings()
        for agent in result.agents {
            #expect(agent.after.rssiOffset.isFinite && agent.after.pathLossExponent.isFinite)
            #expect(settings.offsetBounds.contains(agent.after.rssiOffset))
            #expect(settings.exponentBounds.contains(agent.after.pathLossExponent))
        }
        #expect(result.agents[0].after.pathLossExponent == settings.exponentBounds.upperBound)
        for tag in result.transmitters { #expect(settings.powerBounds.contains(tag.after)) }
    }

    @Test("a sparse agent heard over a short stretch keeps sane values instead of railing")
    func sparseAgentStaysNearDefaults() throws {
        let map = try loadMap(try squareMap(agents: Self.agents))
        let truth = Array(repeating: AgentConstants(rssiOffset: 0, pathLossExponent: 2.4), count: 5)
        var walk = try syntheticWalk(
            map: map, tag: try testTag(), points: lawnmower(), power: -59, constants: truth, noise: 4, seed: 4)
        // Agent "c" only heard 30 to 40 times, from places 3 to 6 m away.
        walk.readings = walk.readings.filter { reading in
            guard reading.agent.rawValue == "c" else { return true }
            guard let point = walk.truth.first(where: { $0.time == reading.time }) else { return false }
            let horizontal = Point(x: point.x, y: point.y).distance(to: Point(x: 15, y: 17))
            return horizontal >= 2.8 && horizontal <= 6
        }
        var kept = 0
        walk.readings = walk.readings.filter { reading in
            guard reading.agent.rawValue == "c" else { return true }
            kept += 1
            return kept <= 40
        }
        let calibration = try GuidedCalibration(
            document: try squareMap(agents: Self.agents), readings: walk.readings, truth: walk.truth)
        let result = try calibration.calibrate()
        let sparse = try #require(result.agents.first { $0.id == "c" })
        #expect((30...40).contains(sparse.samples))
        #expect(sparse.isFitted)
        let settings = CalibrationSettings()
        #expect(sparse.after.pathLossExponent > settings.exponentBounds.lowerBound + 0.2)
        #expect(sparse.after.pathLossExponent < settings.exponentBounds.upperBound - 0.2)
        #expect(abs(sparse.after.rssiOffset) < settings.offsetBounds.upperBound - 5)
    }
}
