import Testing

@testable import WhereaboutsCore

@Suite("Trilateration")
struct TrilaterationTests {
    let room = Polygon([Point(x: 0, y: 0), Point(x: 30, y: 0), Point(x: 30, y: 20), Point(x: 0, y: 20)])
    let model = PathLossModel(measuredPower: -59, exponent: 2.2)
    let heightDifference = 2.4 - 1.2

    func randomLayout(_ count: Int, using generator: inout SplitMix64) -> [Point] {
        (0..<count).map { _ in
            Point(x: Double.random(in: 0...30, using: &generator), y: Double.random(in: 0...20, using: &generator))
        }
    }

    func measurements(
        from anchors: [Point],
        to tag: Point,
        noiseDB: Double,
        using generator: inout SplitMix64
    ) -> [RangeMeasurement] {
        anchors.map { anchor in
            let horizontal = anchor.distance(to: tag)
            let trueRange = (horizontal * horizontal + heightDifference * heightDifference).squareRoot()
            let rssi = model.expectedRSSI(atDistance: trueRange) + noiseDB * generator.nextGaussian()
            let range = model.distance(forRSSI: rssi)
            return RangeMeasurement(
                anchor: anchor,
                heightDifference: heightDifference,
                range: range,
                sigma: model.rangeSigma(atDistance: range, rssiSigma: max(noiseDB, 1))
            )
        }
    }

    @Test("exact ranges give the true position within 1 cm, over 600 seeded layouts of 3 to 12 agents")
    func exactRanges() throws {
        var generator = SplitMix64(seed: 0x5EED_0001)
        var worst = 0.0
        var solved = 0
        for count in 3...12 {
            for _ in 0..<60 {
                let anchors = randomLayout(count, using: &generator)
                let tag = Point(
                    x: Double.random(in: 1...29, using: &generator), y: Double.random(in: 1...19, using: &generator))
                let ranges = measurements(from: anchors, to: tag, noiseDB: 0, using: &generator)
                let fix = try #require(Trilateration.solve(ranges, outline: room))
                // Near-collinear draws have a mirror image that fits equally well; the outline or the start may
                // pick either, so only well-spread layouts are held to the centimetre.
                if fix.quality == .collinear { continue }
                worst = max(worst, fix.position.distance(to: tag))
                solved += 1
            }
        }
        #expect(solved > 550)
        #expect(worst < 0.01, "worst error \(worst) m")
    }

    @Test("with 4 dB noise the median error falls as agents are added")
    func noiseAveragesOut() throws {
        var generator = SplitMix64(seed: 0x5EED_0002)
        var medians: [Int: Double] = [:]
        for count in [3, 6, 12] {
            var errors: [Double] = []
            for _ in 0..<400 {
                let anchors = randomLayout(count, using: &generator)
                let tag = Point(
                    x: Double.random(in: 2...28, using: &generator), y: Double.random(in: 2...18, using: &generator))
                let ranges = measurements(from: anchors, to: tag, noiseDB: 4, using: &generator)
                let fix = try #require(Trilateration.solve(ranges, outline: room))
                #expect(fix.position.isFinite && fix.accuracy.isFinite)
                errors.append(fix.position.distance(to: tag))
            }
            errors.sort()
            medians[count] = errors[errors.count / 2]
            print("trilateration: \(count) agents, 4 dB noise: median error \(errors[errors.count / 2]) m")
        }
        let three = try #require(medians[3])
        let six = try #require(medians[6])
        let twelve = try #require(medians[12])
        #expect(three > six, "3 agents \(three) m, 6 agents \(six) m")
        #expect(six > twelve, "6 agents \(six) m, 12 agents \(twelve) m")
    }

    @Test("with residuals the size of their sigmas, a fit ends in a few evaluations, at the cost's minimum")
    func fewEvaluations() throws {
        // Ranges with 5 dB of noise disagree by about their sigmas: Gauss–Newton's matrix alone (no residual
        // curvature) then converges only linearly, which took 30 to 40 evaluations a fit here, and could stop short.
        var generator = SplitMix64(seed: 0x5EED_00C0)
        var evaluations: [Int] = []
        for _ in 0..<300 {
            let anchors = randomLayout(8, using: &generator)
            let tag = Point(
                x: Double.random(in: 2...28, using: &generator), y: Double.random(in: 2...18, using: &generator))
            let residuals = Trilateration.ResidualModel(
                ranges: measurements(from: anchors, to: tag, noiseDB: 5, using: &generator))
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

    @Test("one agent puts the tag at the agent, with the range as its accuracy")
    func singleAgent() throws {
        let anchor = Point(x: 10, y: 5)
        let fix = try #require(
            Trilateration.solve(
                [RangeMeasurement(anchor: anchor, heightDifference: 1.2, range: 3, sigma: 1)], outline: room)
        )
        #expect(fix.position == anchor)
        #expect(fix.quality == .singleAgent)
        #expect(abs(fix.accuracy - horizontalRange(3, heightDifference: 1.2)) < 1e-9)
    }

    @Test("two agents put the tag between them, nearer the stronger one")
    func twoAgents() throws {
        let a = Point(x: 5, y: 10)
        let b = Point(x: 15, y: 10)
        let fix = try #require(
            Trilateration.solve(
                [
                    RangeMeasurement(anchor: a, heightDifference: 0, range: 2, sigma: 0.5),
                    RangeMeasurement(anchor: b, heightDifference: 0, range: 8, sigma: 2),
                ],
                outline: room
            )
        )
        #expect(fix.quality == .twoAgents)
        #expect(abs(fix.position.y - 10) < 1e-9)
        #expect(fix.position.x > 5 && fix.position.x < 10)
        #expect(abs(fix.position.x - 7) < 1e-9)
    }

    @Test("collinear agents give a finite answer with a large accuracy radius")
    func collinear() throws {
        var generator = SplitMix64(seed: 0x5EED_0003)
        let anchors = (0..<5).map { Point(x: 3 + 6 * Double($0), y: 10) }
        for _ in 0..<200 {
            let tag = Point(
                x: Double.random(in: 2...28, using: &generator), y: Double.random(in: 13...18, using: &generator))
            let ranges = measurements(from: anchors, to: tag, noiseDB: 4, using: &generator)
            let fix = try #require(Trilateration.solve(ranges))
            #expect(fix.position.isFinite)
            #expect(fix.accuracy.isFinite)
            #expect(fix.quality == .collinear)
            // Without an outline to choose a side, the mirror image is equally likely: the radius must cover it.
            #expect(fix.accuracy >= 2 * abs(fix.position.y - 10) - 1e-9)
            #expect(fix.accuracy > 2)
        }
    }

    @Test("degenerate input never gives NaN: agents at one point, zero ranges, huge ranges")
    func degenerate() throws {
        let point = Point(x: 4, y: 4)
        let same = (0..<4).map { _ in RangeMeasurement(anchor: point, heightDifference: 1, range: 3, sigma: 1) }
        let zero = (0..<4).map {
            RangeMeasurement(anchor: Point(x: Double($0), y: 1), heightDifference: 2, range: 0.01, sigma: 0.05)
        }
        let huge = (0..<4).map {
            RangeMeasurement(
                anchor: Point(x: Double($0) * 5, y: Double($0 % 2) * 5), heightDifference: 0, range: 1000, sigma: 500)
        }
        for input in [same, zero, huge] {
            let fix = try #require(Trilateration.solve(input, outline: room))
            #expect(fix.position.isFinite)
            #expect(fix.accuracy.isFinite)
            #expect(room.contains(fix.position))
        }
        #expect(Trilateration.solve([]) == nil)
    }

    @Test("horizontal range is never NaN, even when the range is shorter than the height difference")
    func horizontal() {
        #expect(horizontalRange(1, heightDifference: 2) == 0)
        #expect(abs(horizontalRange(5, heightDifference: 3) - 4) < 1e-12)
        #expect(horizontalRange(2, heightDifference: -2) == 0)
    }

    @Test("the path-loss model inverts itself and its range error grows with distance")
    func pathLoss() {
        let model = PathLossModel(measuredPower: -59, exponent: 2, rssiOffset: 3)
        #expect(abs(model.distance(forRSSI: -62) - 1) < 1e-9)
        #expect(abs(model.distance(forRSSI: -82) - 10) < 1e-9)
        for distance in [0.5, 1, 3, 10, 30] {
            #expect(abs(model.distance(forRSSI: model.expectedRSSI(atDistance: distance)) - distance) < 1e-9)
        }
        #expect(model.rangeSigma(atDistance: 10, rssiSigma: 4) > model.rangeSigma(atDistance: 2, rssiSigma: 4))
        #expect(Proximity(range: 0.3) == .immediate)
        #expect(Proximity(range: 2) == .near)
        #expect(Proximity(range: 7) == .far)
        #expect(Proximity(range: nil) == .unknown)
    }
}
