public import WhereaboutsCore
public import WhereaboutsWire

/// Draws a floor map as SVG: each floor with its outline, walls, zones shaded by occupancy, stairs, agents, and tags
/// with their accuracy circles.
///
/// Two outputs share one drawing of a floor: ``svg(map:positions:)``, every floor side by side with the last
/// positions (what `whereabouts render` writes), and ``liveFloorSVG(map:floor:)``, one floor with hooks for a live
/// page (zones, labels and agents marked with `data-` attributes, empty layers for the tags, and the metre-to-pixel
/// transform on the root element). A pure string builder: the caller writes the text where it likes.
public struct MapRenderer: Sendable {
    /// Pixels per metre.
    public var scale: Double = 30
    /// Pixels around and between floors.
    public var margin: Double = 40

    public init() {}

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

    /// The frame of a floor drawn alone, as ``liveFloorSVG(map:floor:)`` places it.
    public func liveFrame(of floor: Floor) -> FloorFrame {
        let (minimum, maximum) = floor.outline.bounds
        return FloorFrame(
            floor: floor.major, left: margin, top: margin + 24, minimum: minimum, maximum: maximum, scale: scale)
    }

    /// The SVG document for a map and, optionally, tag positions (the last position of each tag is drawn), a tag's
    /// grid posterior (its cells shaded by probability) and true positions (drawn as crosses).
    public func svg(
        map: FloorMap, positions: [PositionRecord] = [], posterior: TagPosterior? = nil, truth: [TruthRecord] = []
    ) -> String {
        var latest: [TagIdentity: PositionRecord] = [:]
        for position in positions {
            if let existing = latest[position.tag], existing.time > position.time { continue }
            latest[position.tag] = position
        }
        let tags = latest.values.sorted { $0.tag < $1.tag }
        var occupancy: [ZoneKey: Int] = [:]
        for tag in tags {
            if let zone = tag.zone { occupancy[ZoneKey(floor: tag.floor, minor: zone), default: 0] += 1 }
        }

        var frames: [FloorFrame] = []
        var left = margin
        var tallest = 0.0
        let top = margin + 24
        for floor in map.floors {
            let (minimum, maximum) = floor.outline.bounds
            let frame = FloorFrame(
                floor: floor.major, left: left, top: top, minimum: minimum, maximum: maximum, scale: scale)
            frames.append(frame)
            left += frame.size.width + margin
            tallest = max(tallest, frame.size.height)
        }
        // Room on the right for the labels of tags at the last floor's edge.
        let width = max(left + 60, 2 * margin)
        let height = top + tallest + margin + 20 + (posterior == nil ? 0 : 14)

        var out = ""
        out += #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        out += #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(number(width))" height="\#(number(height))" "#
        out += #"viewBox="0 0 \#(number(width)) \#(number(height))" font-family="sans-serif">"# + "\n"
        out += #"<rect x="0" y="0" width="\#(number(width))" height="\#(number(height))" fill="white"/>"# + "\n"
        out += element(
            "text", ["x": number(margin), "y": number(margin - 16), "font-size": "16"], escape(map.site.name))
        for (floor, frame) in zip(map.floors, frames) {
            let drawn = tags.filter { $0.floor == floor.major }.map {
                DrawnTag(
                    position: Point(x: $0.x, y: $0.y), accuracy: $0.accuracy, label: label(for: $0.tag, map: map))
            }
            out += drawFloor(
                floor, frame: frame, map: map, occupancy: .counts(occupancy), tags: drawn,
                posterior: posterior?.floor == floor.major ? posterior : nil,
                truth: truth.filter { $0.floor == floor.major }.map { Point(x: $0.x, y: $0.y) })
        }
        var legend = [
            "\(tags.count) tags, \(map.agents.count) agents; zones shaded by occupancy; circles are 1-sigma accuracy"
        ]
        if let posterior {
            legend = [
                "\(tags.count) tags, \(map.agents.count) agents; the circle is the estimate's 1-sigma accuracy",
                "purple: the grid posterior, cells of \(number(posterior.cellSize)) m shaded by probability; zones"
                    + " labelled with theirs" + (truth.isEmpty ? "" : "; the cross is the truth"),
            ]
        }
        for (line, text) in legend.enumerated() {
            out += element(
                "text",
                [
                    "x": number(margin), "y": number(height - 12 - 14 * Double(legend.count - 1 - line)),
                    "font-size": "11", "fill": "#555555",
                ],
                escape(text)
            )
        }
        out += "</svg>\n"
        return out
    }

    /// One floor for a live page: zones, labels and agents carry `data-zone="<major>-<minor>"` and
    /// `data-agent="<id>"`, zone labels read `Name (–)` until the page knows the count, and the groups
    /// `accuracy-layer` (clipped to the outline) and `tag-layer` are left empty for the page's script. The root
    /// element carries `data-floor`, `data-scale`, `data-origin-x` and `data-origin-y` (see ``FloorFrame``).
    public func liveFloorSVG(map: FloorMap, floor: Floor) -> String {
        let frame = liveFrame(of: floor)
        let width = frame.left + frame.size.width + margin
        let height = frame.top + frame.size.height + margin
        var out = ""
        out += #"<svg xmlns="http://www.w3.org/2000/svg" class="floor-map" "#
        out += #"viewBox="0 0 \#(number(width)) \#(number(height))" font-family="sans-serif" "#
        out += #"data-floor="\#(floor.major)" data-scale="\#(number(scale))" "#
        out += #"data-origin-x="\#(number(frame.originX))" data-origin-y="\#(number(frame.originY))">"# + "\n"
        out += drawFloor(floor, frame: frame, map: map, occupancy: .live, tags: [], posterior: nil, truth: [])
        out += "</svg>\n"
        return out
    }

    /// How zones are labelled and shaded.
    private enum ZoneShading {
        /// Counts known now (a still picture).
        case counts([ZoneKey: Int])
        /// Counts filled in later by a page's script.
        case live
    }

    private struct DrawnTag {
        var position: Point
        var accuracy: Double
        var label: String
    }

    private func drawFloor(
        _ floor: Floor, frame: FloorFrame, map: FloorMap, occupancy: ZoneShading, tags: [DrawnTag],
        posterior: TagPosterior?, truth: [Point]
    ) -> String {
        let live: Bool
        let counts: [ZoneKey: Int]
        switch occupancy {
        case .counts(let known):
            live = false
            counts = known
        case .live:
            live = true
            counts = [:]
        }
        let busiest = max(counts.values.max() ?? 0, 1)
        let place = { (point: Point) -> Point in frame.pixel(point) }
        let path = { (polygon: Polygon) -> String in
            polygon.vertices.map { vertex in
                let pixel = place(vertex)
                return "\(self.number(pixel.x)),\(self.number(pixel.y))"
            }.joined(separator: " ")
        }
        var out = ""
        out += #"<g class="floor" id="floor-\#(floor.major)">"# + "\n"
        out += element(
            "text",
            ["x": number(frame.left), "y": number(frame.top - 8), "font-size": "14", "font-weight": "bold"],
            escape("Floor \(floor.major): \(floor.name)")
        )
        out += element(
            "polygon",
            ["points": path(floor.outline), "fill": "#f7f7f5", "stroke": "#333333", "stroke-width": "2"]
        )
        for zone in map.zones(onFloor: floor.major) {
            // With a posterior, a zone is labelled with its probability (the mass of the cells whose centres are
            // in it, as the engine's zone evidence counts it) and not shaded by occupancy.
            let mass = posterior.map { posterior in
                posterior.cells.reduce(0.0) { zone.polygon.contains($1.centre) ? $0 + $1.probability : $0 }
            }
            let count = mass == nil ? counts[zone.key] ?? 0 : 0
            let shade = count == 0 ? 0.12 : 0.25 + 0.55 * Double(count) / Double(busiest)
            let fill = count == 0 ? "#7fa7d9" : "#e07b39"
            let marker = live ? ["data-zone": "\(zone.floor)-\(zone.minor)"] : [:]
            out += element(
                "polygon",
                [
                    ("class", "zone"), ("points", path(zone.polygon)), ("fill", fill), ("fill-opacity", number(shade)),
                    ("stroke", "#4a6d99"), ("stroke-width", "1"), ("stroke-dasharray", "4 3"),
                ] + marker.map { ($0.key, $0.value) }
            )
            let centre = place(zone.polygon.centroid)
            out += element(
                "text",
                [
                    ("x", number(centre.x)), ("y", number(centre.y)), ("font-size", "11"), ("text-anchor", "middle"),
                    ("fill", "#22313f"),
                ] + (live ? [("class", "zone-label")] : []) + marker.map { ($0.key, $0.value) },
                escape(
                    live
                        ? "\(zone.name) (–)"
                        : mass.map { "\(zone.name) (p \(number($0)))" } ?? "\(zone.name) (\(count))")
            )
        }
        if let posterior, let peak = posterior.cells.map(\.probability).max(), peak > 0 {
            // Each cell a square, its opacity its probability against the most likely cell's.
            let side = posterior.cellSize * scale
            out += #"<g class="posterior">"# + "\n"
            // Cells under half a percent of the peak would be drawn all but invisible: left out.
            for cell in posterior.cells where cell.probability >= 0.005 * peak {
                let centre = place(cell.centre)
                out += element(
                    "rect",
                    [
                        "class": "posterior-cell", "x": number(centre.x - side / 2), "y": number(centre.y - side / 2),
                        "width": number(side),
                        "height": number(side), "fill": "#6a1b9a",
                        "fill-opacity": number(0.9 * cell.probability / peak),
                    ]
                )
            }
            out += "</g>\n"
        }
        for obstacle in map.obstacles where obstacle.floor == floor.major {
            out += element(
                "polygon",
                [
                    "class": "obstacle", "points": path(obstacle.polygon), "fill": "#b5b5ad", "stroke": "#6d6d66",
                    "stroke-width": "1",
                ]
            )
        }
        for wall in map.walls where wall.floor == floor.major {
            // A wall that blocks walking is drawn solid and thick, with its doors as gaps; one that only
            // attenuates, as a line whose width says how much.
            let pieces = wall.blocksWalking ? wall.barriers : [wall.segment]
            for piece in pieces {
                let start = place(piece.start)
                let end = place(piece.end)
                out += element(
                    "line",
                    [
                        "class": wall.blocksWalking ? "wall blocking" : "wall", "x1": number(start.x),
                        "y1": number(start.y), "x2": number(end.x), "y2": number(end.y),
                        "stroke": wall.blocksWalking ? "#222222" : "#555555",
                        "stroke-width": number(wall.blocksWalking ? 4 : 1 + wall.loss / 3), "stroke-linecap": "butt",
                    ]
                )
            }
        }
        for stairs in map.stairs where stairs.floors.contains(floor.major) {
            let centre = place(stairs.position)
            let size = number(0.8 * scale)
            out += element(
                "rect",
                [
                    "class": "stairs", "x": number(centre.x - 0.4 * scale), "y": number(centre.y - 0.4 * scale),
                    "width": size, "height": size, "fill": "#c9b458", "stroke": "#6b5d1f",
                ]
            )
            out += element(
                "text",
                [
                    "x": number(centre.x), "y": number(centre.y + 0.4 * scale + 11), "font-size": "9",
                    "text-anchor": "middle",
                ],
                "stairs"
            )
        }
        for agent in map.agents where agent.floor == floor.major {
            let pixel = place(agent.position)
            let cx = pixel.x
            let cy = pixel.y
            let points =
                "\(number(cx)),\(number(cy - 7)) \(number(cx - 6)),\(number(cy + 5)) \(number(cx + 6)),\(number(cy + 5))"
            out += element(
                "polygon",
                [("class", "agent"), ("points", points), ("fill", "#2e7d32"), ("stroke", "#1b4d1e")]
                    + (live ? [("data-agent", agent.id)] : [])
            )
            out += element(
                "text",
                ["x": number(cx + 8), "y": number(cy - 6), "font-size": "9", "fill": "#1b4d1e"],
                escape(agent.id)
            )
        }
        // Accuracy circles can be far larger than the floor: clip them to its outline.
        let clip = "clip-floor-\(floor.major)"
        out += "<defs><clipPath id=\"\(clip)\">" + element("polygon", ["points": path(floor.outline)])
        out += "</clipPath></defs>\n"
        out += "<g clip-path=\"url(#\(clip))\"\(live ? #" class="accuracy-layer""# : "")>\n"
        for tag in tags {
            let pixel = place(tag.position)
            out += element(
                "circle",
                [
                    "class": "accuracy", "cx": number(pixel.x), "cy": number(pixel.y),
                    "r": number(max(tag.accuracy, 0) * scale), "fill": "#c62828", "fill-opacity": "0.10",
                    "stroke": "#c62828", "stroke-opacity": "0.5",
                ]
            )
        }
        out += "</g>\n"
        if live { out += #"<g class="tag-layer"></g>"# + "\n" }
        for tag in tags {
            let pixel = place(tag.position)
            let x = number(pixel.x)
            let y = number(pixel.y)
            out += element("circle", ["class": "tag", "cx": x, "cy": y, "r": "4", "fill": "#c62828"])
            out += element(
                "text",
                ["x": number(pixel.x + 6), "y": number(pixel.y + 12), "font-size": "9"],
                escape(tag.label)
            )
        }
        for point in truth {
            let pixel = place(point)
            let arm = 6.0
            for (dx, dy) in [(arm, arm), (arm, -arm)] {
                out += element(
                    "line",
                    [
                        "class": "truth", "x1": number(pixel.x - dx), "y1": number(pixel.y - dy),
                        "x2": number(pixel.x + dx), "y2": number(pixel.y + dy), "stroke": "#1565c0",
                        "stroke-width": "2",
                    ]
                )
            }
        }
        out += "</g>\n"
        return out
    }

    /// A short label: the map's name for a known tag, else the identity's distinguishing tail.
    public func label(for tag: TagIdentity, map: FloorMap) -> String {
        if let known = map.knownTag(tag) { return known.name }
        if let fields = tag.beaconFields { return "\(fields.major)-\(fields.minor)" }
        return String(tag.description.suffix(12))
    }

    private func element(_ name: String, _ attributes: KeyValuePairs<String, String>, _ text: String? = nil) -> String {
        element(name, attributes.map { ($0.key, $0.value) }, text)
    }

    private func element(_ name: String, _ attributes: [(String, String)], _ text: String? = nil) -> String {
        var out = "<\(name)"
        for (key, value) in attributes { out += " \(key)=\"\(escape(value))\"" }
        if let text {
            out += ">\(text)</\(name)>\n"
        } else {
            out += "/>\n"
        }
        return out
    }

    private func number(_ value: Double) -> String {
        let rounded = value.rounded(toDecimals: 2)
        guard rounded.isFinite else { return "0" }
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? String(Int(rounded)) : String(rounded)
    }

    /// Escapes text for XML and HTML content and attribute values (`&`, `<`, `>`, both quotes).
    public func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }
}
