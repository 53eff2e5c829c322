import Testing
import WhereaboutsMapFile

@testable import WhereaboutsCore

/// Issue 45, item 5: the published accuracy is the posterior's spread in quadrature with a model error that grows
/// with the distance to the third-nearest agent that heard the tag.
@Suite("The published accuracy of a grid estimate")
struct PublishedAccuracyTests {
    let estimator: TagEstimator

    init() throws {
        // Two rooms of 10 × 10 m, three agents each: w1 (2, 2), w2 (2, 8), w3 (8, 5), e3 (12, 5), e1 (18, 2), e2 (18, 8).
        let map = try twoRoomsMap()
        estimator = TagEstimator(
            map: map, configuration: LocatorEngine.Configuration(), radio: RadioConstants(map: map))
    }

    func ranges(_ agents: [Int]) -> [AgentRange] {
        agents.map { AgentRange(agentIndex: $0, distance: 1, accuracy: 1, proximity: .near, rssi: -60) }
    }

    @Test("the model error rests on the third-nearest agent heard, or the farthest of fewer")
    func thirdNearest() {
        let point = Point(x: 2, y: 5)
        // Heard by all six, in the map's order: w1 and w2 are 3 m away, w3 6 m, e3 10 m.
        #expect(
            abs(estimator.thirdNearestAgentDistance(from: point, floor: 1, ranges: ranges(Array(0..<6))) - 6) < 1e-9)
        // The order the ranges come in does not matter.
        #expect(
            abs(estimator.thirdNearestAgentDistance(from: point, floor: 1, ranges: ranges([5, 3, 2, 1, 0])) - 6) < 1e-9)
        // Two heard: the farther; none: no model error.
        #expect(abs(estimator.thirdNearestAgentDistance(from: point, floor: 1, ranges: ranges([0, 3])) - 10) < 1e-9)
        #expect(estimator.thirdNearestAgentDistance(from: point, floor: 1, ranges: []) == 0)
        // Agents of another floor do not count.
        #expect(estimator.thirdNearestAgentDistance(from: point, floor: 2, ranges: ranges(Array(0..<6))) == 0)
    }

    @Test("the spread and the model error add in quadrature, and the accuracy grows away from the agents")
    func quadrature() {
        let tuning = GridFilter.Configuration()
        let all = ranges(Array(0..<6))
        let near = estimator.gridAccuracy(spread: 1, at: Point(x: 2, y: 5), floor: 1, ranges: all)
        let model = tuning.modelErrorPerMetre * 6
        let own = tuning.accuracyPerSpread * 1
        #expect(abs(near - (own * own + model * model).squareRoot()) < 1e-9)
        // The same spread between the rooms' far corners and their agents: farther from the third-nearest agent.
        let far = estimator.gridAccuracy(spread: 1, at: Point(x: 10, y: 0.5), floor: 1, ranges: all)
        #expect(far > near)
        // Never narrower than the posterior's own spread.
        #expect(estimator.gridAccuracy(spread: 2.5, at: Point(x: 2, y: 2), floor: 1, ranges: []) == 2.5 * own)
    }
}
