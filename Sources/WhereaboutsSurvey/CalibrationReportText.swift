public import WhereaboutsCalibration
import WhereaboutsCore
import WhereaboutsDrawing

/// What `whereabouts calibrate` prints and draws: the spatial check per area, the per-agent choice, the tags; the
/// survey's report shows the same.
public enum CalibrationReportText {
    /// The spatial check's table, the per-agent table, the tags and the agents that kept their values.
    public static func text(_ result: CalibrationResult, check: SpatialReport, claim: AccuracyClaim? = nil) -> String {
        var lines = areaLines(check)
        lines.append("")
        lines.append(
            "agent                samples  offset dB  exponent  held-out RSSI dB (map / fitted / +radio map)  choice")
        for agent in result.agents {
            let held =
                check.agentResiduals.indices.contains(agent.agentIndex)
                ? check.agentResiduals[agent.agentIndex].map { $0.map { fixedPointText($0) } ?? "-" }.joined(
                    separator: " / ")
                : "-"
            let choice = check.choices.indices.contains(agent.agentIndex) ? check.choices[agent.agentIndex] : .map
            lines.append(
                pad(agent.id, 20) + padLeft("\(agent.samples)", 8) + padLeft(fixedPointText(agent.after.rssiOffset), 11)
                    + padLeft(fixedPointText(agent.after.pathLossExponent, 3), 10) + "  " + pad(held, 44) + "  "
                    + (agent.refusal.map { "map constants (\($0))" } ?? choice.rawValue))
        }
        if !result.transmitters.isEmpty {
            lines.append("")
            lines.append(
                "tag                                                 samples  power dBm (before -> fitted ± sd)")
            for tag in result.transmitters {
                lines.append(
                    pad(tag.identity.description, 52) + padLeft("\(tag.samples)", 7) + "  "
                        + "\(fixedPointText(tag.before, 1)) -> \(fixedPointText(tag.after, 1))"
                        + (tag.deviation.map { " ± \(fixedPointText(max($0, 1), 1))" } ?? "")
                        + (tag.refusal.map { " (kept: \($0))" } ?? ""))
            }
        }
        for agent in result.agents {
            if let refusal = agent.refusal {
                lines.append("warning: agent \(agent.id) keeps its map values: \(refusal)")
            }
        }
        if !check.choices.contains(where: { $0 != .map }) {
            lines.append(
                "every agent keeps the map's constants: the map is written as it was"
                    + (claim?.scale == nil ? "" : ", but for its accuracy scale"))
        }
        if let claim { lines.append(claimLine(claim)) }
        return lines.joined(separator: "\n")
    }

    /// The per-area lines and the overall one.
    private static func areaLines(_ check: SpatialReport) -> [String] {
        let shares = check.coverage.shares.sorted { $0.key < $1.key }.map {
            "\(Int(($0.value * 100).rounded())) % of floor \($0.key)"
        }
        var lines = [
            "spatial check: \(check.areas.areas.filter(\.isChecked).count) areas "
                + "(\(check.areas.kind == .zones ? "the map's zones" : "blocks of the surveyed box")), each held out "
                + "in turn; the survey covers \(shares.joined(separator: ", "))",
            "area                 samples  map: median / p90 (m)  chosen: median / p90 (m)  RSSI RMS dB (map -> chosen)",
        ]
        func position(_ summary: ErrorSummary?) -> String {
            summary.map { "\(fixedPointText($0.median)) / \(fixedPointText($0.p90))" } ?? "-"
        }
        func residuals(_ before: Double?, _ after: Double?) -> String {
            "\(before.map { fixedPointText($0) } ?? "-") -> \(after.map { fixedPointText($0) } ?? "-")"
        }
        for figures in check.figures {
            let head = pad(figures.area.name, 20) + padLeft("\(figures.area.samples)", 8) + "  "
            guard figures.area.isChecked else {
                lines.append(head + "(too few samples to hold out: always in training)")
                continue
            }
            lines.append(
                head + pad(position(figures.before), 23) + pad(position(figures.after), 26)
                    + residuals(figures.residualBefore, figures.residualAfter))
        }
        let total = check.figures.filter(\.area.isChecked).reduce(0) { $0 + $1.area.samples }
        lines.append(
            pad("all areas", 20) + padLeft("\(total)", 8) + "  " + pad(position(check.before), 23)
                + pad(position(check.after), 26) + residuals(check.residualBefore, check.residualAfter))
        lines.append(
            pad("expected over the floor", 30) + pad(position(check.before), 23) + pad(position(check.expected), 26)
                + "(surveyed share at the in-survey error, the rest held out)")
        if let worse = check.worse { lines.append("worse than the map: \(worse)") }
        return lines
    }

    /// The coverage report: the floor, the surveyed positions and each area's held-out median error.
    public static func coverageSVG(_ calibration: GuidedCalibration, check: SpatialReport, scale: Double = 60) -> String
    {
        var renderer = MapRenderer()
        renderer.scale = scale
        let areas = check.figures.map { figures in
            CoverageOverlay.Area(
                name: figures.area.name, floor: figures.area.floor, polygon: figures.area.polygon,
                samples: figures.area.samples, checked: figures.area.isChecked, before: figures.before?.median,
                after: figures.after?.median)
        }
        let samples = calibration.samples.compactMap { sample in
            sample.position.map { (floor: calibration.map.agents[sample.receiver].floor, point: $0) }
        }
        let overall =
            "held out by area, median error: map \(check.before.map { fixedPointText($0.median) } ?? "-") m, "
            + "calibrated \(check.after.map { fixedPointText($0.median) } ?? "-") m (expected over the floor "
            + "\(check.expected.map { fixedPointText($0.median) } ?? "-") m); "
            + "dots: surveyed positions; grey: not surveyed enough to check"
        return renderer.coverageSVG(
            map: calibration.map, coverage: CoverageOverlay(areas: areas, samples: samples, summary: overall))
    }

    /// The line on the published accuracy (``AccuracyClaim``).
    public static func claimLine(_ claim: AccuracyClaim) -> String {
        let share = { (value: Double) in fixedPointText(100 * value, 1) + " %" }
        let measured =
            "accuracy claimed: \(share(claim.within)) of the survey's \(claim.fixes) fixes of a moving tag within "
            + "their published accuracy (goal 68 %)"
        guard let scale = claim.scale, let after = claim.withinAfter else {
            return measured + "; too few to rescale it (\(AccuracyClaim.minimumFixes) needed; a tag standing at "
                + "points says nothing of a walking one): model.accuracy_scale stays \(fixedPointText(claim.scaleBefore))"
        }
        return measured + "; model.accuracy_scale \(fixedPointText(claim.scaleBefore)) -> \(fixedPointText(scale)) "
            + "makes it \(share(after))"
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(width - text.count, 1))
    }

    private static func padLeft(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(width - text.count, 0)) + text
    }
}

/// Fixed-point text for tables, without Foundation's formatters: `value` with `decimals` digits after the point
/// ("-" when not finite).
public func fixedPointText(_ value: Double, _ decimals: Int = 2) -> String {
    guard value.isFinite else { return "-" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    guard scaled < 1e15 else { return String(value) }
    let whole = Int(scaled) / Int(scale)
    let fraction = Int(scaled) % Int(scale)
    var text = (value < 0 && scaled > 0 ? "-" : "") + String(whole)
    if decimals > 0 {
        let digits = String(fraction)
        text += "." + String(repeating: "0", count: decimals - digits.count) + digits
    }
    return text
}
