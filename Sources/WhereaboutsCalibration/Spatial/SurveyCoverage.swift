public import WhereaboutsCore

/// How much of each floor a survey covered: the share of the floor's free area (inside its outline, outside its
/// obstacles) within ``radius`` metres of a surveyed position.
///
/// The fit's priors are scaled by it (``CalibrationSettings/coverageFactor(_:)``): a survey of half the floor
/// constrains each agent's offset, exponent and the tag's power only along the distances and directions it saw, and
/// offset, exponent and power trade off against each other there; the less of the floor it saw, the more the
/// defaults should count.
public struct SurveyCoverage: Sendable, Hashable {
    /// The side of the raster's cells, metres.
    public static let cellSize = 0.25
    /// A cell counts as covered when a surveyed position lies within this distance of its centre, metres.
    public var radius: Double
    /// The covered share (0…1) of each floor's free area, by floor major; floors without samples are absent.
    public var shares: [UInt16: Double]

    /// The coverage of the positions (floor, point) on the map's floors.
    public init(map: FloorMap, positions: [(floor: UInt16, point: Point)], radius: Double = 1) {
        self.radius = radius
        var shares: [UInt16: Double] = [:]
        let byFloor = Dictionary(grouping: positions, by: \.floor)
        for floor in map.floors {
            guard let points = byFloor[floor.major], !points.isEmpty else { continue }
            shares[floor.major] = Self.share(
                of: floor, obstacles: map.obstacles.filter { $0.floor == floor.major }.map(\.polygon),
                points: points.map(\.point), radius: radius)
        }
        self.shares = shares
    }

    /// The share of a floor, 0 when the survey did not reach it.
    public func share(ofFloor major: UInt16) -> Double { shares[major] ?? 0 }

    private static func share(of floor: Floor, obstacles: [Polygon], points: [Point], radius: Double) -> Double {
        let size = cellSize
        let (minimum, maximum) = floor.outline.bounds
        let columns = max(Int(((maximum.x - minimum.x) / size).rounded(.up)), 1)
        let rows = max(Int(((maximum.y - minimum.y) / size).rounded(.up)), 1)
        // Marks the cells near each distinct surveyed cell (positions pooled to the raster first: a long walk
        // costs no more than a short one).
        var surveyed = Set<Int>()
        for point in points where point.x.isFinite && point.y.isFinite {
            let column = Int(((point.x - minimum.x) / size).rounded(.down))
            let row = Int(((point.y - minimum.y) / size).rounded(.down))
            guard (0..<columns).contains(column), (0..<rows).contains(row) else { continue }
            surveyed.insert(row * columns + column)
        }
        var near = [Bool](repeating: false, count: columns * rows)
        let reach = Int((radius / size).rounded(.up))
        for cell in surveyed {
            let (row, column) = (cell / columns, cell % columns)
            for r in max(row - reach, 0)...min(row + reach, rows - 1) {
                for c in max(column - reach, 0)...min(column + reach, columns - 1) {
                    let dx = Double(c - column) * size
                    let dy = Double(r - row) * size
                    if dx * dx + dy * dy <= radius * radius { near[r * columns + c] = true }
                }
            }
        }
        var free = 0
        var covered = 0
        for row in 0..<rows {
            for column in 0..<columns {
                let centre = Point(
                    x: minimum.x + (Double(column) + 0.5) * size, y: minimum.y + (Double(row) + 0.5) * size)
                guard floor.outline.contains(centre), !obstacles.contains(where: { $0.contains(centre) }) else {
                    continue
                }
                free += 1
                if near[row * columns + column] { covered += 1 }
            }
        }
        return free == 0 ? 0 : Double(covered) / Double(free)
    }
}
