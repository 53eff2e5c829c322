/// How likely a tag is to be in one zone.
public struct ZoneProbability: Sendable, Hashable {
    /// The zone.
    public var zone: ZoneKey
    /// The probability that the tag is in it, 0 to 1.
    public var probability: Double

    public init(zone: ZoneKey, probability: Double) {
        self.zone = zone
        self.probability = probability
    }
}

/// The probability mass per zone of a floor for one tag: what the zone decision weighs.
///
/// From the grid filter, the posterior mass of the cells whose centres are in each zone. From a position and its
/// accuracy alone (the trilateration path), ``init(position:accuracy:zones:outline:obstacles:)``: an isotropic
/// Gaussian around the position, cut to where a person can stand on the floor, integrated over each zone.
struct ZoneEvidence: Sendable, Hashable {
    /// Zones of the floor, in map order: all of them (the grid filter's), or those within reach of a position (the
    /// trilateration path's); a zone not listed has no mass.
    var zones: [ZoneKey]
    /// The mass in each, in the same order; they sum to at most 1, and what is left is outside every zone.
    var mass: [Double]

    /// Zones less likely than this are left out of ``reported``: a payload lists the zones a tag may be in, not
    /// every zone of the floor.
    static let reportedProbability = 0.01

    init(zones: [ZoneKey], mass: [Double]) {
        self.zones = zones
        self.mass = mass
    }

    /// The mass outside every zone.
    var outside: Double { max(1 - mass.reduce(0, +), 0) }

    /// The mass of a zone, or of no zone for nil.
    func probability(of zone: ZoneKey?) -> Double {
        guard let zone else { return outside }
        return zones.firstIndex(of: zone).map { mass[$0] } ?? 0
    }

    /// The zones of at least ``reportedProbability``, most likely first (map order among equals).
    var reported: [ZoneProbability] {
        zip(zones, mass).enumerated()
            .filter { $0.element.1 >= Self.reportedProbability }
            .sorted { ($0.element.1, -$0.offset) > ($1.element.1, -$1.offset) }
            .map { ZoneProbability(zone: $0.element.0, probability: $0.element.1) }
    }

    /// The mass per zone of a position known to `accuracy` metres, for the zones within reach of it (the others
    /// have none).
    ///
    /// `accuracy` is taken as the RMS distance of the true position from the estimate, as both the grid filter's
    /// spread and the trilateration's accuracy are: a circular Gaussian with σ = accuracy / √2 on each axis. It is
    /// integrated by the midpoint rule on a 12 × 12 lattice over ±3σ (mass beyond, about 0.5 %, is left out),
    /// and conditioned on the free floor: lattice points outside the outline or inside an obstacle carry no mass,
    /// because nobody stands there. A position on a straight boundary between two zones gives each exactly half:
    /// the lattice is symmetric and has no point on the boundary. Where every zone the ±3σ box touches is an
    /// axis-aligned rectangle, no obstacle is near, and the box is inside the outline or the outline is a rectangle
    /// too, the same truncated Gaussian is integrated exactly instead (a product of error functions), which costs a
    /// fraction of the lattice.
    init(position: Point, accuracy: Double, zones floorZones: [Zone], outline: Polygon, obstacles: [Polygon] = []) {
        let sigma = max(accuracy, Self.minimumAccuracy) / 2.squareRoot()
        let reach = Self.lattice.reach * sigma
        let low = Point(x: position.x - reach, y: position.y - reach)
        let high = Point(x: position.x + reach, y: position.y + reach)
        func overlaps(_ bounds: (minimum: Point, maximum: Point)) -> Bool {
            bounds.minimum.x <= high.x && bounds.maximum.x >= low.x && bounds.minimum.y <= high.y
                && bounds.maximum.y >= low.y
        }
        let candidates = floorZones.indices.filter { overlaps(floorZones[$0].polygon.bounds) }
        // Only the zones the box reaches can have mass: a floor of 200 rooms lists a handful.
        zones = candidates.map { floorZones[$0].key }
        mass = [Double](repeating: 0, count: candidates.count)
        let blocking = obstacles.filter { overlaps($0.bounds) }
        // Zones drawn as axis-aligned rectangles, on free floor (the box inside the outline, no obstacle near):
        // the integral is a product of two one-dimensional ones, exact, at the cost of four erfc per zone.
        let candidateRectangles = candidates.compactMap { Self.rectangle(floorZones[$0].polygon) }
        // The box inside the outline: by its corners for a rectangular outline, else by the polygon test.
        let frame = Self.rectangle(outline)
        let insideOutline =
            frame.map {
                $0.minimum.x <= low.x && $0.minimum.y <= low.y && $0.maximum.x >= high.x && $0.maximum.y >= high.y
            } ?? outline.encloses(Polygon([low, Point(x: high.x, y: low.y), high, Point(x: low.x, y: high.y)]))
        if blocking.isEmpty, candidateRectangles.count == candidates.count, insideOutline || frame != nil {
            func share(_ from: Double, _ to: Double, _ centre: Double) -> Double {
                let a = max(from, centre - reach)
                let b = min(to, centre + reach)
                guard b > a else { return 0 }
                return Self.normalMass((a - centre) / sigma, (b - centre) / sigma)
            }
            // The free floor within the box: all of it, or the part inside a rectangular outline.
            let floor = insideOutline ? (minimum: low, maximum: high) : frame ?? (low, high)
            let total =
                share(floor.minimum.x, floor.maximum.x, position.x)
                * share(floor.minimum.y, floor.maximum.y, position.y)
            if total > 0 {
                for (slot, rectangle) in candidateRectangles.enumerated() {
                    mass[slot] = min(
                        share(rectangle.minimum.x, rectangle.maximum.x, position.x)
                            * share(rectangle.minimum.y, rectangle.maximum.y, position.y) / total, 1)
                }
                return
            }
        }
        var total = 0.0
        var inZone = [Double](repeating: 0, count: candidates.count)
        // Taken out once: reading a polygon out of the zones for every lattice point copied it each time.
        let candidatePolygons = candidates.map { floorZones[$0].polygon }
        for point in Self.lattice.points {
            let sample = Point(x: position.x + sigma * point.x, y: position.y + sigma * point.y)
            guard insideOutline || outline.contains(sample), !blocking.contains(where: { $0.contains(sample) })
            else { continue }
            total += point.weight
            // Zones do not overlap (the map checks), so the first that holds the point is the one.
            for (slot, polygon) in candidatePolygons.enumerated() where polygon.contains(sample) {
                inZone[slot] += point.weight
                break
            }
        }
        // A position whose whole neighbourhood is off the free floor (it should not happen: estimates are kept
        // inside the outline): fall back to the zone it is in, if any.
        guard total > 0 else {
            if let zone = floorZones.first(where: { $0.polygon.contains(position) }) {
                zones = [zone.key]
                mass = [1]
            }
            return
        }
        for index in mass.indices { mass[index] = inZone[index] / total }
    }

    /// The standard normal's mass between `a` and `b` (a ≤ b).
    private static func normalMass(_ a: Double, _ b: Double) -> Double {
        let scale = 1 / 2.squareRoot()
        return 0.5 * (complementaryErrorFunction(a * scale) - complementaryErrorFunction(b * scale))
    }

    /// The corners of a polygon that is an axis-aligned rectangle, else nil.
    private static func rectangle(_ polygon: Polygon) -> (minimum: Point, maximum: Point)? {
        guard polygon.vertices.count == 4 else { return nil }
        for edge in polygon.edges where edge.start.x != edge.end.x && edge.start.y != edge.end.y { return nil }
        return polygon.bounds
    }

    /// Accuracies below this (metres) are taken as this: no estimate is better than a few centimetres.
    static let minimumAccuracy = 0.05

    /// The integration lattice, in units of σ: points and their Gaussian weights.
    private static let lattice: (points: [(x: Double, y: Double, weight: Double)], reach: Double) = {
        let side = 12
        let reach = 3.0
        let step = 2 * reach / Double(side)
        var points: [(x: Double, y: Double, weight: Double)] = []
        points.reserveCapacity(side * side)
        for row in 0..<side {
            for column in 0..<side {
                let x = -reach + (Double(column) + 0.5) * step
                let y = -reach + (Double(row) + 0.5) * step
                points.append((x, y, exponential(-(x * x + y * y) / 2)))
            }
        }
        return (points, reach)
    }()
}
