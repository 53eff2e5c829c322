public import WhereaboutsCore

extension MapRenderer {
    /// The bands of the planning heat map: upper bounds in metres and their colours, green (good) to red; accuracy
    /// at or above the last bound takes the last colour.
    static let planBands: [(upTo: Double, colour: String)] = [
        (1, "#1a9850"), (1.5, "#66bd63"), (2, "#a6d96a"), (3, "#fee08b"), (4, "#fdae61"), (6, "#f46d43"),
        (.infinity, "#d73027"),
    ]
    /// Free cells no agent hears.
    static let unheardColour = "#8c8c8c"

    /// The map with each floor's ``AccuracyPlan`` over it (`whereabouts render --plan`): cells shaded by the
    /// expected accuracy (the radius holding about 68 % of fixes) in bands with a legend in metres, grey where no
    /// agent hears a tag; each zone labelled with its mean expected accuracy and how much of it may be confused with
    /// other zones; under each floor its median, p90 and the share of its area heard by fewer than three agents.
    public func planSVG(map: FloorMap, plans: [AccuracyPlan]) -> String {
        // The still picture's legend speaks of tags and occupancy, which this drawing has none of: its line is left
        // out (the plan's own legend is drawn above the floors).
        let stillLegend = escape("0 tags, \(map.agents.count) agents; zones shaded by occupancy")
        let base = svg(map: map).split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !($0.hasPrefix("<text") && $0.contains(">" + stillLegend)) }.joined(separator: "\n")
        return overlaid(base, map: map, group: "plan", trailer: planLegend()) { floor, frame in
            guard let plan = plans.first(where: { $0.floor == floor.major }) else { return "" }
            return planCells(plan, frame: frame) + planZoneLabels(plan, map: map, frame: frame)
                + element(
                    "text",
                    [
                        "class": "plan-summary", "x": number(frame.left),
                        "y": number(frame.top + frame.size.height + 16), "font-size": "11", "fill": "#333333",
                    ], escape(Self.planSummary(plan)))
        }
    }

    /// A floor's plan in a line: median, p90, and the sparse share.
    public static func planSummary(_ plan: AccuracyPlan) -> String {
        let figure = { (value: Double?) in value.map { "\($0.rounded(toDecimals: 1)) m" } ?? "none" }
        let sparse = (plan.sparseShare * 100).rounded()
        return "expected accuracy: median \(figure(plan.quantile(0.5))), p90 \(figure(plan.quantile(0.9))); "
            + "\(Int(sparse)) % of the free area heard by fewer than \(plan.configuration.minimumAgents) agents"
    }

    /// The plan's free cells, a rectangle per run of cells of one band along a row.
    private func planCells(_ plan: AccuracyPlan, frame: FloorFrame) -> String {
        func band(_ index: Int) -> Int? {
            guard plan.free[index] else { return nil }
            guard let accuracy = plan.accuracy[index] else { return -1 }
            return Self.planBands.firstIndex { accuracy < $0.upTo } ?? Self.planBands.count - 1
        }
        var out = ""
        for row in 0..<plan.rows {
            var column = 0
            while column < plan.columns {
                guard let first = band(row * plan.columns + column) else {
                    column += 1
                    continue
                }
                var end = column + 1
                while end < plan.columns, band(row * plan.columns + end) == first { end += 1 }
                // Plan y runs up, pixels down: the run's top edge is the cells' upper side.
                let corner = frame.pixel(
                    Point(
                        x: plan.origin.x + Double(column) * plan.cellSize,
                        y: plan.origin.y + Double(row + 1) * plan.cellSize))
                out += element(
                    "rect",
                    [
                        "class": "plan-cell", "x": number(corner.x), "y": number(corner.y),
                        "width": number(Double(end - column) * plan.cellSize * scale),
                        "height": number(plan.cellSize * scale),
                        "fill": first < 0 ? Self.unheardColour : Self.planBands[first].colour, "fill-opacity": "0.55",
                    ])
                column = end
            }
        }
        return out
    }

    /// Each zone's mean expected accuracy and confusion, under its name.
    private func planZoneLabels(_ plan: AccuracyPlan, map: FloorMap, frame: FloorFrame) -> String {
        var out = ""
        for zone in plan.zones {
            guard let polygon = map.zones.first(where: { $0.key == zone.key })?.polygon else { continue }
            let centre = frame.pixel(polygon.centroid)
            let accuracy = zone.accuracy.map { "≈ \($0.rounded(toDecimals: 1)) m" } ?? "not heard"
            let confused = zone.confusedShare > 0 ? ", \(Int((zone.confusedShare * 100).rounded())) % confusable" : ""
            out += element(
                "text",
                [
                    "class": "plan-zone", "x": number(centre.x), "y": number(centre.y + 13), "font-size": "10",
                    "text-anchor": "middle", "fill": "#111111",
                ], escape(accuracy + confused))
        }
        return out
    }

    /// The bands' swatches, left to right above the floors, labelled in metres.
    private func planLegend() -> String {
        var out = element(
            "text", ["x": number(margin), "y": number(margin - 2), "font-size": "10", "fill": "#333333"],
            "accuracy, m:")
        var x = margin + 74
        var lower = 0.0
        for band in Self.planBands + [(upTo: -1, colour: Self.unheardColour)] {
            let label =
                band.upTo < 0
                ? "none"
                : band.upTo.isFinite
                    ? (lower == 0 ? "< \(number(band.upTo))" : "\(number(lower))–\(number(band.upTo))")
                    : "≥ \(number(lower))"
            out += element(
                "rect",
                [
                    "x": number(x), "y": number(margin - 11), "width": "10", "height": "10", "fill": band.colour,
                    "fill-opacity": "0.55", "stroke": "#555555", "stroke-width": "0.5",
                ])
            out += element(
                "text", ["x": number(x + 13), "y": number(margin - 2), "font-size": "10", "fill": "#333333"],
                escape(label))
            x += 46
            lower = band.upTo
        }
        return out
    }
}
