public import WhereaboutsCore
public import WhereaboutsWire

/// Draws a floor map as SVG: each floor side by side with its outline, walls, zones shaded by occupancy, stairs,
/// agents, and tags with their accuracy circles.
///
/// A pure string builder: the caller writes the text where it likes.
public struct MapRenderer: Sendable {
    /// Pixels per metre.
    public var scale: Double = 30
    /// Pixels around and between floors.
    public var margin: Double = 40

    public init() {}

    /// The SVG document for a map and, optionally, tag positions (the last position of each tag is drawn).
    public func svg(map: FloorMap, positions: [PositionRecord] = []) -> String {
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
        let busiest = max(occupancy.values.max() ?? 0, 1)

        var frames: [(floor: Floor, left: Double, minimum: Point, maximum: Point)] = []
        var left = margin
        var tallest = 0.0
        for floor in map.floors {
            let (minimum, maximum) = floor.outline.bounds
            frames.append((floor, left, minimum, maximum))
            left += (maximum.x - minimum.x) * scale + margin
            tallest = max(tallest, (maximum.y - minimum.y) * scale)
        }
        // Room on the right for the labels of tags at the last floor's edge.
        let width = max(left + 60, 2 * margin)
        let top = margin + 24
        let height = top + tallest + margin + 20

        var out = ""
        out += #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        out += #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(number(width))" height="\#(number(height))" "#
        out += #"viewBox="0 0 \#(number(width)) \#(number(height))" font-family="sans-serif">"# + "\n"
        out += #"<rect x="0" y="0" width="\#(number(width))" height="\#(number(height))" fill="white"/>"# + "\n"
        out += element(
            "text", ["x": number(margin), "y": number(margin - 16), "font-size": "16"], escape(map.site.name))

        for frame in frames {
            let floor = frame.floor
            // The plan's y runs up; SVG's runs down.
            let place = { (point: Point) -> Point in
                Point(
                    x: frame.left + (point.x - frame.minimum.x) * self.scale,
                    y: top + (frame.maximum.y - point.y) * self.scale
                )
            }
            let path = { (polygon: Polygon) -> String in
                polygon.vertices.map { vertex in
                    let pixel = place(vertex)
                    return "\(self.number(pixel.x)),\(self.number(pixel.y))"
                }.joined(separator: " ")
            }
            out += #"<g class="floor" id="floor-\#(floor.major)">"# + "\n"
            out += element(
                "text",
                ["x": number(frame.left), "y": number(top - 8), "font-size": "14", "font-weight": "bold"],
                escape("Floor \(floor.major): \(floor.name)")
            )
            out += element(
                "polygon",
                ["points": path(floor.outline), "fill": "#f7f7f5", "stroke": "#333333", "stroke-width": "2"]
            )
            for zone in map.zones(onFloor: floor.major) {
                let count = occupancy[zone.key] ?? 0
                let shade = count == 0 ? 0.12 : 0.25 + 0.55 * Double(count) / Double(busiest)
                let fill = count == 0 ? "#7fa7d9" : "#e07b39"
                out += element(
                    "polygon",
                    [
                        "class": "zone", "points": path(zone.polygon), "fill": fill,
                        "fill-opacity": number(shade), "stroke": "#4a6d99", "stroke-width": "1",
                        "stroke-dasharray": "4 3",
                    ]
                )
                let centre = place(zone.polygon.centroid)
                out += element(
                    "text",
                    [
                        "x": number(centre.x), "y": number(centre.y), "font-size": "11", "text-anchor": "middle",
                        "fill": "#22313f",
                    ],
                    escape("\(zone.name) (\(count))")
                )
            }
            for wall in map.walls where wall.floor == floor.major {
                let start = place(wall.segment.start)
                let end = place(wall.segment.end)
                out += element(
                    "line",
                    [
                        "class": "wall", "x1": number(start.x), "y1": number(start.y), "x2": number(end.x),
                        "y2": number(end.y), "stroke": "#555555",
                        "stroke-width": number(1 + wall.loss / 3), "stroke-linecap": "round",
                    ]
                )
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
                out += element("polygon", ["class": "agent", "points": points, "fill": "#2e7d32", "stroke": "#1b4d1e"])
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
            out += "<g clip-path=\"url(#\(clip))\">\n"
            for tag in tags where tag.floor == floor.major {
                let pixel = place(Point(x: tag.x, y: tag.y))
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
            for tag in tags where tag.floor == floor.major {
                let pixel = place(Point(x: tag.x, y: tag.y))
                let x = number(pixel.x)
                let y = number(pixel.y)
                out += element("circle", ["class": "tag", "cx": x, "cy": y, "r": "4", "fill": "#c62828"])
                out += element(
                    "text",
                    ["x": number(pixel.x + 6), "y": number(pixel.y + 12), "font-size": "9"],
                    escape(label(for: tag.tag, map: map))
                )
            }
            out += "</g>\n"
        }
        out += element(
            "text",
            ["x": number(margin), "y": number(height - 12), "font-size": "11", "fill": "#555555"],
            escape(
                "\(tags.count) tags, \(map.agents.count) agents; zones shaded by occupancy; circles are 1-sigma accuracy"
            )
        )
        out += "</svg>\n"
        return out
    }

    /// A short label: the map's name for a known tag, else the identity's distinguishing tail.
    func label(for tag: TagIdentity, map: FloorMap) -> String {
        if let known = map.knownTag(tag) { return known.name }
        if let fields = tag.beaconFields { return "\(fields.major)-\(fields.minor)" }
        return String(tag.description.suffix(12))
    }

    private func element(_ name: String, _ attributes: KeyValuePairs<String, String>, _ text: String? = nil) -> String {
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

    /// Escapes text for XML content and attribute values.
    func escape(_ text: String) -> String {
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
