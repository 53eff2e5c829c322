/// One range from an agent to a tag, as the solver takes it.
public struct RangeMeasurement: Sendable, Hashable {
    /// Where the agent stands on the plan.
    public var anchor: Point
    /// Antenna height minus tag height, in metres (either sign).
    public var heightDifference: Double
    /// The 3-D range estimated from the RSSI, in metres.
    public var range: Double
    /// The 1-sigma error of `range`, in metres.
    public var sigma: Double
    /// The path-loss exponent the range was computed with (to turn a wall's dB into a range factor).
    public var exponent: Double

    public init(anchor: Point, heightDifference: Double, range: Double, sigma: Double, exponent: Double = 2) {
        self.anchor = anchor
        self.heightDifference = heightDifference
        self.range = range
        self.sigma = sigma
        self.exponent = exponent
    }

    /// The horizontal part of the range.
    public var horizontal: Double { horizontalRange(range, heightDifference: heightDifference) }
}

/// A position fix and how much to trust it.
public struct Fix: Sendable, Hashable {
    /// How the solve ended.
    public enum Quality: String, Sendable, Hashable {
        /// Three or more ranges, converged.
        case converged
        /// Three or more ranges; the iteration limit stopped it first.
        case iterationLimit
        /// One agent only: the tag is placed at it.
        case singleAgent
        /// Two agents: the tag is placed between them.
        case twoAgents
        /// The agents stand in a line, so the side of the line is ambiguous.
        case collinear
    }

    /// The estimated position.
    public var position: Point
    /// A 1-sigma radius in metres around `position`.
    public var accuracy: Double
    /// How many ranges were used.
    public var agentsUsed: Int
    /// The root-mean-square of the normalised residuals (about 1 when the ranges agree with their sigmas).
    public var residual: Double
    /// How the solve ended.
    public var quality: Quality
    /// Whether the position was moved inside the floor outline.
    public var clamped: Bool
}

/// Weighted trilateration: Levenberg–Marquardt over horizontal position, from a weighted-centroid start.
///
/// Each range is weighted by the inverse of its variance, so a far agent (whose dB error spans many metres)
/// counts less than a near one. The tag's height is fixed; the height difference to each antenna stays in the
/// model, so a tag under an antenna does not read as a metre or two away horizontally.
public enum Trilateration {
    /// Solves for a position.
    ///
    /// - Parameters:
    ///   - ranges: the ranges; empty input gives nil.
    ///   - outline: the floor's outline; the answer is kept inside it and it resolves mirror ambiguities.
    ///   - walls: the floor's walls. A wall between an agent and a candidate position explains part of that
    ///     agent's loss, so the candidate is judged by the range the signal would have had without it.
    /// - Returns: the fix, or nil when there are no ranges.
    public static func solve(_ ranges: [RangeMeasurement], outline: Polygon? = nil, walls: [Wall] = []) -> Fix? {
        let usable = ranges.filter { $0.anchor.isFinite && $0.range.isFinite && $0.sigma.isFinite && $0.sigma > 0 }
        guard var fix = solveIgnoringWalls(usable, outline: outline) else { return nil }
        guard !walls.isEmpty, usable.count >= 2 else { return fix }
        // Walls make the cost step wherever a candidate crosses a line of sight, which traps a gradient solver.
        // Instead: solve, take off each range the walls on its path to that answer, and solve again, until the
        // answer stops moving. Each solve is smooth; the walls on the right paths come out of the ranges.
        for _ in 0..<4 {
            let corrected = usable.map { range -> RangeMeasurement in
                let loss = wallLoss(walls, from: range.anchor, to: fix.position)
                guard loss > 0 else { return range }
                let factor = pow10(-loss / (10 * range.exponent))
                var shorter = range
                shorter.range = max(range.range * factor, 0.01)
                shorter.sigma = range.sigma * factor
                return shorter
            }
            guard let next = solveIgnoringWalls(corrected, outline: outline) else { break }
            let moved = next.position.distance(to: fix.position)
            fix = next
            if moved < 0.01 { break }
        }
        return fix
    }

    /// The dB lost to walls on the straight path between two points.
    static func wallLoss(_ walls: [Wall], from start: Point, to end: Point) -> Double {
        let path = Segment(start, end)
        var loss = 0.0
        for wall in walls where wall.segment.properlyIntersects(path) { loss += wall.loss }
        return loss
    }

    static func solveIgnoringWalls(_ usable: [RangeMeasurement], outline: Polygon?) -> Fix? {
        guard let first = usable.first else { return nil }
        var fix: Fix
        switch usable.count {
        case 1:
            fix = Fix(
                position: first.anchor,
                accuracy: max(first.horizontal, first.sigma),
                agentsUsed: 1,
                residual: 0,
                quality: .singleAgent,
                clamped: false
            )
        case 2:
            fix = solveTwo(usable[0], usable[1])
        default:
            fix = solveMany(usable, outline: outline)
        }
        if let outline, !outline.contains(fix.position) {
            fix.position = outline.clamped(fix.position)
            fix.clamped = true
        }
        return fix
    }

    static func solveTwo(_ a: RangeMeasurement, _ b: RangeMeasurement) -> Fix {
        let ra = a.horizontal
        let rb = b.horizontal
        let baseline = b.anchor - a.anchor
        let length = a.anchor.distance(to: b.anchor)
        guard length > 1e-6 else {
            return Fix(
                position: a.anchor,
                accuracy: max(min(ra, rb), a.sigma),
                agentsUsed: 2,
                residual: 0,
                quality: .twoAgents,
                clamped: false
            )
        }
        // Split the baseline in proportion to the ranges; the tag may be off the line by up to the circles'
        // half-chord, which goes into the accuracy.
        let t = ra + rb > 0 ? ra / (ra + rb) : 0.5
        let along = t * length
        let offLine = (max(ra * ra - along * along, 0)).squareRoot()
        let sigmaAlong = (a.sigma * a.sigma * b.sigma * b.sigma / (a.sigma * a.sigma + b.sigma * b.sigma)).squareRoot()
        return Fix(
            position: a.anchor + baseline * t,
            accuracy: (sigmaAlong * sigmaAlong + offLine * offLine).squareRoot(),
            agentsUsed: 2,
            residual: abs(ra + rb - length) / (a.sigma + b.sigma),
            quality: .twoAgents,
            clamped: false
        )
    }

    static func solveMany(_ ranges: [RangeMeasurement], outline: Polygon?) -> Fix {
        // Start from the centroid weighted toward near agents, and from the nearest agent; keep the better.
        var weightSum = 0.0
        var centroid = Point(x: 0, y: 0)
        var nearest = ranges[0]
        for range in ranges {
            let weight = 1 / max(range.horizontal * range.horizontal, 0.25)
            centroid = centroid + range.anchor * weight
            weightSum += weight
            if range.range < nearest.range { nearest = range }
        }
        centroid = centroid * (1 / weightSum)
        // Several starts, keep the lowest cost: the weighted centroid, the linearised least-squares answer (exact
        // for exact ranges), and the three nearest agents. Range residuals have local minima; one start can sit in one.
        var starts = [centroid]
        if let linear = linearSolution(ranges) { starts.insert(linear, at: 0) }
        for range in ranges.sorted(by: { $0.range < $1.range }).prefix(3) {
            starts.append(range.anchor + Point(x: 0.1, y: 0.1))
        }
        let bounds = outline.map { $0.bounds.maximum - $0.bounds.minimum }
        let model = ResidualModel(ranges: ranges)
        var best = levenbergMarquardt(model, start: starts[0], prior: centroid, extent: bounds)
        for start in starts.dropFirst() {
            // A fit whose residuals are no larger than their sigmas is the answer: the other starts are for the
            // cases where one start sat in a local minimum, which shows as a poor fit.
            if best.cost <= goodFitCost * Double(ranges.count) { break }
            let candidate = levenbergMarquardt(model, start: start, prior: centroid, extent: bounds)
            if candidate.cost < best.cost - 1e-9 { best = candidate }
        }

        var position = best.position
        var accuracy = best.accuracy
        var quality: Fix.Quality = best.converged ? .converged : .iterationLimit
        if let line = collinearLine(ranges) {
            // Mirror images across the agents' line fit equally well: prefer the one inside the floor, and say
            // how far apart the two candidates are.
            let mirrored = line.reflect(position)
            if let outline, !outline.contains(position), outline.contains(mirrored) { position = mirrored }
            let mirrorRuledOut = outline.map { !$0.contains(mirrored) && $0.contains(position) } ?? false
            if !mirrorRuledOut { accuracy = max(accuracy, 2 * line.distance(to: position)) }
            quality = .collinear
        }
        return Fix(
            position: position,
            accuracy: accuracy,
            agentsUsed: ranges.count,
            residual: best.residual,
            quality: quality,
            clamped: false
        )
    }

    /// The closed-form weighted least-squares position from differences of squared horizontal ranges.
    static func linearSolution(_ ranges: [RangeMeasurement]) -> Point? {
        // Subtracting range i's circle equation from the reference's leaves one linear equation per agent.
        guard let reference = ranges.min(by: { $0.sigma < $1.sigma }) else { return nil }
        let h0 = reference.horizontal
        var a11 = 0.0
        var a12 = 0.0
        var a22 = 0.0
        var b1 = 0.0
        var b2 = 0.0
        for range in ranges where range.anchor != reference.anchor {
            let ax = 2 * (range.anchor.x - reference.anchor.x)
            let ay = 2 * (range.anchor.y - reference.anchor.y)
            let h = range.horizontal
            let rhs = h0 * h0 - h * h + range.anchor.dot(range.anchor) - reference.anchor.dot(reference.anchor)
            let weight = 1 / (range.sigma * range.sigma + reference.sigma * reference.sigma)
            a11 += weight * ax * ax
            a12 += weight * ax * ay
            a22 += weight * ay * ay
            b1 += weight * ax * rhs
            b2 += weight * ay * rhs
        }
        let determinant = a11 * a22 - a12 * a12
        guard determinant > 1e-9 * max(a11 * a22, 1e-300) else { return nil }
        let point = Point(x: (a22 * b1 - a12 * b2) / determinant, y: (a11 * b2 - a12 * b1) / determinant)
        return point.isFinite ? point : nil
    }

    /// The cost per range below which a fit is good enough to stop trying other starts (a normalised residual of
    /// half a sigma per range).
    static let goodFitCost = 0.25

    struct Solution {
        var position: Point
        var cost: Double
        var accuracy: Double
        var residual: Double
        var converged: Bool
        /// How many times the cost was evaluated (steps taken and steps refused).
        var evaluations: Int
    }

    /// A weak prior (σ = 1 km) toward the weighted centroid keeps degenerate layouts finite without biasing
    /// poorly conditioned ones by more than a fraction of a millimetre.
    static let priorSigma = 1000.0

    /// - Parameter extent: the floor's width and depth; the accuracy takes into account that the tag is somewhere
    ///   on the floor (a uniform spread over the extent, as a Gaussian of the same variance), so that a direction the
    ///   ranges barely constrain reads as "anywhere across this corridor", not as tens of metres.
    static func levenbergMarquardt(_ model: ResidualModel, start: Point, prior: Point, extent: Point? = nil)
        -> Solution
    {
        let ranges = model.ranges
        var position = start
        var lambda = 1e-3
        // One pass over the ranges gives a position's cost and its normal equations together: a candidate that is
        // taken is where the next step starts, so its logarithms are not computed twice.
        var current = model.evaluate(at: position, prior: prior)
        var evaluations = 1
        var converged = false
        for _ in 0..<100 {
            // Newton's equations (H + λ diag) δ = −JᵀW r, 2×2, with the full Hessian where it is positive definite
            // (quadratic convergence, where Gauss–Newton's JᵀWJ alone converges only linearly on residuals the size
            // of these), else JᵀWJ.
            let n11 = current.a11 + current.h11
            let n12 = current.a12 + current.h12
            let n22 = current.a22 + current.h22
            let newton = n11 > 0 && n22 > 0 && n11 * n22 - n12 * n12 > 1e-12 * n11 * n22
            let a11 = newton ? n11 : current.a11
            let a12 = newton ? n12 : current.a12
            let a22 = newton ? n22 : current.a22
            let g1 = current.g1
            let g2 = current.g2
            var improved = false
            for _ in 0..<10 {
                let b11 = a11 * (1 + lambda)
                let b22 = a22 * (1 + lambda)
                let determinant = b11 * b22 - a12 * a12
                guard determinant > 1e-300, determinant.isFinite else {
                    lambda *= 10
                    continue
                }
                let stepX = -(b22 * g1 - a12 * g2) / determinant
                let stepY = -(b11 * g2 - a12 * g1) / determinant
                // Never step more than 20 m at once: a far-off minimum is not worth the runaway.
                let stepLength = (stepX * stepX + stepY * stepY).squareRoot()
                let scale = stepLength > 20 ? 20 / stepLength : 1
                let candidate = Point(x: position.x + stepX * scale, y: position.y + stepY * scale)
                let evaluation = model.evaluate(at: candidate, prior: prior)
                evaluations += 1
                if evaluation.cost <= current.cost {
                    let decrease = current.cost - evaluation.cost
                    position = candidate
                    current = evaluation
                    lambda = max(lambda / 10, 1e-9)
                    improved = true
                    // Done when the step is under 0.1 mm or the cost barely moves. (With Gauss–Newton's matrix
                    // alone, a fit took 41 evaluations on average in the engine bench; with the Hessian, 10.)
                    if stepLength * scale < 1e-4 || decrease <= 1e-9 * evaluation.cost { converged = true }
                    break
                }
                lambda *= 10
            }
            if converged || !improved {
                converged = true
                break
            }
        }
        let (accuracy, residual) = spread(at: current, rangeCount: ranges.count, extent: extent)
        return Solution(
            position: position,
            cost: current.cost,
            accuracy: accuracy,
            residual: residual,
            converged: converged,
            evaluations: evaluations
        )
    }

    /// The fix's accuracy (the RMS of its position's spread, metres) and the RMS of its normalised residuals, from
    /// the information matrix at the solution (`solution`, of `rangeCount` ranges), scaled up when the ranges
    /// disagree, and bounded by the floor's `extent`.
    private static func spread(
        at solution: ResidualModel.Evaluation, rangeCount: Int, extent: Point?
    ) -> (accuracy: Double, residual: Double) {
        var boundX = 0.0
        var boundY = 0.0
        if let extent, extent.x > 0, extent.y > 0 {
            boundX = 12 / (extent.x * extent.x)
            boundY = 12 / (extent.y * extent.y)
        }
        let chiSquared = solution.chiSquared
        let degrees = Double(max(rangeCount - 2, 1))
        let scale = max(1, chiSquared / degrees)
        // The floor's bound is information independent of the ranges, so it is not scaled with their misfit.
        let b11 = solution.a11 / scale + boundX
        let b22 = solution.a22 / scale + boundY
        let b12 = solution.a12 / scale
        let determinant = b11 * b22 - b12 * b12
        let trace = determinant > 1e-300 ? (b11 + b22) / determinant : priorSigma * priorSigma * 2
        return (min(trace.squareRoot(), 1000), (chiSquared / Double(rangeCount)).squareRoot())
    }

    /// The residuals of a set of ranges.
    ///
    /// Each residual compares logarithms of ranges (that is, dB): RSSI noise is additive in dB, so a range is
    /// log-normal and comparing logarithms, with the relative sigma, is the maximum-likelihood fit. Comparing metres
    /// instead, weighted by each measured range's own sigma, favours ranges that came out short and pulls the fix
    /// toward them.
    struct ResidualModel {
        let ranges: [RangeMeasurement]
        private let logRanges: [Double]
        private let weights: [Double]

        init(ranges: [RangeMeasurement]) {
            self.ranges = ranges
            logRanges = ranges.map { naturalLog(max($0.range, 1e-3)) }
            weights = ranges.map { range in
                let relativeSigma = max(range.sigma / max(range.range, 1e-3), 1e-6)
                return 1 / (relativeSigma * relativeSigma)
            }
        }

        @inline(__always)
        func term(_ index: Int, at position: Point)
            -> (residual: Double, weight: Double, jx: Double, jy: Double, squared: Double)
        {
            let range = ranges[index]
            let dx = position.x - range.anchor.x
            let dy = position.y - range.anchor.y
            let squared = max(dx * dx + dy * dy + range.heightDifference * range.heightDifference, 1e-12)
            let residual = 0.5 * naturalLog(squared) - logRanges[index]
            return (residual, weights[index], dx / squared, dy / squared, squared)
        }

        /// The cost, the weighted squared residuals and the normal equations (with the prior) at one position.
        struct Evaluation {
            var cost: Double
            var chiSquared: Double
            var a11: Double
            var a12: Double
            var a22: Double
            var g1: Double
            var g2: Double
            /// The cost's Hessian less the Gauss–Newton part above: each residual times its own curvature.
            var h11: Double
            var h12: Double
            var h22: Double
        }

        func evaluate(at position: Point, prior: Point) -> Evaluation {
            let priorWeight = 1 / (priorSigma * priorSigma)
            var evaluation = Evaluation(
                cost: 0, chiSquared: 0, a11: priorWeight, a12: 0, a22: priorWeight,
                g1: priorWeight * (position.x - prior.x), g2: priorWeight * (position.y - prior.y),
                h11: 0, h12: 0, h22: 0)
            for index in ranges.indices {
                let term = term(index, at: position)
                let weighted = term.weight * term.residual
                evaluation.chiSquared += weighted * term.residual
                evaluation.a11 += term.weight * term.jx * term.jx
                evaluation.a12 += term.weight * term.jx * term.jy
                evaluation.a22 += term.weight * term.jy * term.jy
                evaluation.g1 += term.weight * term.jx * term.residual
                evaluation.g2 += term.weight * term.jy * term.residual
                // r = ½ ln s with s = dx² + dy² + h²: ∇²r = I / s − 2 v vᵀ / s², where v / s is (jx, jy).
                let curvature = weighted / term.squared
                evaluation.h11 += curvature * (1 - 2 * term.jx * term.jx * term.squared)
                evaluation.h12 -= curvature * 2 * term.jx * term.jy * term.squared
                evaluation.h22 += curvature * (1 - 2 * term.jy * term.jy * term.squared)
            }
            let px = (position.x - prior.x) / priorSigma
            let py = (position.y - prior.y) / priorSigma
            evaluation.cost = evaluation.chiSquared + px * px + py * py
            return evaluation
        }
    }

    /// The best-fit line through the agents when they stand (nearly) in a line, else nil.
    static func collinearLine(_ ranges: [RangeMeasurement]) -> Line? {
        let count = Double(ranges.count)
        let mean = ranges.reduce(Point(x: 0, y: 0)) { $0 + $1.anchor } * (1 / count)
        var sxx = 0.0
        var sxy = 0.0
        var syy = 0.0
        for range in ranges {
            let d = range.anchor - mean
            sxx += d.x * d.x
            sxy += d.x * d.y
            syy += d.y * d.y
        }
        sxx /= count
        sxy /= count
        syy /= count
        let halfTrace = (sxx + syy) / 2
        let root = ((sxx - syy) * (sxx - syy) / 4 + sxy * sxy).squareRoot()
        let major = halfTrace + root
        let minor = max(halfTrace - root, 0)
        // Collinear when the spread across the line is under 10 cm or under 1 % of the spread along it.
        guard minor.squareRoot() < 0.1 || minor < 1e-4 * major else { return nil }
        var direction =
            abs(sxy) > 1e-12 ? Point(x: major - syy, y: sxy) : (sxx >= syy ? Point(x: 1, y: 0) : Point(x: 0, y: 1))
        let length = (direction.dot(direction)).squareRoot()
        direction = direction * (1 / length)
        return Line(point: mean, direction: direction)
    }
}

/// An infinite line through a point along a unit direction.
struct Line {
    var point: Point
    var direction: Point

    func distance(to other: Point) -> Double { abs(direction.cross(other - point)) }

    func reflect(_ other: Point) -> Point {
        let offset = other - point
        let along = direction * offset.dot(direction)
        let across = offset - along
        return point + along - across
    }
}
