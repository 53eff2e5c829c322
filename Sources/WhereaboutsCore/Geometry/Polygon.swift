/// A simple polygon on a floor plan: a floor's outline or a zone's area. Vertices in metres, either winding,
/// not closed (the last vertex joins the first implicitly).
///
/// A polygon of many vertices carries an ``EdgeIndex``, so that containment, crossings and overlap cost about the
/// square root of its size: a floor outline traced from a plan may have tens of thousands of vertices.
public struct Polygon: Sendable, Hashable {
    /// The vertices in order.
    public let vertices: [Point]
    /// The edges, each from a vertex to the next.
    public let edges: [Segment]
    private let minimum: Point
    private let maximum: Point
    private let index: EdgeIndex?

    /// Polygons with at least this many vertices get an edge index.
    static let indexThreshold = 32

    public init(_ vertices: [Point]) {
        self.vertices = vertices
        edges = vertices.indices.map { Segment(vertices[$0], vertices[($0 + 1) % vertices.count]) }
        var minimum = Point(x: .infinity, y: .infinity)
        var maximum = Point(x: -.infinity, y: -.infinity)
        for vertex in vertices {
            minimum = Point(x: min(minimum.x, vertex.x), y: min(minimum.y, vertex.y))
            maximum = Point(x: max(maximum.x, vertex.x), y: max(maximum.y, vertex.y))
        }
        self.minimum = minimum
        self.maximum = maximum
        index =
            vertices.count >= Self.indexThreshold && minimum.x.isFinite && maximum.x.isFinite && minimum.y.isFinite
                && maximum.y.isFinite
            ? EdgeIndex(edges: edges, minimum: minimum, maximum: maximum) : nil
    }

    public static func == (lhs: Polygon, rhs: Polygon) -> Bool { lhs.vertices == rhs.vertices }

    public func hash(into hasher: inout Hasher) { hasher.combine(vertices) }

    /// The indices of this polygon's edges that may come within the geometry's tolerance of `edge`.
    private func edgeIndices(near edge: Segment) -> [Int] {
        guard let index else { return Array(edges.indices) }
        let margin = EdgeIndex.margin
        return index.edges(
            near: Point(x: min(edge.start.x, edge.end.x) - margin, y: min(edge.start.y, edge.end.y) - margin),
            Point(x: max(edge.start.x, edge.end.x) + margin, y: max(edge.start.y, edge.end.y) + margin))
    }

    /// Whether an edge of one polygon properly crosses an edge of the other (the bigger one's index is used).
    private func properlyCrosses(_ other: Polygon) -> Bool {
        let (small, large) = vertices.count <= other.vertices.count ? (self, other) : (other, self)
        for edge in small.edges {
            for candidate in large.edgeIndices(near: edge) where edge.properlyIntersects(large.edges[candidate]) {
                return true
            }
        }
        return false
    }

    /// The enclosed area in square metres (always positive).
    public var area: Double { abs(signedArea) }

    /// Positive when the vertices run counter-clockwise.
    public var signedArea: Double {
        guard vertices.count >= 3 else { return 0 }
        var sum = 0.0
        for index in vertices.indices {
            sum += vertices[index].cross(vertices[(index + 1) % vertices.count])
        }
        return sum / 2
    }

    /// The centre of mass of the enclosed area (the vertex mean for degenerate polygons).
    public var centroid: Point {
        let signed = signedArea
        guard abs(signed) > 1e-12 else {
            let sum = vertices.reduce(Point(x: 0, y: 0), +)
            return vertices.isEmpty ? sum : sum * (1 / Double(vertices.count))
        }
        var cx = 0.0
        var cy = 0.0
        for index in vertices.indices {
            let a = vertices[index]
            let b = vertices[(index + 1) % vertices.count]
            let cross = a.cross(b)
            cx += (a.x + b.x) * cross
            cy += (a.y + b.y) * cross
        }
        return Point(x: cx / (6 * signed), y: cy / (6 * signed))
    }

    /// The axis-aligned bounding box.
    public var bounds: (minimum: Point, maximum: Point) { (minimum, maximum) }

    /// Whether the point is inside or on the boundary.
    public func contains(_ point: Point) -> Bool {
        guard point.x >= minimum.x - 1e-9, point.x <= maximum.x + 1e-9, point.y >= minimum.y - 1e-9,
            point.y <= maximum.y + 1e-9
        else { return false }
        var inside = false
        func cross(_ a: Point, _ b: Point) -> Bool {
            if Segment(a, b).distance(to: point) < 1e-9 { return true }
            if (a.y > point.y) != (b.y > point.y) {
                let crossingX = a.x + (point.y - a.y) / (b.y - a.y) * (b.x - a.x)
                if point.x < crossingX { inside.toggle() }
            }
            return false
        }
        if let index {
            // Only the edges whose y-range reaches the point's height can cross its ray or hold it.
            for edge in index.edges(crossingHeight: point.y) {
                let segment = edges[Int(edge)]
                if cross(segment.end, segment.start) { return true }
            }
            return inside
        }
        var previous = vertices.count - 1
        for current in vertices.indices {
            if cross(vertices[current], vertices[previous]) { return true }
            previous = current
        }
        return inside
    }

    /// The distance from the point to the polygon's boundary, whichever side it is on.
    public func distanceToBoundary(_ point: Point) -> Double {
        var best = Double.infinity
        var previous = vertices.count - 1
        for current in vertices.indices {
            best = min(best, Segment(vertices[previous], vertices[current]).distance(to: point))
            previous = current
        }
        return best
    }

    /// Signed distance: positive inside (depth below the boundary), negative outside.
    public func signedDistance(_ point: Point) -> Double {
        let distance = distanceToBoundary(point)
        return contains(point) ? distance : -distance
    }

    /// The point itself when inside; otherwise the nearest point inside, `inset` metres in from the boundary
    /// where the shape allows.
    public func clamped(_ point: Point, inset: Double = 0.05) -> Point {
        if contains(point) { return point }
        var best = point
        var bestDistance = Double.infinity
        for edge in edges {
            let candidate = edge.closestPoint(to: point)
            let distance = candidate.distance(to: point)
            if distance < bestDistance {
                bestDistance = distance
                best = candidate
            }
        }
        // Step a little inward, toward the centroid, so the clamped point is strictly inside.
        let toward = centroid - best
        let length = (toward.x * toward.x + toward.y * toward.y).squareRoot()
        if length > inset {
            let nudged = best + toward * (inset / length)
            if contains(nudged) { return nudged }
        }
        return best
    }

    /// Whether any two non-adjacent edges cross or touch, or two adjacent edges fold back onto each other.
    public var isSelfIntersecting: Bool {
        let edges = self.edges
        let count = edges.count
        guard count >= 3 else { return false }
        if let index {
            return index.hasCrossing { i, j in
                let shared = j == i + 1 ? edges[i].end : edges[i].start
                let a = j == i + 1 ? edges[i].start : edges[i].end
                let b = j == i + 1 ? edges[j].end : edges[j].start
                return orientation(a, shared, b) == 0 && (a - shared).dot(b - shared) > 0
            }
        }
        for i in 0..<count {
            for j in (i + 1)..<count {
                let adjacent = j == i + 1 || (i == 0 && j == count - 1)
                if adjacent {
                    // Adjacent edges share one vertex; they must not overlap along a line beyond it.
                    let shared = j == i + 1 ? edges[i].end : edges[i].start
                    let a = j == i + 1 ? edges[i].start : edges[i].end
                    let b = j == i + 1 ? edges[j].end : edges[j].start
                    if orientation(a, shared, b) == 0 && (a - shared).dot(b - shared) > 0 { return true }
                } else if edges[i].intersects(edges[j]) {
                    return true
                }
            }
        }
        return false
    }

    /// Whether the interiors of two simple polygons overlap (sharing an edge or a corner is not overlap).
    public func overlaps(_ other: Polygon) -> Bool {
        let (otherMin, otherMax) = other.bounds
        guard minimum.x < otherMax.x, otherMin.x < maximum.x, minimum.y < otherMax.y, otherMin.y < maximum.y else {
            return false
        }
        if properlyCrosses(other) { return true }
        // No proper crossings. Cut each boundary where the other's edges touch it; if any piece of either boundary
        // runs strictly inside the other polygon, the interiors overlap. Otherwise they overlap only if they coincide.
        if boundaryEntersInterior(of: other) || other.boundaryEntersInterior(of: self) { return true }
        if other.strictlyContains(centroid) || strictlyContains(other.centroid) { return true }
        return false
    }

    private func boundaryEntersInterior(of other: Polygon) -> Bool {
        for edge in edges {
            var cuts: [Double] = [0, 1]
            let direction = edge.end - edge.start
            let lengthSquared = direction.dot(direction)
            guard lengthSquared > 0 else { continue }
            // The other's vertices are its edges' ends, so its edges near this one bring every vertex that touches it.
            for candidate in other.edgeIndices(near: edge) {
                let otherEdge = other.edges[candidate]
                for end in [otherEdge.start, otherEdge.end] where edge.distance(to: end) < 1e-9 {
                    cuts.append((end - edge.start).dot(direction) / lengthSquared)
                }
            }
            cuts.sort()
            for (a, b) in zip(cuts, cuts.dropFirst()) where b - a > 1e-9 {
                if other.strictlyContains(edge.start + direction * ((a + b) / 2)) { return true }
            }
        }
        return false
    }

    /// Whether every point of `other` lies inside or on this polygon.
    public func encloses(_ other: Polygon) -> Bool {
        guard other.vertices.allSatisfy({ contains($0) }) else { return false }
        if properlyCrosses(other) { return false }
        // Edge midpoints catch concave outlines whose notch an edge of `other` spans.
        return other.edges.allSatisfy { contains(($0.start + $0.end) * 0.5) }
    }

    private func strictlyContains(_ point: Point) -> Bool {
        contains(point) && distanceToBoundary(point) > 1e-6
    }
}
