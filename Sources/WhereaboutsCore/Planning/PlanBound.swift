/// The expected accuracy at one place of a floor (``AccuracyPlan``): the posterior spread that the tracker's radio
/// model allows there, in quadrature with the tracker's model error.
///
/// Each agent that hears the tag gives one reading `r = P + g(x, y) + noise`, the noise Gaussian with the variance
/// the tracker gives it there, `P` the tag's power (unknown, prior σ ``GridFilter/Configuration/offsetSigma``).
/// The Fisher information of (x, y, P) of one update is the sum over agents of ∇μ ∇μᵀ / σ², ∇μ = (∂g/∂x, ∂g/∂y, 1),
/// plus the power's prior; with the power marginalised out (a Schur complement), it bounds one update's (x, y)
/// covariance (Cramér–Rao). Walls change `g` in steps, which carry no information about a small move, so only the
/// log-distance term has a gradient: a wall counts by the level it takes (an agent behind it may no longer hear).
/// Updates add up as the filter walks (``rmsBound(_:)``), and the floor bounds what no reading informs.
struct PlanBound {
    /// One agent as it can weigh in on this floor: plain values only, so that reading one from ``links`` in the
    /// loop over cells copies no reference (retains were a tenth of a large floor's cost); its walls and radio map
    /// are in ``sectors`` and ``surfaces`` at the same index.
    struct Link {
        let position: Point
        let heightAboveTag: Double
        let exponent: Double
        /// Whether it is on the next floor up or down (through the slab).
        let acrossFloor: Bool
        /// Whether it has a radio map on this floor (a surveyed agent of the floor itself).
        let surveyed: Bool
    }

    /// What the plan says of one place.
    struct Cell {
        /// Metres; nil when no agent hears a tag there.
        var accuracy: Double?
        /// Agents on the floor that hear it.
        var agents: Int
    }

    private let links: [Link]
    /// Per link, the floor's walls that reach the box its gains are tabled over, by direction.
    private let sectors: [WallSectors]
    /// Per link, its radio map (an empty one when not ``Link/surveyed``).
    private let surfaces: [RadioSurface]
    private let power: Double
    private let configuration: AccuracyPlan.Configuration
    private let slabLoss: Double
    /// The position prior's information per axis (1 / σ², σ = the box's side / √12), and the power's.
    private let positionPrior: (x: Double, y: Double)
    private let powerPrior: Double
    /// No accuracy exceeds this: the floor's diagonal.
    private let cap: Double
    /// The map's ``RadioModel/accuracyScale``, which multiplies the published accuracy as it does here.
    private let scale: Double
    /// The agents heard at the place being planned (reused from place to place, so a place allocates nothing).
    private var heard: [Heard] = []

    init(map: FloorMap, floor: Floor, neighbours: [UInt16: Floor], configuration: AccuracyPlan.Configuration) {
        self.configuration = configuration
        let tracker = configuration.tracker
        power = map.model.measuredPower
        slabLoss = map.model.floorLoss
        let (low, high) = floor.outline.bounds
        let width = max(high.x - low.x, 0.1)
        let height = max(high.y - low.y, 0.1)
        positionPrior = (12 / (width * width), 12 / (height * height))
        powerPrior = 1 / max(tracker.offsetSigma * tracker.offsetSigma, 1e-6)
        cap = (width * width + height * height).squareRoot()
        scale = map.model.accuracyScale
        let heights = FloorGrid.agentHeightsAboveTag(on: floor, map: map)
        let radio = RadioConstants(map: map)
        let floorWalls = map.walls.filter { $0.floor == floor.major }
        let reach = tracker.gainRadius
        var links: [Link] = []
        var sectors: [WallSectors] = []
        var surfaces: [RadioSurface] = []
        for (index, agent) in map.agents.enumerated() {
            let across = agent.floor != floor.major
            guard !across || neighbours[agent.floor] != nil else { continue }
            let p = agent.position
            // As FloorGrid's tables, only walls that reach the agent's box can cross a path to a cell in it.
            let walls = floorWalls.filter { wall in
                let s = wall.segment
                return max(s.start.x, s.end.x) >= p.x - reach && min(s.start.x, s.end.x) <= p.x + reach
                    && max(s.start.y, s.end.y) >= p.y - reach && min(s.start.y, s.end.y) <= p.y + reach
            }
            let surface = across ? nil : agent.radioSurface
            links.append(
                Link(
                    position: p, heightAboveTag: heights[index], exponent: radio.pathLossExponent(ofAgent: index),
                    acrossFloor: across, surveyed: surface != nil))
            sectors.append(WallSectors(walls: walls, around: p))
            surfaces.append(
                surface
                    ?? RadioSurface(
                        origin: p, cellSize: 1, columns: 0, rows: 0, mean: [], deviation: [], priorDeviation: 0))
        }
        self.links = links
        self.sectors = sectors
        self.surfaces = surfaces
    }

    /// One agent's say at a place: its expected level (dBm), its reading's information weight (1 / σ²), the
    /// gradient of its level (dB per metre), and its horizontal distance when on the floor itself.
    private struct Heard {
        var level: Double
        var weight: Double
        var gradient: (x: Double, y: Double)
        var ownDistance: Double?
    }

    /// The expected accuracy at `point` and the agents on the floor that hear a tag there.
    mutating func expected(at point: Point) -> Cell {
        hearing(at: point)
        guard !heard.isEmpty else { return Cell(accuracy: nil, agents: 0) }
        // The third-nearest agent on the floor that hears the tag (the farthest of fewer), kept by insertion.
        var nearest = (Double.infinity, Double.infinity, Double.infinity)
        var own = 0
        for agent in heard {
            guard let distance = agent.ownDistance else { continue }
            own += 1
            if distance < nearest.0 {
                nearest = (distance, nearest.0, nearest.1)
            } else if distance < nearest.1 {
                nearest = (nearest.0, distance, nearest.1)
            } else if distance < nearest.2 {
                nearest.2 = distance
            }
        }
        let third = own == 0 ? 0 : own == 1 ? nearest.0 : own == 2 ? nearest.1 : nearest.2
        // The tracker weighs at most this many, the loudest.
        let most = configuration.tracker.maximumAgentsPerUpdate
        if heard.count > most {
            heard.sort { $0.level > $1.level }
            heard.removeLast(heard.count - most)
        }
        let tracker = configuration.tracker
        let noise = tracker.accuracyPerSpread * configuration.boundScale * rmsBound(heard)
        let model = tracker.modelErrorPerMetre * third
        return Cell(accuracy: min(scale * (noise * noise + model * model).squareRoot(), cap), agents: own)
    }

    /// Makes ``heard`` the agents that hear a tag at `point`, with what each says.
    private mutating func hearing(at point: Point) {
        let tracker = configuration.tracker
        let reach = tracker.gainRadius
        let sigma2 = tracker.rssiSigma * tracker.rssiSigma
        let slabVariance = tracker.floorLossSigma * tracker.floorLossSigma
        heard.removeAll(keepingCapacity: true)
        for index in links.indices {
            let link = links[index]
            let dx = point.x - link.position.x
            let dy = point.y - link.position.y
            guard abs(dx) <= reach, abs(dy) <= reach else { continue }
            let squared = dx * dx + dy * dy + link.heightAboveTag * link.heightAboveTag
            let distance = squared.squareRoot()
            var gain =
                pathGain(
                    from: link.position, heightAboveTag: link.heightAboveTag, exponent: link.exponent,
                    walls: sectors[index].walls(toward: point), to: point) - (link.acrossFloor ? slabLoss : 0)
            var variance: Double
            if link.surveyed {
                let residual = surfaces[index].residual(at: point)
                gain += residual.mean
                variance = sigma2 + residual.variance
            } else {
                let growth = tracker.rssiSigmaPerMetre * max(distance, 0.1)
                variance = sigma2 + growth * growth + (link.acrossFloor ? slabVariance : 0)
            }
            guard power + gain >= configuration.sensitivity else { continue }
            // d(−10 n log10 d)/dx = −10 n / ln 10 · dx / d²; flat within the model's 0.1 m floor on distance.
            let slope = distance > 0.1 ? -10 * link.exponent / 2.302_585_092_994_046 / squared : 0
            heard.append(
                Heard(
                    level: power + gain, weight: 1 / max(variance, 1e-6), gradient: (slope * dx, slope * dy),
                    ownDistance: link.acrossFloor ? nil : (dx * dx + dy * dy).squareRoot()))
        }
    }

    /// The RMS radius of the filter's steady spread from `heard`'s readings, the tag's power marginalised out.
    ///
    /// One update's information on (x, y) is the Schur complement of the power in the Fisher information. Along each
    /// of its principal axes the filter is a random walk (the tracker spreads its posterior by
    /// ``GridFilter/Configuration/walkingSpread``·√dt between updates, q = walkingSpread² × dt) measured every
    /// ``AccuracyPlan/Configuration/updateInterval`` with variance R = 1 / information: its steady posterior
    /// variance is (−q + √(q² + 4qR)) / 2, near R when R is small against q (one update says it all), near √(qR)
    /// when it is large (updates add up over the ground walked meanwhile). Last, the floor: the position prior
    /// (once, not per update), isotropic with the mean of the box's two axes' variances.
    private func rmsBound(_ heard: [Heard]) -> Double {
        var xx = 0.0
        var yy = 0.0
        var xy = 0.0
        var xp = 0.0
        var yp = 0.0
        var pp = powerPrior
        for agent in heard {
            let (a, b) = agent.gradient
            xx += agent.weight * a * a
            yy += agent.weight * b * b
            xy += agent.weight * a * b
            xp += agent.weight * a
            yp += agent.weight * b
            pp += agent.weight
        }
        // The (x, y) block's information with the power marginalised out, and its eigenvalues.
        let sxx = xx - xp * xp / pp
        let syy = yy - yp * yp / pp
        let sxy = xy - xp * yp / pp
        let half = (sxx + syy) / 2
        let gap = (((sxx - syy) / 2) * ((sxx - syy) / 2) + sxy * sxy).squareRoot()
        let walking = configuration.tracker.walkingSpread
        let q = walking * walking * configuration.updateInterval
        let prior = 2 / (1 / positionPrior.x + 1 / positionPrior.y)
        var variance = 0.0
        for information in [half + gap, max(half - gap, 0)] {
            // Along an axis no reading informs, the walk is unbounded: only the floor bounds it.
            let steady =
                information > 1e-12 ? (-q + (q * q + 4 * q / information).squareRoot()) / 2 : Double.infinity
            variance += 1 / (1 / steady + prior)
        }
        guard variance.isFinite, variance >= 0 else { return cap }
        return variance.squareRoot()
    }
}
