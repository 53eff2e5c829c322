/// The accuracy to expect on a floor, from the map alone (before any hardware is bought): per cell of a planning
/// raster, the radius that should hold about 68 % of the locator's fixes of a tag standing there, and per zone its
/// mean and the share of its cells whose radius reaches into another zone.
///
/// It is the same quantity as ``TagEstimate/accuracy`` (what the locator publishes, fitted so that about 68 % of
/// fixes fall within it), made of the same two parts (TagEstimator+Accuracy.swift), added in quadrature:
/// - **the posterior's spread**, from the readings' noise: the Cramér–Rao bound on (x, y) of one update's readings
///   under the tracker's own radio model (``pathGain(from:heightAboveTag:exponent:walls:to:)`` with each agent's
///   height and exponent and the floor's walls; RSSI spread ``GridFilter/Configuration/rssiSigma`` plus
///   ``GridFilter/Configuration/rssiSigmaPerMetre`` per metre; the next floors' agents through the slab, as the
///   tracker weighs them; a surveyed radio map's residual where the map has one), with the tag's power unknown
///   (prior ``GridFilter/Configuration/offsetSigma``, a nuisance marginalised out); then the steady state of a
///   filter that takes such an update every ``Configuration/updateInterval`` while its posterior spreads by the
///   tracker's walking spread (PlanBound.swift); its RMS radius times ``Configuration/boundScale``;
/// - **the model's error**: ``GridFilter/Configuration/modelErrorPerMetre`` times the distance to the third-nearest
///   agent on the floor that hears the tag (the farthest of fewer);
///
/// both in quadrature, times the map's ``RadioModel/accuracyScale`` (which `whereabouts calibrate` writes), as the
/// locator multiplies what it publishes.
///
/// So the plan predicts both the accuracy the locator will publish and the error it will make: on the demo office
/// and the four harness scenarios, the simulator's 68th-percentile error per zone is 0.6–1.6 times the plan's, and the
/// locator's mean published accuracy 0.87–1.11 times (PlanningAgreementTests; docs/map.md, "Expected accuracy").
///
/// An agent counts when its expected level (the map's measured power plus its path gain) is at least
/// ``Configuration/sensitivity``, and at most the ``GridFilter/Configuration/maximumAgentsPerUpdate`` loudest count,
/// as in the tracker. A wall counts by the level it takes: in dB a constant loss does not change how fast the level
/// changes with position, so it costs accuracy where it takes an agent out of hearing. With fewer than three agents
/// the bound is wide but finite: the tag is known to be on the floor, which the bound takes as a prior as wide as a
/// guess spread evenly over the floor's box (σ = side / √12 per axis), and no cell's accuracy exceeds the floor's
/// diagonal. A cell no agent hears has no accuracy (nil): the locator publishes no fix there.
public struct AccuracyPlan: Sendable {
    /// How a plan is made.
    public struct Configuration: Sendable, Hashable {
        /// The planning raster's cell, in metres; nil: 0.5 m, coarser (in steps of 0.25 m) on a floor that would
        /// take more than ``maximumCells`` or ``maximumLinks``.
        public var cellSize: Double? = nil
        /// At most this many cells on a floor (200 × 200 m at 1 m).
        public var maximumCells = 40_000
        /// At most this many (cell, agent in reach) pairs on a floor: each costs a path gain through the walls.
        public var maximumLinks = 600_000
        /// An agent whose expected level at a cell is below this (dBm) is taken not to hear a tag there: 5 dB (one
        /// shadowing σ) above the −100 dBm at which receivers lose adverts, so an agent counted hears most of them.
        public var sensitivity: Double = -95
        /// The grid posterior's spread against the steady-state bound (narrower: for one, the filter learns the
        /// tag's power as it goes, which the bound forgets at every update). Fitted once, so that the plan's zone
        /// means equal the locator's mean published accuracy (the median over the 36 zones of the demo office and
        /// the harness scenarios, simulated with seed 1: 1.01); the one fitted constant.
        public var boundScale: Double = 0.7
        /// Seconds between the locator's updates of a tag (the agents' batching window): how often the filter
        /// takes a round of readings, while its posterior spreads by the tracker's walking spread.
        public var updateInterval: Double = 1
        /// The tracker whose accuracy is planned: its RSSI spread, power prior, model error, reach and agents.
        public var tracker = GridFilter.Configuration()
        /// The share of area heard by fewer than this many agents is reported: three ranges fix a position.
        public var minimumAgents = 3

        public init() {}
    }

    /// One zone's plan.
    public struct ZonePlan: Sendable, Hashable {
        public var key: ZoneKey
        public var name: String
        /// The mean expected accuracy over the zone's cells that agents hear, in metres; nil when none does.
        public var accuracy: Double?
        /// The zone's cells on the raster (the cells it covers most of), and how many of them agents hear.
        public var cells: Int
        public var heardCells: Int
        /// The zone's narrowest width, in metres: that of its convex hull (a rectangle's shorter side, however
        /// turned).
        public var width: Double
        /// The share of the zone's heard cells whose expected radius reaches into another zone.
        public var confusedShare: Double
        /// The zones those radii reach, most reached first, each with the share of the zone's heard cells.
        public var confusedWith: [Confusion]
    }

    /// Another zone a zone's fixes may land in.
    public struct Confusion: Sendable, Hashable {
        public var minor: UInt16
        public var share: Double
    }

    /// The floor's major.
    public let floor: UInt16
    /// The corner of cell (0, 0) with the smallest coordinates; rows run up the plan (row 0 at the smallest y).
    public let origin: Point
    /// The side of a cell, in metres.
    public let cellSize: Double
    public let columns: Int
    public let rows: Int
    /// Per cell, row by row: whether a person can stand there (its centre inside the outline, outside obstacles).
    public let free: [Bool]
    /// Per cell: the expected accuracy in metres; nil where not free or no agent hears a tag.
    public let accuracy: [Double?]
    /// Per cell: how many agents on the floor itself hear a tag there (0 where not free); the next floors' agents,
    /// which the bound also weighs, are not counted, as the tracker's model error does not count them.
    public let agentsHeard: [Int]
    /// The floor's zones, in map order.
    public let zones: [ZonePlan]
    /// What the plan was made with.
    public let configuration: Configuration

    /// The plan of floor `major` of `map`; nil when the map has no such floor.
    public init?(map: FloorMap, floor major: UInt16, configuration: Configuration = Configuration()) {
        guard let floor = map.floor(major: major) else { return nil }
        self.floor = major
        self.configuration = configuration
        let (low, high) = floor.outline.bounds
        let neighbours = FloorGrid.neighbours(of: floor, map: map)
        let reachable = map.agents.count { $0.floor == major || neighbours[$0.floor] != nil }
        let cellSize = Self.cellSize(
            width: high.x - low.x, height: high.y - low.y, agents: reachable, configuration: configuration)
        self.cellSize = cellSize
        origin = low
        columns = max(Int(((high.x - low.x) / cellSize).rounded(.up)), 1)
        rows = max(Int(((high.y - low.y) / cellSize).rounded(.up)), 1)
        let floorZones = map.zones(onFloor: major)
        let cells = FloorGrid.cells(
            outline: floor.outline, zones: floorZones,
            obstacles: map.obstacles.filter { $0.floor == major }.map(\.polygon), origin: low, cellSize: cellSize,
            columns: columns, rows: rows)
        free = cells.free
        var bound = PlanBound(map: map, floor: floor, neighbours: neighbours, configuration: configuration)
        var accuracy = [Double?](repeating: nil, count: columns * rows)
        var heard = [Int](repeating: 0, count: columns * rows)
        for row in 0..<rows {
            for column in 0..<columns where cells.free[row * columns + column] {
                let centre = Point(
                    x: low.x + (Double(column) + 0.5) * cellSize, y: low.y + (Double(row) + 0.5) * cellSize)
                let cell = bound.expected(at: centre)
                accuracy[row * columns + column] = cell.accuracy
                heard[row * columns + column] = cell.agents
            }
        }
        self.accuracy = accuracy
        agentsHeard = heard
        zones = Self.zonePlans(
            floorZones, zoneOfCell: cells.zoneOfCell, secondZoneOfCell: cells.secondZoneOfCell, free: cells.free,
            accuracy: accuracy, origin: low, cellSize: cellSize, columns: columns)
    }

    /// The plan of every floor of `map`, in the map's order.
    public static func floors(of map: FloorMap, configuration: Configuration = Configuration()) -> [AccuracyPlan] {
        map.floors.compactMap { AccuracyPlan(map: map, floor: $0.major, configuration: configuration) }
    }

    /// The planning raster's cell for a `width` × `height` floor with `agents` agents on it and the floors next to
    /// it: the configured cell, else 0.5 m, coarsened in steps of 0.25 m until the floor fits the budgets.
    static func cellSize(width: Double, height: Double, agents: Int, configuration: Configuration) -> Double {
        if let set = configuration.cellSize, set.isFinite, set > 0 { return set }
        let reach = configuration.tracker.gainRadius
        func fits(_ size: Double) -> Bool {
            let columns = max((width / size).rounded(.up), 1)
            let rows = max((height / size).rounded(.up), 1)
            // An agent reaches the cells of a box 2 × gainRadius across, or the whole floor when it is smaller.
            let box = min(columns, (2 * reach / size).rounded(.up)) * min(rows, (2 * reach / size).rounded(.up))
            return columns * rows <= Double(configuration.maximumCells)
                && Double(agents) * box <= Double(configuration.maximumLinks)
        }
        var size = 0.5
        // Bounded: past one cell for the whole floor (and its agents' reach) nothing coarser helps.
        while !fits(size), size < max(width, height, 2 * reach) { size += 0.25 }
        return size
    }

    /// The centre of a cell.
    public func centre(column: Int, row: Int) -> Point {
        Point(x: origin.x + (Double(column) + 0.5) * cellSize, y: origin.y + (Double(row) + 0.5) * cellSize)
    }

    /// The expected accuracy at a point of the floor: its cell's; nil outside the raster, where not free or where no
    /// agent hears a tag.
    public func accuracy(at point: Point) -> Double? {
        let column = Int(((point.x - origin.x) / cellSize).rounded(.down))
        let row = Int(((point.y - origin.y) / cellSize).rounded(.down))
        guard column >= 0, row >= 0, column < columns, row < rows else { return nil }
        return accuracy[row * columns + column]
    }

    /// The free cells.
    public var freeCells: Int { free.count { $0 } }

    /// The `q` quantile (0…1) of the expected accuracy over the free cells agents hear; nil when there are none.
    public func quantile(_ q: Double) -> Double? {
        let values = accuracy.compactMap { $0 }.sorted()
        guard !values.isEmpty else { return nil }
        let position = min(max(q, 0), 1) * Double(values.count - 1)
        let below = Int(position.rounded(.down))
        let above = min(below + 1, values.count - 1)
        let fraction = position - Double(below)
        return values[below] * (1 - fraction) + values[above] * fraction
    }

    /// The share of the free cells (of the free area) heard by fewer than ``Configuration/minimumAgents`` agents;
    /// 0 on a floor with no free cell.
    public var sparseShare: Double {
        let total = freeCells
        guard total > 0 else { return 0 }
        let sparse = free.indices.count { free[$0] && agentsHeard[$0] < configuration.minimumAgents }
        return Double(sparse) / Double(total)
    }
}
