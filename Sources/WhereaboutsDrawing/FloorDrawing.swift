import WhereaboutsCore

/// One floor drawn into its frame, layer by layer in the order they stack: heading and outline, zones, a posterior's
/// cells, obstacles and walls, stairs, agents, accuracy circles (clipped to the outline), tags, true positions.
struct FloorDrawing {
    let renderer: MapRenderer
    let floor: Floor
    let frame: MapRenderer.FloorFrame
    let map: FloorMap
    let occupancy: MapRenderer.ZoneShading
    let tags: [MapRenderer.DrawnTag]
    let posterior: TagPosterior?
    let truth: [Point]

    /// The floor's group.
    var svg: String {
        var out = ""
        out += #"<g class="floor" id="floor-\#(floor.major)">"# + "\n"
        out += outline() + zones() + posteriorCells() + obstacles() + walls() + stairs() + agents()
        out += accuracyCircles() + tagDots() + truthCrosses()
        out += "</g>\n"
        return out
    }

    private var live: Bool {
        if case .live = occupancy { return true }
        return false
    }

    private func number(_ value: Double) -> String { renderer.number(value) }

    private func escape(_ text: String) -> String { renderer.escape(text) }

    private func element(_ name: String, _ attributes: KeyValuePairs<String, String>, _ text: String? = nil) -> String {
        renderer.element(name, attributes, text)
    }

    private func element(_ name: String, _ attributes: [(String, String)], _ text: String? = nil) -> String {
        renderer.element(name, attributes, text)
    }

    private func place(_ point: Point) -> Point { frame.pixel(point) }

    private func path(_ polygon: Polygon) -> String {
        polygon.vertices.map { vertex in
            let pixel = place(vertex)
            return "\(number(pixel.x)),\(number(pixel.y))"
        }.joined(separator: " ")
    }

    private func outline() -> String {
        var out = element(
            "text",
            ["x": number(frame.left), "y": number(frame.top - 8), "font-size": "14", "font-weight": "bold"],
            escape("Floor \(floor.major): \(floor.name)")
        )
        out += element(
            "polygon",
            ["points": path(floor.outline), "fill": "#f7f7f5", "stroke": "#333333", "stroke-width": "2"]
        )
        return out
    }

    private func zones() -> String {
        let counts: [ZoneKey: Int]
        if case .counts(let known) = occupancy { counts = known } else { counts = [:] }
        let busiest = max(counts.values.max() ?? 0, 1)
        var out = ""
        for zone in map.zones(onFloor: floor.major) {
            // With a posterior, a zone is labelled with its probability (the mass of the cells whose centres are
            // in it, as the engine's zone evidence counts it) and not shaded by occupancy.
            let mass = posterior.map { posterior in
                posterior.cells.reduce(0.0) { zone.polygon.contains($1.centre) ? $0 + $1.probability : $0 }
            }
            let count = mass == nil ? counts[zone.key] ?? 0 : 0
            let shade = count == 0 ? 0.12 : 0.25 + 0.55 * Double(count) / Double(busiest)
            let fill = count == 0 ? "#7fa7d9" : "#e07b39"
            let marker = live ? ["data-zone": zone.key.pageKey] : [:]
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
        return out
    }

    private func posteriorCells() -> String {
        guard let posterior, let peak = posterior.cells.map(\.probability).max(), peak > 0 else { return "" }
        // Each cell a square, its opacity its probability against the most likely cell's.
        let side = posterior.cellSize * renderer.scale
        var out = #"<g class="posterior">"# + "\n"
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
        return out
    }

    private func obstacles() -> String {
        var out = ""
        for obstacle in map.obstacles where obstacle.floor == floor.major {
            out += element(
                "polygon",
                [
                    "class": "obstacle", "points": path(obstacle.polygon), "fill": "#b5b5ad", "stroke": "#6d6d66",
                    "stroke-width": "1",
                ]
            )
        }
        return out
    }

    private func walls() -> String {
        var out = ""
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
        return out
    }

    private func stairs() -> String {
        let scale = renderer.scale
        var out = ""
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
        return out
    }

    private func agents() -> String {
        var out = ""
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
        return out
    }

    private func accuracyCircles() -> String {
        // Accuracy circles can be far larger than the floor: clip them to its outline.
        let clip = "clip-floor-\(floor.major)"
        var out = "<defs><clipPath id=\"\(clip)\">" + element("polygon", ["points": path(floor.outline)])
        out += "</clipPath></defs>\n"
        out += "<g clip-path=\"url(#\(clip))\"\(live ? #" class="accuracy-layer""# : "")>\n"
        for tag in tags {
            let pixel = place(tag.position)
            out += element(
                "circle",
                [
                    "class": "accuracy", "cx": number(pixel.x), "cy": number(pixel.y),
                    "r": number(max(tag.accuracy, 0) * renderer.scale), "fill": "#c62828", "fill-opacity": "0.10",
                    "stroke": "#c62828", "stroke-opacity": "0.5",
                ]
            )
        }
        out += "</g>\n"
        return out
    }

    private func tagDots() -> String {
        var out = live ? #"<g class="tag-layer"></g>"# + "\n" : ""
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
        return out
    }

    private func truthCrosses() -> String {
        var out = ""
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
        return out
    }
}
