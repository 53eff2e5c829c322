import CommandLineSupport
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsSettings
import WhereaboutsSimulation
import WhereaboutsWire

/// `whereabouts evaluate`: scores positions against truth and prints a table or JSON.
enum EvaluateCommand {
    static let interface = CommandInterface(
        program: "whereabouts evaluate",
        synopsis: "whereabouts evaluate --positions P.jsonl --truth T.jsonl [--map M] [--json]",
        sections: [
            .init(
                Setting.flagsOnly([
                    .value("positions", "P.jsonl", "the positions to score (as `whereabouts replay` writes them)"),
                    .value("truth", "T.jsonl", "where the tags really were"),
                    .value("map", "M", "the map, for floor and zone accuracy"),
                    .switchFlag("json", "print JSON instead of a table"),
                ]))
        ])

    static func run(_ settings: Settings) throws -> ExitStatus {
        let positionsPath = try settings.required("positions")
        let truthPath = try settings.required("truth")
        let mapPath = settings.value("map")
        let asJSON = try settings.switchValue("json")

        let map = try mapPath.map(RecordingFiles.map)
        let (positions, badPositions) = try RecordingFiles.records(positionsPath, as: PositionRecord.self)
        let (truth, badTruth) = try RecordingFiles.records(truthPath, as: TruthRecord.self)
        let report = AccuracyReport(positions: positions, truth: truth, map: map)
        if asJSON {
            print(JSONWriter().string(json(report, badLines: badPositions + badTruth)))
        } else {
            print(table(report, badLines: badPositions + badTruth))
        }
        return report.scored > 0 ? .success : .failure
    }

    static func table(_ report: AccuracyReport, badLines: Int) -> String {
        var lines: [String] = []
        func row(_ name: String, _ value: String) {
            lines.append(name + String(repeating: " ", count: max(28 - name.count, 1)) + value)
        }
        row("positions scored", "\(report.scored) (\(report.unscored) without truth, \(badLines) bad lines)")
        if let error = report.error {
            row("error median (m)", fixed(error.median))
            row("error mean (m)", fixed(error.mean))
            row("error p90 (m)", fixed(error.p90))
            row("error p95 (m)", fixed(error.p95))
            row("error max (m)", fixed(error.maximum))
        }
        if let within = report.withinAccuracy { row("within own accuracy", fixed(100 * within, 1) + " % (goal ~68 %)") }
        if let floor = report.floorAccuracy { row("floor accuracy", fixed(100 * floor, 1) + " %") }
        if let zone = report.zoneAccuracy { row("zone accuracy", fixed(100 * zone, 1) + " %") }
        row("tag-hours", fixed(report.tagHours, 3))
        if let reported = report.reportedZoneChangesPerTagHour, let actual = report.trueZoneChangesPerTagHour {
            row("zone changes per tag-hour", "\(fixed(reported, 1)) reported, \(fixed(actual, 1)) true")
        }
        if let delay = report.detectionDelay {
            row(
                "zone change delay (s)",
                "median \(fixed(delay.median, 1)), p90 \(fixed(delay.p90, 1)) over \(delay.count) changes"
            )
        }
        if report.zoneAccuracy != nil { row("zone changes missed", "\(report.missedZoneChanges)") }
        if report.zoneAccuracy != nil {
            let threshold = fixed(AccuracyReport.confidentProbability, 1)
            let share = report.confidentZoneAccuracy.map { fixed(100 * $0, 1) + " %" } ?? "-"
            row("zones given p >= \(threshold), right", "\(share) of \(report.confidentZones)")
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ report: AccuracyReport, badLines: Int) -> JSONValue {
        func distribution(_ value: AccuracyReport.Distribution?) -> JSONValue {
            guard let value else { return .null }
            return .object(
                JSONObject([
                    ("count", .number(Double(value.count))), ("median", .number(value.median)),
                    ("mean", .number(value.mean)), ("p90", .number(value.p90)), ("p95", .number(value.p95)),
                    ("max", .number(value.maximum)),
                ]))
        }
        func optional(_ value: Double?) -> JSONValue { value.map(JSONValue.number) ?? .null }
        return .object(
            JSONObject([
                ("scored", .number(Double(report.scored))), ("unscored", .number(Double(report.unscored))),
                ("bad_lines", .number(Double(badLines))), ("error_m", distribution(report.error)),
                ("within_accuracy", optional(report.withinAccuracy)),
                ("floor_accuracy", optional(report.floorAccuracy)), ("zone_accuracy", optional(report.zoneAccuracy)),
                ("tag_hours", .number(report.tagHours)),
                ("zone_changes_per_tag_hour", optional(report.reportedZoneChangesPerTagHour)),
                ("true_zone_changes_per_tag_hour", optional(report.trueZoneChangesPerTagHour)),
                ("zone_change_delay_s", distribution(report.detectionDelay)),
                ("confident_zone_accuracy", optional(report.confidentZoneAccuracy)),
                ("confident_zones", .number(Double(report.confidentZones))),
                ("missed_zone_changes", .number(Double(report.missedZoneChanges))),
            ]))
    }
}
