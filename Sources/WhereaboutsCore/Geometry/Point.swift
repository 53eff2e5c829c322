/// A point on a floor plan, in metres, in the map's frame (x to the right, y up the plan).
public struct Point: Sendable, Hashable, CustomStringConvertible {
    /// Metres along the plan's x axis.
    public var x: Double
    /// Metres along the plan's y axis.
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// The distance to another point, in metres.
    public func distance(to other: Point) -> Double {
        let dx = x - other.x
        let dy = y - other.y
        return (dx * dx + dy * dy).squareRoot()
    }

    public var isFinite: Bool { x.isFinite && y.isFinite }

    public var description: String { "(\(x), \(y))" }

    public static func + (lhs: Point, rhs: Point) -> Point { Point(x: lhs.x + rhs.x, y: lhs.y + rhs.y) }
    public static func - (lhs: Point, rhs: Point) -> Point { Point(x: lhs.x - rhs.x, y: lhs.y - rhs.y) }
    public static func * (lhs: Point, rhs: Double) -> Point { Point(x: lhs.x * rhs, y: lhs.y * rhs) }

    /// The dot product, treating both points as vectors.
    public func dot(_ other: Point) -> Double { x * other.x + y * other.y }
    /// The z component of the cross product, treating both points as vectors.
    public func cross(_ other: Point) -> Double { x * other.y - y * other.x }
}

/// A line segment between two points.
public struct Segment: Sendable, Hashable {
    public var start: Point
    public var end: Point

    public init(_ start: Point, _ end: Point) {
        self.start = start
        self.end = end
    }

    /// The point of the segment closest to `point`.
    public func closestPoint(to point: Point) -> Point {
        let direction = end - start
        let lengthSquared = direction.dot(direction)
        guard lengthSquared > 0 else { return start }
        let t = min(max((point - start).dot(direction) / lengthSquared, 0), 1)
        return start + direction * t
    }

    /// The distance from `point` to the segment.
    public func distance(to point: Point) -> Double { closestPoint(to: point).distance(to: point) }

    /// Whether the two segments share a point in their interiors (touching at an end does not count as crossing).
    public func properlyIntersects(_ other: Segment) -> Bool {
        let d1 = orientation(other.start, other.end, start)
        let d2 = orientation(other.start, other.end, end)
        let d3 = orientation(start, end, other.start)
        let d4 = orientation(start, end, other.end)
        return d1 * d2 < 0 && d3 * d4 < 0
    }

    /// Whether the segments share any point at all, ends and collinear overlaps included.
    public func intersects(_ other: Segment) -> Bool {
        if properlyIntersects(other) { return true }
        let tolerance = 1e-9
        return distance(to: other.start) < tolerance || distance(to: other.end) < tolerance
            || other.distance(to: start) < tolerance || other.distance(to: end) < tolerance
    }
}

/// The sign of the turn a → b → c: positive counter-clockwise, negative clockwise, near zero collinear.
func orientation(_ a: Point, _ b: Point, _ c: Point) -> Double {
    let value = (b - a).cross(c - a)
    // Treat tiny values as collinear so that float noise does not invent crossings.
    return abs(value) < 1e-12 ? 0 : value
}
