/// A floor's walkable space on a fine raster, to measure its narrowest passage: what ``FloorGrid``'s automatic cell
/// must resolve.
///
/// A pixel is blocked when its centre is outside the floor's outline or inside an obstacle, or when a barrier (a
/// wall that blocks walking, less its doors) passes through it. Every pixel learns its nearest blocked pixel (an
/// exact Euclidean feature transform, one pass along columns and one along rows). Where two neighbouring free pixels
/// have nearest blocked pixels on opposite sides (at least 135° apart, seen from the pixel), the pair sits on the
/// middle line of a passage (a corridor, an aisle between desks, the gap between a wall and an obstacle, a door), and
/// the distance between those two blocked pixels, less a pixel, is its width there. The bisector of a room's corner
/// has its nearest walls 90° apart, and is no passage; a gap narrower than a person (``narrowestWalkable``) is not
/// walked, and is not one either. Widths come to within about a pixel.
struct FreeSpaceRaster {
    /// The narrowest place a person walks through, and where.
    struct Passage: Sendable, Hashable {
        /// Its width, in metres.
        let width: Double
        /// Its middle.
        let centre: Point
    }

    /// The finest pixel, in metres.
    static let finestPixel = 0.05
    /// At most this many pixels: a larger floor gets coarser ones (a 100 m × 50 m floor about 7 cm).
    static let maximumPixels = 1_000_000
    /// Gaps narrower than this (metres) are not walked: a slot between two walls, the gap behind a cupboard.
    static let narrowestWalkable = 0.5

    let origin: Point
    /// The side of a pixel, in metres.
    let pixel: Double
    let columns: Int
    let rows: Int
    /// Per pixel, row by row: whether a person cannot stand at its centre.
    private(set) var blocked: [Bool]

    init(outline: Polygon, obstacles: [Polygon], barriers: [Segment]) {
        let (low, high) = outline.bounds
        let width = max(high.x - low.x, 0)
        let height = max(high.y - low.y, 0)
        let pixel = max(Self.finestPixel, (width * height / Double(Self.maximumPixels)).squareRoot())
        // Two pixels of margin all round: the outline's edge has blocked pixels beyond it.
        self.pixel = pixel
        origin = Point(x: low.x - 2 * pixel, y: low.y - 2 * pixel)
        columns = Int((width / pixel).rounded(.up)) + 4
        rows = Int((height / pixel).rounded(.up)) + 4
        blocked = [Bool](repeating: true, count: columns * rows)
        fill(outline, blocked: false)
        for obstacle in obstacles { fill(obstacle, blocked: true) }
        for barrier in barriers { draw(barrier) }
    }

    /// Sets every pixel whose centre is inside `polygon` (even–odd, along each row of centres).
    private mutating func fill(_ polygon: Polygon, blocked value: Bool) {
        let (low, high) = polygon.bounds
        let firstRow = max(Int(((low.y - origin.y) / pixel - 0.5).rounded(.up)), 0)
        let lastRow = min(Int(((high.y - origin.y) / pixel - 0.5).rounded(.down)), rows - 1)
        guard firstRow <= lastRow else { return }
        var crossings: [Double] = []
        for row in firstRow...lastRow {
            let y = origin.y + (Double(row) + 0.5) * pixel
            crossings.removeAll(keepingCapacity: true)
            for edge in polygon.edges where (edge.start.y > y) != (edge.end.y > y) {
                let t = (y - edge.start.y) / (edge.end.y - edge.start.y)
                crossings.append(edge.start.x + t * (edge.end.x - edge.start.x))
            }
            crossings.sort()
            var index = 0
            while index + 1 < crossings.count {
                let first = max(Int(((crossings[index] - origin.x) / pixel - 0.5).rounded(.up)), 0)
                let last = min(Int(((crossings[index + 1] - origin.x) / pixel - 0.5).rounded(.down)), columns - 1)
                if first <= last {
                    for column in first...last { blocked[row * columns + column] = value }
                }
                index += 2
            }
        }
    }

    /// Blocks the pixels the segment passes through, but for those whose centre lies beyond either of its ends: like
    /// an obstacle's, a barrier's blocked centres are within its extent, so that a door measures as wide as it is.
    private mutating func draw(_ segment: Segment) {
        let reach = 0.7072 * pixel  // Half a pixel's diagonal: a pixel the segment touches has its centre this near.
        func range(_ a: Double, _ b: Double, _ start: Double, _ count: Int) -> ClosedRange<Int>? {
            let first = max(Int(((min(a, b) - reach - start) / pixel - 0.5).rounded(.up)), 0)
            let last = min(Int(((max(a, b) + reach - start) / pixel - 0.5).rounded(.down)), count - 1)
            return first <= last ? first...last : nil
        }
        let length = segment.start.distance(to: segment.end)
        let direction = length > 0 ? (segment.end - segment.start) * (1 / length) : Point(x: 0, y: 0)
        guard let columnRange = range(segment.start.x, segment.end.x, origin.x, columns),
            let rowRange = range(segment.start.y, segment.end.y, origin.y, rows)
        else { return }
        for row in rowRange {
            for column in columnRange {
                let centre = Point(
                    x: origin.x + (Double(column) + 0.5) * pixel, y: origin.y + (Double(row) + 0.5) * pixel)
                let along = (centre - segment.start).dot(direction)
                if along >= 0, along <= length, segment.distance(to: centre) <= reach {
                    blocked[row * columns + column] = true
                }
            }
        }
    }

    /// The narrowest passage a person can walk through, or nil when the floor has no walkable free space.
    func narrowestPassage() -> Passage? {
        let nearest = nearestBlocked()
        var best: (width: Double, centre: Point)?
        let steps = [(1, 0), (0, 1), (1, 1), (-1, 1)]
        for row in 0..<rows {
            for column in 0..<columns where !blocked[row * columns + column] {
                let a = Int(nearest[row * columns + column])
                guard a >= 0 else { continue }
                let ax = Double(a % columns - column)
                let ay = Double(a / columns - row)
                for (dx, dy) in steps {
                    let (nextColumn, nextRow) = (column + dx, row + dy)
                    guard nextColumn >= 0, nextColumn < columns, nextRow < rows,
                        !blocked[nextRow * columns + nextColumn]
                    else { continue }
                    let b = Int(nearest[nextRow * columns + nextColumn])
                    guard b >= 0, b != a else { continue }
                    // Both blocked pixels as seen from this one: a passage has them on opposite sides.
                    let bx = Double(b % columns - column)
                    let by = Double(b / columns - row)
                    let lengths = ((ax * ax + ay * ay) * (bx * bx + by * by)).squareRoot()
                    guard lengths > 0, ax * bx + ay * by <= -0.7071 * lengths else { continue }
                    let apart = ((ax - bx) * (ax - bx) + (ay - by) * (ay - by)).squareRoot()
                    let width = (apart - 1) * pixel
                    guard width >= Self.narrowestWalkable, width < best?.width ?? .infinity else { continue }
                    let centre = Point(
                        x: origin.x + (Double(column) + 0.5 + (ax + bx) / 2) * pixel,
                        y: origin.y + (Double(row) + 0.5 + (ay + by) / 2) * pixel)
                    best = (width, centre)
                }
            }
        }
        return best.map { Passage(width: $0.width, centre: $0.centre) }
    }

    /// Per pixel, the index of its nearest blocked pixel (−1 when none is): along each column the nearest blocked
    /// row, then along each row the lower envelope of the columns' parabolas (Felzenszwalb and Huttenlocher).
    func nearestBlocked() -> [Int32] {
        let count = columns * rows
        // Along columns: each pixel's nearest blocked pixel in its column, as a row (−1 for none).
        var columnNearest = [Int32](repeating: -1, count: count)
        for column in 0..<columns {
            var last = -1
            for row in 0..<rows {
                if blocked[row * columns + column] { last = row }
                columnNearest[row * columns + column] = Int32(last)
            }
            last = -1
            for row in stride(from: rows - 1, through: 0, by: -1) {
                if blocked[row * columns + column] { last = row }
                let index = row * columns + column
                let above = Int(columnNearest[index])
                if last >= 0, above < 0 || last - row < row - above { columnNearest[index] = Int32(last) }
            }
        }
        var nearest = [Int32](repeating: -1, count: count)
        var heights = [Double](repeating: 0, count: columns)
        var parabolas = [Int](repeating: 0, count: columns)
        var bounds = [Double](repeating: 0, count: columns + 1)
        for row in 0..<rows {
            var used = 0
            for column in 0..<columns {
                let found = Int(columnNearest[row * columns + column])
                guard found >= 0 else { continue }
                let height = Double((found - row) * (found - row))
                heights[column] = height
                let q = Double(column)
                // Where this column's parabola starts to beat the last one kept; drop those it beats sooner.
                var start = -Double.infinity
                while used > 0 {
                    let previous = parabolas[used - 1]
                    let p = Double(previous)
                    start = ((height + q * q) - (heights[previous] + p * p)) / (2 * (q - p))
                    if start > bounds[used - 1] { break }
                    used -= 1
                    start = -Double.infinity
                }
                parabolas[used] = column
                bounds[used] = start
                used += 1
            }
            guard used > 0 else { continue }
            bounds[used] = .infinity
            var k = 0
            for column in 0..<columns {
                while bounds[k + 1] < Double(column) { k += 1 }
                let source = parabolas[k]
                nearest[row * columns + column] = Int32(Int(columnNearest[row * columns + source]) * columns + source)
            }
        }
        return nearest
    }
}
