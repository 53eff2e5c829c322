import CommandLineSupport
import WhereaboutsCalibration
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsLocator
import WhereaboutsMapFile
import WhereaboutsSettings
import WhereaboutsSimulation
import WhereaboutsWire

/// `whereabouts calibrate`: fits agents' offsets and exponents and tags' powers from a walk with known positions,
/// reports the held-out error before and after, and writes the constants into the map.
enum CalibrateCommand {
    static let interface = CommandInterface(
        program: "whereabouts calibrate",
        synopsis: """
            whereabouts calibrate --map M --readings R.jsonl --truth T.jsonl (--out M2 | --in-place)
                                         [--folds 5] [--window 1] [--no-tag-power] [--no-radio-map]
            """,
        sections: [
            .init(
                Setting.flagsOnly([
                    .value("map", "M", "the map whose constants are fitted"),
                    .value("readings", "R.jsonl", "the readings recorded on the walk"),
                    .value("truth", "T.jsonl", "where the walker really was"),
                    .value("out", "M2", "write the calibrated map here (M is left alone)"),
                    .switchFlag("in-place", "write it over M, after copying M to M.bak"),
                    .value("folds", "K", "time blocks for the held-out error (2…20)", default: "5"),
                    .value("window", "S", "seconds per sample and (agent, tag)", default: "1"),
                    .switchFlag(
                        "no-tag-power", "do not write tags' measured power (the walk's tags are not ones you track)"),
                    .switchFlag(
                        "no-radio-map",
                        "do not write a radio map (each agent's residual surface, which the grid tracker weighs "
                            + "readings against: docs/calibration.md)"),
                ])
            )
        ],
        notes: """
            Agents with too little data (under 30 samples, or under 2 m of distance spread) keep their map values and
            are named; if no agent can be fitted, nothing is written and the exit status is 2.
            """)

    static func run(_ settings: Settings) throws -> ExitStatus {
        let mapPath = try settings.required("map")
        let readingsPath = try settings.required("readings")
        let truthPath = try settings.required("truth")
        let outPath = settings.value("out")
        let inPlace = try settings.switchValue("in-place")
        guard (outPath == nil) != !inPlace else { throw SettingsError.invalid("give one of --out or --in-place") }
        let folds = try settings.integer("folds", in: 2...20) ?? 5
        let window = try settings.number("window", in: 0.1...60) ?? 1
        let tagPowers = try !settings.switchValue("no-tag-power")
        let writesRadioMap = try !settings.switchValue("no-radio-map")

        let mapBytes = try FileAccess.read(mapPath)
        let (readings, badReadings) = try RecordingFiles.records(readingsPath, as: RecordedReading.self)
        let (truth, badTruth) = try RecordingFiles.records(truthPath, as: TruthRecord.self)
        let calibration: GuidedCalibration
        let result: CalibrationResult
        do {
            let document: JSONValue
            do { document = try MapDocument.parse(mapBytes) } catch { throw CalibrationError.malformedMap(error) }
            calibration = try GuidedCalibration(document: document, readings: readings, truth: truth, window: window)
            result = try calibration.calibrate()
        } catch {
            throw UsageError("cannot calibrate \(mapPath): \(error)")
        }
        let statistics = calibration.statistics
        printError(
            "\(statistics.readings) readings (\(badReadings) bad lines), \(truth.count) truth samples "
                + "(\(badTruth) bad lines): \(statistics.used) used in \(calibration.samples.count) samples; "
                + "\(statistics.withoutTruth) without truth, \(statistics.otherFloor) from another floor, "
                + "\(statistics.unknownAgents) from agents not in the map, \(statistics.invalid) invalid")
        let heldOut = calibration.crossValidate(folds: folds) { map, readings in
            LocatorReplay.run(map: map, readings: readings).output.positions
        }
        print(report(result, heldOut: heldOut, settings: calibration.settings))

        let text: String
        do {
            // The radio map is learned against the trend with every fitted value, tag powers included: without
            // them the residuals would carry the tags' power error.
            let radioMap = writesRadioMap ? try calibration.radioMap(result) : [:]
            if writesRadioMap {
                let skipped = calibration.map.agents.map(\.id).filter { radioMap[$0] == nil }
                printError(
                    "radio map: \(radioMap.count) agents"
                        + (skipped.isEmpty
                            ? "" : "; none for \(skipped.joined(separator: ", ")) (the walk passed too few places)"))
            }
            text = try MapDocument.text(
                calibration.calibratedDocument(result, tagPowers: tagPowers, radioMap: radioMap))
        } catch let error as CalibrationError {
            printError("whereabouts: \(error)")
            return .failure
        } catch let error as MapProblems {
            printError("whereabouts: \(CalibrationError.editedMapInvalid(error))")
            return .failure
        } catch {
            printError("whereabouts: \(error)")
            return .failure
        }
        if inPlace {
            try FileAccess.write(mapBytes, to: mapPath + ".bak")
            try FileAccess.write(Array(text.utf8), to: mapPath)
            printError("wrote \(mapPath) (the original is in \(mapPath).bak)")
        } else if let outPath {
            try FileAccess.write(Array(text.utf8), to: outPath)
            printError("wrote \(outPath)")
        }
        return .success
    }

    /// The held-out errors, the per-agent table, the tags, and the agents that kept their values.
    static func report(
        _ result: CalibrationResult, heldOut: GuidedCalibration.HeldOutReport, settings: CalibrationSettings
    ) -> String {
        var lines: [String] = []
        func pad(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(width - text.count, 1))
        }
        func padLeft(_ text: String, _ width: Int) -> String {
            String(repeating: " ", count: max(width - text.count, 0)) + text
        }
        lines.append(
            pad("held-out error (\(heldOut.folds) time blocks)", 33) + pad("map constants", 17) + pad("fitted", 17)
                + "fitted + radio map")
        func position(_ summary: ErrorSummary?) -> String {
            summary.map { "\(fixed($0.median)) / \(fixed($0.p90))" } ?? "-"
        }
        lines.append(
            pad("  position median / p90 (m)", 33) + pad(position(heldOut.positionBefore), 17)
                + pad(position(heldOut.positionAfter), 17) + position(heldOut.positionWithRadioMap))
        lines.append(
            pad("  RSSI residual RMS (dB)", 33) + pad(heldOut.residualBefore.map { fixed($0) } ?? "-", 17)
                + pad(heldOut.residualAfter.map { fixed($0) } ?? "-", 17)
                + (heldOut.residualWithRadioMap.map { fixed($0) } ?? "-"))
        lines.append("")
        lines.append("agent                samples  offset dB  exponent  residual dB (map -> fitted)  status")
        for agent in result.agents {
            let residual =
                "\(agent.residualBefore.map { fixed($0) } ?? "-") -> \(agent.residualAfter.map { fixed($0) } ?? "-")"
            lines.append(
                pad(agent.id, 20) + padLeft("\(agent.samples)", 8) + padLeft(fixed(agent.after.rssiOffset), 11)
                    + padLeft(fixed(agent.after.pathLossExponent, 3), 10) + "  " + pad(residual, 27) + "  "
                    + (agent.refusal.map { "kept the map's values: \($0)" } ?? "fitted"))
        }
        if !result.transmitters.isEmpty {
            lines.append("")
            lines.append("tag                                                 samples  power dBm (before -> fitted)")
            for tag in result.transmitters {
                lines.append(
                    pad(tag.identity.description, 52) + padLeft("\(tag.samples)", 7) + "  "
                        + "\(fixed(tag.before, 1)) -> \(fixed(tag.after, 1))"
                        + (tag.refusal.map { " (kept: \($0))" } ?? ""))
            }
        }
        for agent in result.agents {
            if let refusal = agent.refusal {
                lines.append("warning: agent \(agent.id) keeps its map values: \(refusal)")
            }
        }
        return lines.joined(separator: "\n")
    }
}
