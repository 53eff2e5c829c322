public import WhereaboutsCore
public import WhereaboutsWire

/// Draws a floor map as SVG: each floor with its outline, walls, zones shaded by occupancy, stairs, agents, and tags
/// with their accuracy circles.
///
/// Two outputs share one drawing of a floor (``FloorDrawing``): ``svg(map:positions:posterior:truth:)``, every floor
/// side by side with the last positions (what `whereabouts render` writes), and ``liveFloorSVG(map:floor:)``, one
/// floor with hooks for a live page (zones, labels and agents marked with `data-` attributes, empty layers for the
/// tags, and the metre-to-pixel transform on the root element). A pure string builder: the caller writes the text
/// where it likes.
public struct MapRenderer: Sendable {
    /// Pixels per metre.
    public var scale: Double = 30
    /// Pixels around and between floors.
    public var margin: Double = 40

    public init() {}

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
        let tags = Self.latest(positions)
        var occupancy: [ZoneKey: Int] = [:]
        for tag in tags {
            if let zone = tag.zone { occupancy[ZoneKey(floor: tag.floor, minor: zone), default: 0] += 1 }
        }
        let (frames, right, tallest) = sideBySide(map.floors)
        let top = margin + 24
        // Room on the right for the labels of tags at the last floor's edge.
        let width = max(right + 60, 2 * margin)
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
            out +=
                FloorDrawing(
                    renderer: self, floor: floor, frame: frame, map: map, occupancy: .counts(occupancy), tags: drawn,
                    posterior: posterior?.floor == floor.major ? posterior : nil,
                    truth: truth.filter { $0.floor == floor.major }.map { Point(x: $0.x, y: $0.y) }
                ).svg
        }
        out += legend(map: map, tagCount: tags.count, posterior: posterior, truth: truth, height: height)
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
        out +=
            FloorDrawing(
                renderer: self, floor: floor, frame: frame, map: map, occupancy: .live, tags: [], posterior: nil,
                truth: []
            ).svg
        out += "</svg>\n"
        return out
    }

    /// A short label: the map's name for a known tag, else the identity's distinguishing tail.
    public func label(for tag: TagIdentity, map: FloorMap) -> String {
        if let known = map.knownTag(tag) { return known.name }
        if let fields = tag.beaconFields { return "\(fields.major)-\(fields.minor)" }
        return String(tag.description.suffix(12))
    }

    /// How zones are labelled and shaded.
    enum ZoneShading {
        /// Counts known now (a still picture).
        case counts([ZoneKey: Int])
        /// Counts filled in later by a page's script.
        case live
    }

    /// A tag as a still picture draws it.
    struct DrawnTag {
        var position: Point
        var accuracy: Double
        var label: String
    }

    /// The last position of each tag, in tag order.
    private static func latest(_ positions: [PositionRecord]) -> [PositionRecord] {
        var latest: [TagIdentity: PositionRecord] = [:]
        for position in positions {
            if let existing = latest[position.tag], existing.time > position.time { continue }
            latest[position.tag] = position
        }
        return latest.values.sorted { $0.tag < $1.tag }
    }

    /// The floors' frames left to right, the pixel x after the last one, and the tallest floor's height.
    private func sideBySide(_ floors: [Floor]) -> (frames: [FloorFrame], right: Double, tallest: Double) {
        var frames: [FloorFrame] = []
        var left = margin
        var tallest = 0.0
        let top = margin + 24
        for floor in floors {
            let (minimum, maximum) = floor.outline.bounds
            let frame = FloorFrame(
                floor: floor.major, left: left, top: top, minimum: minimum, maximum: maximum, scale: scale)
            frames.append(frame)
            left += frame.size.width + margin
            tallest = max(tallest, frame.size.height)
        }
        return (frames, left, tallest)
    }

    /// The lines under the floors saying what the drawing shows.
    private func legend(
        map: FloorMap, tagCount: Int, posterior: TagPosterior?, truth: [TruthRecord], height: Double
    ) -> String {
        var legend = [
            "\(tagCount) tags, \(map.agents.count) agents; zones shaded by occupancy; circles are 1-sigma accuracy"
        ]
        if let posterior {
            legend = [
                "\(tagCount) tags, \(map.agents.count) agents; the circle is the estimate's 1-sigma accuracy",
                "purple: the grid posterior, cells of \(number(posterior.cellSize)) m shaded by probability; zones"
                    + " labelled with theirs" + (truth.isEmpty ? "" : "; the cross is the truth"),
            ]
        }
        var out = ""
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
        return out
    }
}
