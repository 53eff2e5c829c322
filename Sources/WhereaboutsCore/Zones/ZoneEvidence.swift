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
    /// Zones of the floor with their mass, in map order: those with any (the grid filter's), or those within reach
    /// of a position (the trilateration path's); a zone not listed has none. They sum to at most 1, and what is
    /// left is outside every zone.
    ///
    /// One array of pairs, not one of zones and one of masses, and only the zones that may hold the tag: the grid
    /// filter made one per estimate, and a dense array per floor zone, alive for the whole update, made malloc a
    /// cost that grew with the tags (it no longer fit the allocator's caches).
    var masses: [ZoneProbability]

    /// Zones less likely than this are left out of ``reported``: a payload lists the zones a tag may be in, not
    /// every zone of the floor.
    static let reportedProbability = 0.01

    init(masses: [ZoneProbability]) {
        self.masses = masses
    }

    init(zones: [ZoneKey], mass: [Double]) {
        masses = zip(zones, mass).map { ZoneProbability(zone: $0, probability: $1) }
    }

    /// The zones listed, in map order.
    var zones: LazyMapSequence<[ZoneProbability], ZoneKey> { masses.lazy.map(\.zone) }

    /// The mass outside every zone.
    var outside: Double { max(1 - masses.reduce(0) { $0 + $1.probability }, 0) }

    /// The mass of a zone, or of no zone for nil.
    func probability(of zone: ZoneKey?) -> Double {
        guard let zone else { return outside }
        return masses.first { $0.zone == zone }?.probability ?? 0
    }

    /// The zones of at least ``reportedProbability``, most likely first (map order among equals).
    var reported: [ZoneProbability] {
        var copy = self
        return copy.takeReported()
    }

    /// ``reported``, made in place of ``masses``, which it leaves empty: no second array per estimate.
    mutating func takeReported() -> [ZoneProbability] {
        var result = masses
        masses = []
        // Written so that a NaN mass goes too (it is neither below nor at least the threshold), as it did when the
        // list kept what was at least the threshold: one left in would stop the sort below moving anything past it.
        result.removeAll { !($0.probability >= Self.reportedProbability) }
        // A handful at most: an insertion sort that passes no equal keeps map order among equals.
        for index in result.indices.dropFirst() {
            var slot = index
            while slot > 0, result[slot - 1].probability < result[slot].probability {
                result.swapAt(slot - 1, slot)
                slot -= 1
            }
        }
        return result
    }

    /// The mass per zone of a position known to `accuracy` metres, for the zones within reach of it (the others
    /// have none), on a floor of these zones, outline and obstacles.
    init(position: Point, accuracy: Double, zones floorZones: [Zone], outline: Polygon, obstacles: [Polygon] = []) {
        self.init(
            position: position, accuracy: accuracy,
            floor: FloorZones(zones: floorZones, outline: outline, obstacles: obstacles))
    }

    /// The mass per zone of a position known to `accuracy` metres, for the zones of `floor` within reach of it
    /// (the others have none).
    ///
    /// `accuracy` is taken as the RMS distance of the true position from the estimate, as the trilateration's
    /// track claims it: a circular Gaussian with σ = accuracy / √2 on each axis. (A published
    /// ``TagEstimate/accuracy`` is a 68 % radius: callers pass the RMS quantity, ``TagEstimate/spread``.) It is
    /// integrated by the midpoint rule on a 12 × 12 lattice over ±3σ (mass beyond, about 0.5 %, is left out),
    /// and conditioned on the free floor: lattice points outside the outline or inside an obstacle carry no mass,
    /// because nobody stands there. A position on a straight boundary between two zones gives each exactly half:
    /// the lattice is symmetric and has no point on the boundary. Where every zone the ±3σ box touches is an
    /// axis-aligned rectangle, no obstacle is near, and the box is inside the outline or the outline is a rectangle
    /// too, the same truncated Gaussian is integrated exactly instead (a product of error functions), which costs a
    /// fraction of the lattice.
    init(position: Point, accuracy: Double, floor: FloorZones) {
        let sigma = max(accuracy, Self.minimumAccuracy) / 2.squareRoot()
        let reach = Self.lattice.reach * sigma
        let box = FloorZones.Box(
            minimum: Point(x: position.x - reach, y: position.y - reach),
            maximum: Point(x: position.x + reach, y: position.y + reach))
        // Only the zones the box reaches can have mass: a floor of 200 rooms lists a handful.
        masses = []
        // The box inside the outline: by its corners for a rectangular outline, else by the polygon test.
        let insideOutline = floor.frame.map { $0.encloses(box) } ?? floor.outline.encloses(box.polygon)
        // Zones drawn as axis-aligned rectangles, on free floor (the box inside the outline, no obstacle near):
        // the integral is a product of two one-dimensional ones, exact, at the cost of four erfc per zone (none
        // along an axis where the zone spans the whole box).
        var exact = (insideOutline || floor.frame != nil) && !floor.obstacleBounds.contains { $0.overlaps(box) }
        // Neighbouring rooms share their walls' coordinates, so the tails at them are kept for the next zone.
        var tails = Tails()
        let scale = 1 / (sigma * 2.squareRoot())
        func share(_ from: Double, _ to: Double, _ centre: Double) -> Double {
            let a = max(from, centre - reach)
            let b = min(to, centre + reach)
            guard b > a else { return 0 }
            if a == centre - reach, b == centre + reach { return Self.wholeMass }
            let lower = a == centre - reach ? Self.lowerTail : tails.complementaryError((a - centre) * scale)
            let upper = b == centre + reach ? Self.upperTail : tails.complementaryError((b - centre) * scale)
            return 0.5 * (lower - upper)
        }
        // The free floor within the box: all of it, or the part inside a rectangular outline.
        var total = Self.wholeMass * Self.wholeMass
        if exact, !insideOutline, let frame = floor.frame {
            total =
                share(frame.minimum.x, frame.maximum.x, position.x)
                * share(frame.minimum.y, frame.maximum.y, position.y)
            exact = total > 0
        }
        for index in floor.bounds.indices where floor.bounds[index].overlaps(box) {
            masses.append(ZoneProbability(zone: floor.keys[index], probability: 0))
            exact = exact && floor.rectangular[index]
            guard exact else { continue }
            let rectangle = floor.bounds[index]
            masses[masses.count - 1].probability = min(
                share(rectangle.minimum.x, rectangle.maximum.x, position.x)
                    * share(rectangle.minimum.y, rectangle.maximum.y, position.y) / total, 1)
        }
        if exact { return }
        for slot in masses.indices { masses[slot].probability = 0 }
        var lattice = 0.0
        let candidates = floor.bounds.indices.filter { floor.bounds[$0].overlaps(box) }
        let blocking = floor.obstacles.indices.filter { floor.obstacleBounds[$0].overlaps(box) }
        for point in Self.lattice.points {
            let sample = Point(x: position.x + sigma * point.x, y: position.y + sigma * point.y)
            guard insideOutline || floor.outline.contains(sample),
                !blocking.contains(where: { floor.obstacles[$0].contains(sample) })
            else { continue }
            lattice += point.weight
            // Zones do not overlap (the map checks), so the first that holds the point is the one.
            for (slot, index) in candidates.enumerated() where floor.polygons[index].contains(sample) {
                masses[slot].probability += point.weight
                break
            }
        }
        // A position whose whole neighbourhood is off the free floor (it should not happen: estimates are kept
        // inside the outline): fall back to the zone it is in, if any.
        guard lattice > 0 else {
            if let index = floor.polygons.firstIndex(where: { $0.contains(position) }) {
                masses = [ZoneProbability(zone: floor.keys[index], probability: 1)]
            }
            return
        }
        for slot in masses.indices { masses[slot].probability /= lattice }
    }

    /// The standard normal's mass within the integral's reach, ±3σ.
    private static let wholeMass = normalMass(-lattice.reach, lattice.reach)
    /// erfc at the reach's ends, −3 / √2 and 3 / √2.
    private static let lowerTail = complementaryErrorFunction(-lattice.reach / 2.squareRoot())
    private static let upperTail = complementaryErrorFunction(lattice.reach / 2.squareRoot())

    /// The last few values of erfc, by argument.
    private struct Tails {
        private var arguments = SIMD8<Double>(repeating: .nan)
        private var values = SIMD8<Double>()
        private var next = 0

        mutating func complementaryError(_ x: Double) -> Double {
            for slot in 0..<8 where arguments[slot] == x { return values[slot] }
            let value = complementaryErrorFunction(x)
            arguments[next] = x
            values[next] = value
            next = (next + 1) & 7
            return value
        }
    }

    /// The standard normal's mass between `a` and `b` (a ≤ b).
    private static func normalMass(_ a: Double, _ b: Double) -> Double {
        let scale = 1 / 2.squareRoot()
        return 0.5 * (complementaryErrorFunction(a * scale) - complementaryErrorFunction(b * scale))
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

/// A floor's zones, outline and obstacles laid out for ``ZoneEvidence``: their bounds side by side, and which zones
/// are axis-aligned rectangles, found once for the map rather than at every estimate (a campus floor has hundreds of
/// zones, and an estimate reaches a handful).
struct FloorZones: Sendable {
    /// An axis-aligned box.
    struct Box: Sendable, Hashable {
        var minimum: Point
        var maximum: Point

        func overlaps(_ other: Box) -> Bool {
            minimum.x <= other.maximum.x && maximum.x >= other.minimum.x && minimum.y <= other.maximum.y
                && maximum.y >= other.minimum.y
        }

        func encloses(_ other: Box) -> Bool {
            minimum.x <= other.minimum.x && minimum.y <= other.minimum.y && maximum.x >= other.maximum.x
                && maximum.y >= other.maximum.y
        }

        var polygon: Polygon {
            Polygon([minimum, Point(x: maximum.x, y: minimum.y), maximum, Point(x: minimum.x, y: maximum.y)])
        }
    }

    /// The zones, in map order …
    let keys: [ZoneKey]
    /// … their outlines …
    let polygons: [Polygon]
    /// … their bounds …
    let bounds: [Box]
    /// … and whether each is an axis-aligned rectangle (its bounds, then, are the zone).
    let rectangular: [Bool]
    /// The floor's outline …
    let outline: Polygon
    /// … and its bounds when it is an axis-aligned rectangle.
    let frame: Box?
    /// The obstacles, and their bounds.
    let obstacles: [Polygon]
    let obstacleBounds: [Box]

    init(zones: [Zone], outline: Polygon, obstacles: [Polygon]) {
        keys = zones.map(\.key)
        polygons = zones.map(\.polygon)
        bounds = polygons.map(Self.box)
        rectangular = polygons.map(Self.isRectangle)
        self.outline = outline
        frame = Self.isRectangle(outline) ? Self.box(outline) : nil
        self.obstacles = obstacles
        obstacleBounds = obstacles.map(Self.box)
    }

    private static func box(_ polygon: Polygon) -> Box {
        Box(minimum: polygon.bounds.minimum, maximum: polygon.bounds.maximum)
    }

    /// Whether a polygon is an axis-aligned rectangle.
    private static func isRectangle(_ polygon: Polygon) -> Bool {
        polygon.vertices.count == 4
            && polygon.edges.allSatisfy { $0.start.x == $0.end.x || $0.start.y == $0.end.y }
    }
}
