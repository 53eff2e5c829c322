public import WhereaboutsCore

/// A survey's coverage drawn over the map: where the samples were, and each held-out area shaded by its error, so
/// that a user sees where to survey next (`whereabouts calibrate --coverage`).
public struct CoverageOverlay: Sendable {
    /// One area of the spatial check.
    public struct Area: Sendable {
        public var name: String
        public var floor: UInt16
        public var polygon: Polygon
        /// Samples in it.
        public var samples: Int
        /// Whether it was held out on its own (else it had too few samples).
        public var checked: Bool
        /// Median positioning error held out, with the map's constants and with the calibration, metres.
        public var before: Double?
        public var after: Double?

        public init(
            name: String, floor: UInt16, polygon: Polygon, samples: Int, checked: Bool, before: Double?,
            after: Double?
        ) {
            self.name = name
            self.floor = floor
            self.polygon = polygon
            self.samples = samples
            self.checked = checked
            self.before = before
            self.after = after
        }
    }

    public var areas: [Area]
    /// Where the survey's tag stood (one mark per distinct position drawn; thinned to one per 0.25 m cell).
    public var samples: [(floor: UInt16, point: Point)]
    /// A line under the drawing (the overall figures).
    public var summary: String

    public init(areas: [Area], samples: [(floor: UInt16, point: Point)], summary: String) {
        self.areas = areas
        self.samples = samples
        self.summary = summary
    }
}

extension MapRenderer {
    /// The map (outline, zones, walls, agents) with the coverage over it: areas shaded by their held-out error
    /// after calibration (green under 1 m, amber under 2 m, red above; grey hatched when unchecked), labelled with
    /// their name, samples and errors before → after, and the surveyed positions as small dots.
    public func coverageSVG(map: FloorMap, coverage: CoverageOverlay) -> String {
        let summary = element(
            "text", ["class": "coverage-summary", "x": number(margin), "y": number(margin - 2), "font-size": "11"],
            escape(coverage.summary))
        return overlaid(svg(map: map), map: map, group: "coverage", trailer: summary) { floor, frame in
            var out = ""
            for area in coverage.areas where area.floor == floor.major { out += areaMarkup(area, frame: frame) }
            return out + sampleMarks(coverage.samples.filter { $0.floor == floor.major }.map(\.point), frame: frame)
        }
    }

    private func areaMarkup(_ area: CoverageOverlay.Area, frame: FloorFrame) -> String {
        let points = area.polygon.vertices.map { frame.pixel($0) }
        let path = points.map { "\(number($0.x)),\(number($0.y))" }.joined(separator: " ")
        let colour: String
        switch area.after ?? area.before {
        case .some(let error) where area.checked: colour = error < 1 ? "#2e9e44" : error < 2 ? "#e0a020" : "#d03a2a"
        default: colour = "#9a9a9a"
        }
        var out = element(
            "polygon",
            [
                "class": "coverage-area", "data-area": area.name, "points": path, "fill": colour,
                "fill-opacity": "0.25", "stroke": colour, "stroke-width": "1.5", "stroke-dasharray": "5 3",
            ])
        let centre = Point(
            x: points.reduce(0) { $0 + $1.x } / Double(max(points.count, 1)),
            y: points.reduce(0) { $0 + $1.y } / Double(max(points.count, 1)))
        let figures: String
        if !area.checked {
            figures = area.samples == 0 ? "not surveyed" : "too few samples"
        } else {
            let before = area.before.map { "\($0.rounded(toDecimals: 2))" } ?? "-"
            let after = area.after.map { "\($0.rounded(toDecimals: 2))" } ?? "-"
            figures = "\(before) → \(after) m"
        }
        for (line, text) in ["\(area.name) (\(area.samples))", figures].enumerated() {
            out += element(
                "text",
                [
                    "class": "coverage-label", "x": number(centre.x), "y": number(centre.y + 13 * Double(line)),
                    "font-size": "11", "text-anchor": "middle", "fill": "#222222",
                ], escape(text))
        }
        return out
    }

    private func sampleMarks(_ points: [Point], frame: FloorFrame) -> String {
        var seen = Set<SIMD2<Int64>>()
        var out = ""
        for point in points where point.x.isFinite && point.y.isFinite {
            let key = SIMD2(Int64((point.x / 0.25).rounded(.down)), Int64((point.y / 0.25).rounded(.down)))
            guard seen.insert(key).inserted else { continue }
            let pixel = frame.pixel(point)
            out += element(
                "circle",
                ["class": "survey-sample", "cx": number(pixel.x), "cy": number(pixel.y), "r": "1.5", "fill": "#1f4e9e"])
        }
        return out
    }
}
