/// The walls around an agent sorted by the directions they span as seen from it, so that a path from the agent is
/// tested only against the walls in its direction: on a floor of many walls, testing each path against all of them
/// was most of a plan's cost.
///
/// A wall that does not pass through the agent spans less than a half-turn; it goes into every sector its span
/// overlaps, and one more on each side (against rounding). Directions are measured by a pseudo-angle (the "diamond
/// angle", 0 to 4 for a full turn), monotonic in the true angle and a half-turn apart by exactly 2, so no
/// trigonometry is needed.
struct WallSectors {
    /// Sectors in a full turn.
    static let count = 64

    private let centre: Point
    private let sectors: [[Wall]]

    init(walls: [Wall], around centre: Point) {
        self.centre = centre
        var sectors = [[Wall]](repeating: [], count: Self.count)
        let perUnit = Double(Self.count) / 4
        for wall in walls {
            let start = wall.segment.start - centre
            let end = wall.segment.end - centre
            let a = Self.pseudoAngle(start.x, start.y)
            let b = Self.pseudoAngle(end.x, end.y)
            var (low, high) = (min(a, b), max(a, b))
            // The short way round: across 0 when the plain interval is longer than a half-turn.
            if high - low > 2 { (low, high) = (high, low + 4) }
            // A wall through (or almost through) the agent spans a half-turn or more: every sector.
            let through = abs(start.cross(end)) < 1e-9 * max(start.dot(start) + end.dot(end), 1e-12)
            let first = through ? 0 : Int((low * perUnit).rounded(.down)) - 1
            let last = through ? Self.count - 1 : Int((high * perUnit).rounded(.down)) + 1
            for sector in first...last { sectors[(sector % Self.count + Self.count) % Self.count].append(wall) }
        }
        self.sectors = sectors
    }

    /// The walls a straight path from the agent to `point` may cross, in their given order.
    func walls(toward point: Point) -> [Wall] {
        let dx = point.x - centre.x
        let dy = point.y - centre.y
        guard dx != 0 || dy != 0 else { return [] }
        let sector = Int((Self.pseudoAngle(dx, dy) * Double(Self.count) / 4).rounded(.down))
        return sectors[min(max(sector, 0), Self.count - 1)]
    }

    /// The direction of (dx, dy) as a pseudo-angle from 0 (east) through 1 (north), 2 (west) and 3 (south) to 4.
    static func pseudoAngle(_ dx: Double, _ dy: Double) -> Double {
        let sum = abs(dx) + abs(dy)
        guard sum > 0 else { return 0 }
        if dy >= 0 { return dx >= 0 ? dy / sum : 1 - dx / sum }
        return dx < 0 ? 2 - dy / sum : 3 + dx / sum
    }
}
