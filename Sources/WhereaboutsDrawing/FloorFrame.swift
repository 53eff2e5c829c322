public import WhereaboutsCore

extension MapRenderer {
    /// Where one floor sits in a drawing: plan metres (y up) to SVG pixels (y down).
    public struct FloorFrame: Sendable, Equatable {
        /// The floor's major.
        public var floor: UInt16
        /// The pixel x of the floor's west edge.
        public var left: Double
        /// The pixel y of the floor's north edge.
        public var top: Double
        /// The floor outline's bounding box, metres.
        public var minimum: Point
        public var maximum: Point
        /// Pixels per metre.
        public var scale: Double

        /// The pixel for a point on the plan: `x = originX + scale * metresX`, `y = originY - scale * metresY`.
        public func pixel(_ point: Point) -> Point {
            Point(x: originX + point.x * scale, y: originY - point.y * scale)
        }

        /// The pixel x of the plan's x = 0.
        public var originX: Double { left - minimum.x * scale }
        /// The pixel y of the plan's y = 0.
        public var originY: Double { top + maximum.y * scale }
        /// The floor's width and height in pixels.
        public var size: (width: Double, height: Double) {
            ((maximum.x - minimum.x) * scale, (maximum.y - minimum.y) * scale)
        }
    }
}
