import WhereaboutsCalibration
import WhereaboutsCore
import WhereaboutsDrawing
public import WhereaboutsJSON

extension SurveyReport {
    /// The report for the page:
    ///
    /// ```json
    /// {"ok":true,"failure":null,"refused":false,"refusal":null,"site":"…","verdict":"…one sentence…",
    ///  "areas":[{"name":"A1","floor":1,"samples":610,"checked":true,"before":{"median":1.03,"p90":3.05},
    ///            "after":{…},"rssi_before":11.26,"rssi_after":6.1,"polygon":[[x,y],…]}],
    ///  "overall":{"samples":8039,"before":{…},"after":{…},"rssi_before":12.09,"rssi_after":5.43},
    ///  "expected":{"before":{…},"after":{…}},"coverage":[{"floor":1,"share":0.97}],
    ///  "agents":[{"id":"a-1","samples":1317,"choice":"fitted + radio map","offset":5.85,"exponent":1.622,"kept":null}],
    ///  "survey_next":["C2"],"map":"{…the calibrated map…}","text":"…what calibrate prints…","coverage_svg":"<svg…",
    ///  "accuracy_claim":{"fixes":852,"within":0.781,"scale_before":1,"scale":0.87,"within_after":0.681}}
    /// ```
    ///
    /// Errors are metres, residuals dB, unrounded; `before`/`after` are null where an area was not checked.
    /// `expected.before` is the map's held-out error (what the floor gets without the calibration).
    public var json: JSONValue {
        func summary(_ summary: ErrorSummary?) -> JSONValue {
            summary.map { .object(JSONObject([("median", .number($0.median)), ("p90", .number($0.p90))])) } ?? .null
        }
        func number(_ value: Double?) -> JSONValue { value.map { .number($0) } ?? .null }
        let areas = areas.map { area -> JSONValue in
            .object(
                JSONObject([
                    ("name", .string(area.name)), ("floor", .number(Double(area.floor))),
                    ("samples", .number(Double(area.samples))), ("checked", .bool(area.isChecked)),
                    ("before", summary(area.before)), ("after", summary(area.after)),
                    ("rssi_before", number(area.residualBefore)), ("rssi_after", number(area.residualAfter)),
                    ("polygon", .array(area.polygon.vertices.map { .array([.number($0.x), .number($0.y)]) })),
                ]))
        }
        let overall = JSONValue.object(
            JSONObject([
                ("samples", .number(Double(checkedSamples))), ("before", summary(before)), ("after", summary(after)),
                ("rssi_before", number(residualBefore)), ("rssi_after", number(residualAfter)),
            ]))
        let agents = agents.map { agent -> JSONValue in
            .object(
                JSONObject([
                    ("id", .string(agent.id)), ("samples", .number(Double(agent.samples))),
                    ("choice", .string(agent.choice.rawValue)), ("offset", .number(agent.rssiOffset)),
                    ("exponent", .number(agent.pathLossExponent)), ("kept", agent.kept.map { .string($0) } ?? .null),
                ]))
        }
        let coverage = coverage.sorted { $0.key < $1.key }.map { floor, share -> JSONValue in
            .object(JSONObject([("floor", .number(Double(floor))), ("share", .number(share))]))
        }
        return .object(
            JSONObject([
                ("ok", .bool(failure == nil)), ("failure", failure.map { .string($0) } ?? .null),
                ("refused", .bool(refusal != nil)), ("refusal", refusal.map { .string($0) } ?? .null),
                ("site", .string(site)), ("verdict", .string(verdict)), ("areas", .array(areas)), ("overall", overall),
                ("expected", .object(JSONObject([("before", summary(before)), ("after", summary(expected))]))),
                ("coverage", .array(coverage)), ("agents", .array(agents)),
                ("survey_next", .array(surveyNext.map { .string($0.name) })),
                ("map", mapText.map { .string($0) } ?? .null), ("statistics", .string(statistics)),
                ("text", .string(text)), ("coverage_svg", .string(coverageSVG)),
                (
                    "accuracy_claim",
                    claim.map { claim in
                        .object(
                            JSONObject([
                                ("fixes", .number(Double(claim.fixes))), ("within", .number(claim.within)),
                                ("scale_before", .number(claim.scaleBefore)), ("scale", number(claim.scale)),
                                ("within_after", number(claim.withinAfter)),
                            ]))
                    } ?? .null
                ),
            ]))
    }

    /// The report as a standalone HTML page: inline style, the coverage drawing inline, no outside fetches.
    public var html: String {
        let escape = MapRenderer().escape
        var body = "<h1>Survey report: \(escape(site))</h1>\n<p class=\"verdict\">\(escape(verdict))</p>\n"
        if failure == nil {
            // The drawing without its XML declaration, which has no place inside HTML.
            let svg = coverageSVG.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
            let drawing = svg.first?.hasPrefix("<?xml") == true ? String(svg.last ?? "") : coverageSVG
            body += "<figure>\(drawing)</figure>\n" + areaTable + agentTable
            let next = surveyNext.map(\.name)
            body +=
                "<p>Survey next: "
                + (next.isEmpty
                    ? "nowhere in particular: every area was checked and is under 2 m."
                    : escape(next.joined(separator: ", "))
                        + " (grey: too few samples to check; red: 2 m or more after calibration).") + "</p>\n"
            if let claim { body += "<p>\(escape(CalibrationReportText.claimLine(claim))).</p>\n" }
        }
        body += "<details><summary>What <code>whereabouts calibrate</code> prints for these files</summary><pre>"
        body += escape([statistics, text].filter { !$0.isEmpty }.joined(separator: "\n")) + "</pre></details>\n"
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Survey report: \(escape(site))</title>
            <style>
            body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
            table { border-collapse: collapse; margin: 1em 0; }
            th, td { border-bottom: 1px solid #ddd; padding: 0.2em 0.8em; text-align: right; }
            th:first-child, td:first-child { text-align: left; }
            .verdict { font-size: 1.15em; }
            .unchecked { color: #888; }
            figure { margin: 1em 0; }
            figure svg { max-width: 100%; height: auto; }
            pre { font-size: 12px; overflow-x: auto; }
            </style>
            </head>
            <body>
            \(body)</body>
            </html>

            """
    }

    /// One sentence: the outcome.
    public var verdict: String {
        if let failure { return "No calibration: \(failure)." }
        let figures =
            "held out by area, the median error goes from \(metres(before)) to \(metres(after)); "
            + "to expect over the floor: \(metres(expected)) (\(metres(before)) with the map as it is)"
        if let refusal { return "The calibrated map would be refused: \(refusal). Figures: \(figures)." }
        if keepsMapConstants {
            let minimum = CalibrationSettings().minimumChoiceCoverage
            let thin = coverage.sorted { $0.key < $1.key }.filter { $0.value < minimum }
            let why =
                thin.isEmpty
                ? "held out, they did best"
                : "the survey covers "
                    + thin.map { "\(Int(($0.value * 100).rounded())) % of floor \($0.key)" }.joined(separator: ", ")
                    + ", under the \(Int((minimum * 100).rounded())) % a calibration needs"
            return "Every agent keeps the map's constants (\(why)): \(figures)."
        }
        return "The calibrated map is ready to save: \(figures)."
    }

    private var areaTable: String {
        let escape = MapRenderer().escape
        var rows = ""
        for area in areas {
            let cells =
                area.isChecked
                ? [pair(area.before), pair(area.after), arrow(area.residualBefore, area.residualAfter)]
                : ["too few samples to hold out", "", ""]
            rows +=
                "<tr\(area.isChecked ? "" : " class=\"unchecked\"")><td>\(escape(area.name))</td>"
                + "<td>\(area.floor)</td><td>\(area.samples)</td>"
                + cells.map { "<td>\(escape($0))</td>" }.joined() + "</tr>\n"
        }
        rows +=
            "<tr><th>all areas</th><th></th><th>\(checkedSamples)</th><th>\(pair(before))</th><th>\(pair(after))</th>"
            + "<th>\(arrow(residualBefore, residualAfter))</th></tr>\n"
            + "<tr><th>expected over the floor</th><th></th><th></th><th>\(pair(before))</th>"
            + "<th>\(pair(expected))</th><th></th></tr>\n"
        return """
            <table>
            <tr><th>area</th><th>floor</th><th>samples</th><th>map: median / p90 (m)</th>\
            <th>calibrated: median / p90 (m)</th><th>RSSI RMS dB (map → calibrated)</th></tr>
            \(rows)</table>

            """
    }

    private var agentTable: String {
        let escape = MapRenderer().escape
        let rows = agents.map { agent in
            "<tr><td>\(escape(agent.id))</td><td>\(agent.samples)</td><td>\(fixedPointText(agent.rssiOffset))</td>"
                + "<td>\(fixedPointText(agent.pathLossExponent, 3))</td>"
                + "<td>\(escape(agent.kept.map { "map constants (\($0))" } ?? agent.choice.rawValue))</td></tr>\n"
        }
        return "<table>\n<tr><th>agent</th><th>samples</th><th>fitted offset dB</th><th>fitted exponent</th>"
            + "<th>gets</th></tr>\n"
            + rows.joined() + "</table>\n"
    }

    private func pair(_ summary: ErrorSummary?) -> String {
        summary.map { "\(fixedPointText($0.median)) / \(fixedPointText($0.p90))" } ?? "-"
    }

    private func arrow(_ before: Double?, _ after: Double?) -> String {
        "\(before.map { fixedPointText($0) } ?? "-") → \(after.map { fixedPointText($0) } ?? "-")"
    }

    private func metres(_ summary: ErrorSummary?) -> String {
        summary.map { "\(fixedPointText($0.median)) m (p90 \(fixedPointText($0.p90)) m)" } ?? "-"
    }
}
