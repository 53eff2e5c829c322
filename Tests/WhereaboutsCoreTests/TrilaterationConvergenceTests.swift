import Testing

@testable import WhereaboutsCore

@Suite("Trilateration's convergence")
struct TrilaterationConvergenceTests {
    let model = PathLossModel(measuredPower: -59, exponent: 2)

    /// Ranges from `anchors` to `tag` with `noiseDB` of Gaussian RSSI noise, sigmas to match.
    func ranges(_ anchors: [Point], to tag: Point, noiseDB: Double, using generator: inout SplitMix64)
        -> [RangeMeasurement]
    {
        anchors.map { anchor in
            let distance = (anchor.distance(to: tag) * anchor.distance(to: tag) + 1.44).squareRoot()
            let rssi = model.expectedRSSI(atDistance: distance) + noiseDB * generator.nextGaussian()
            let range = model.distance(forRSSI: rssi)
            return RangeMeasurement(
                anchor: anchor, heightDifference: 1.2, range: range,
                sigma: model.rangeSigma(atDistance: range, rssiSigma: noiseDB))
        }
    }

    @Test("with residuals the size of their sigmas, a fit ends in a few evaluations, at the cost's minimum")
    func fewEvaluations() throws {
        // Ranges with 5 dB of noise disagree by about their sigmas: Gauss–Newton's matrix alone (no residual
        // curvature) then converges only linearly, which took 30 to 40 evaluations a fit here.
        var generator = SplitMix64(seed: 0x5EED_00C0)
        var evaluations: [Int] = []
        for _ in 0..<300 {
            let anchors = (0..<8).map { _ in
                Point(x: Double.random(in: 0...30, using: &generator), y: Double.random(in: 0...20, using: &generator))
            }
            let tag = Point(
                x: Double.random(in: 2...28, using: &generator), y: Double.random(in: 2...18, using: &generator))
            let measured = ranges(anchors, to: tag, noiseDB: 5, using: &generator)
            let residuals = Trilateration.ResidualModel(ranges: measured)
            let start = Point(x: 15, y: 10)
            let solution = Trilateration.levenbergMarquardt(residuals, start: start, prior: start)
            evaluations.append(solution.evaluations)
            // A minimum: no point a centimetre away in any of eight directions costs less.
            let cost = residuals.evaluate(at: solution.position, prior: start).cost
            for (dx, dy) in [(1.0, 0.0), (-1, 0), (0, 1), (0, -1), (0.7, 0.7), (-0.7, 0.7), (0.7, -0.7), (-0.7, -0.7)] {
                let nearby = solution.position + Point(x: 0.01 * dx, y: 0.01 * dy)
                #expect(residuals.evaluate(at: nearby, prior: start).cost >= cost - 1e-9 * max(cost, 1))
            }
        }
        let mean = Double(evaluations.reduce(0, +)) / Double(evaluations.count)
        print("trilateration: \(mean) evaluations a fit on average, at most \(evaluations.max() ?? 0)")
        #expect(mean <= 15, "\(mean) evaluations a fit on average")
    }
}
