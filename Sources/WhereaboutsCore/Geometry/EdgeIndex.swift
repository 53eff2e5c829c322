/// A spatial index of a polygon's edges, so that questions about a polygon of many vertices (a floor outline traced
/// from a plan can have tens of thousands) cost about the square root of its size rather than the size.
///
/// Two views of the same edges: a sparse grid of small cells (each edge listed in the cells along it), for "which
/// edges come near this box" and for finding crossings, and horizontal bands (each edge listed in every band its
/// y-range touches), for point-in-polygon ray casting. Built once, immutable, shared between copies of the polygon.
final class EdgeIndex: Sendable {
    let edges: [Segment]
    private let minimum: Point
    /// Side of a grid cell: about twice the mean edge length, so a cell holds a few edges however they lie.
    private let cellSize: Double
    /// Edge indices per occupied cell (sparse: a traced outline occupies a thin ring of a huge grid).
    private let cells: [Int64: [Int32]]
    private let bandHeight: Double
    /// Edge indices per horizontal band.
    private let bands: [[Int32]]

    /// Margin added around every edge's bounding box, so that touching within the geometry's tolerance counts.
    static let margin = 1e-9

    init(edges: [Segment], minimum: Point, maximum: Point) {
        self.edges = edges
        self.minimum = minimum
        let extent = max(maximum.x - minimum.x, maximum.y - minimum.y, 1e-9)
        let meanLength = edges.reduce(0) { $0 + $1.start.distance(to: $1.end) } / Double(max(edges.count, 1))
        cellSize = max(2 * meanLength, extent / 1_000_000, 1e-9)
        var cells: [Int64: [Int32]] = [:]
        for (index, edge) in edges.enumerated() {
            // A long edge goes in piece by piece, so that it fills the cells along it, not its whole bounding box.
            let pieces = max(1, Int((edge.start.distance(to: edge.end) / cellSize).rounded(.up)))
            var keys: Set<Int64> = []
            for piece in 0..<pieces {
                let from = edge.start + (edge.end - edge.start) * (Double(piece) / Double(pieces))
                let to = edge.start + (edge.end - edge.start) * (Double(piece + 1) / Double(pieces))
                let (low, high) = Self.box(Segment(from, to))
                keys.formUnion(Self.keys(low, high, minimum: minimum, size: cellSize))
            }
            for key in keys { cells[key, default: []].append(Int32(index)) }
        }
        self.cells = cells
        let bandCount = max(1, Int(Double(edges.count).squareRoot().rounded(.up)))
        bandHeight = max((maximum.y - minimum.y) / Double(bandCount), 1e-12)
        var bands = Array(repeating: [Int32](), count: bandCount)
        for (index, edge) in edges.enumerated() {
            let (low, high) = Self.box(edge)
            let first = Self.band(of: low.y, minimum: minimum.y, height: bandHeight, count: bandCount)
            let last = Self.band(of: high.y, minimum: minimum.y, height: bandHeight, count: bandCount)
            for band in first...last { bands[band].append(Int32(index)) }
        }
        self.bands = bands
    }

    /// The indices of the edges that may touch the box `low…high`, each once, ascending.
    func edges(near low: Point, _ high: Point) -> [Int] {
        var found: Set<Int32> = []
        for key in Self.keys(low, high, minimum: minimum, size: cellSize) {
            if let members = cells[key] { found.formUnion(members) }
        }
        return found.map(Int.init).sorted()
    }

    /// The indices of the edges whose y-range may include `y`.
    func edges(crossingHeight y: Double) -> [Int32] {
        bands[Self.band(of: y, minimum: minimum.y, height: bandHeight, count: bands.count)]
    }

    /// Whether any two edges that are not neighbours on the outline touch or cross; `adjacentOverlap` judges two
    /// neighbours (which share a vertex). Only edges that share a cell can touch; a pair sharing several cells is
    /// judged in each, which costs little and changes nothing.
    func hasCrossing(adjacentOverlap: (Int, Int) -> Bool) -> Bool {
        let count = edges.count
        for members in cells.values where members.count > 1 {
            for a in 0..<(members.count - 1) {
                for b in (a + 1)..<members.count {
                    let i = Int(min(members[a], members[b]))
                    let j = Int(max(members[a], members[b]))
                    let adjacent = j == i + 1 || (i == 0 && j == count - 1)
                    if adjacent {
                        if adjacentOverlap(i, j) { return true }
                    } else if edges[i].intersects(edges[j]) {
                        return true
                    }
                }
            }
        }
        return false
    }

    // MARK: - Cells

    /// The keys of the cells the box `low…high` touches (at most a bounded number for a query box).
    private static func keys(_ low: Point, _ high: Point, minimum: Point, size: Double) -> [Int64] {
        func coordinate(_ value: Double) -> Int64 {
            guard value.isFinite else { return 0 }
            return Int64(min(max((value / size).rounded(.down), -1e9), 1e9))
        }
        let (x0, y0) = (coordinate(low.x - minimum.x), coordinate(low.y - minimum.y))
        let (x1, y1) = (coordinate(high.x - minimum.x), coordinate(high.y - minimum.y))
        var keys: [Int64] = []
        keys.reserveCapacity(Int((x1 - x0 + 1) * (y1 - y0 + 1)))
        for x in x0...x1 {
            for y in y0...y1 { keys.append(x << 32 ^ (y & 0xFFFF_FFFF)) }
        }
        return keys
    }

    private static func band(of y: Double, minimum: Double, height: Double, count: Int) -> Int {
        guard y.isFinite else { return 0 }
        return min(max(Int(((y - minimum) / height).rounded(.down)), 0), count - 1)
    }

    private static func box(_ edge: Segment) -> (low: Point, high: Point) {
        (
            Point(x: min(edge.start.x, edge.end.x) - margin, y: min(edge.start.y, edge.end.y) - margin),
            Point(x: max(edge.start.x, edge.end.x) + margin, y: max(edge.start.y, edge.end.y) + margin)
        )
    }
}
