import CommandLineSupport
import WhereaboutsCalibration
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsLocator
import WhereaboutsMapFile
import WhereaboutsSettings
import WhereaboutsSimulation
import WhereaboutsSurvey
import WhereaboutsWire

/// `whereabouts calibrate`: fits agents' offsets and exponents and tags' powers from a walk with known positions,
/// checks them by leaving one area of the floor out at a time, chooses per agent between the map's constants, the
/// fitted ones and a radio map, and writes the choice into the map unless the check says it is worse.
enum CalibrateCommand {
    static let interface = CommandInterface(
        program: "whereabouts calibrate",
        synopsis: """
            whereabouts calibrate --map M --readings R.jsonl --truth T.jsonl (--out M2 | --in-place)
                                         [--window 1] [--no-tag-power] [--no-radio-map] [--coverage FILE.svg]
                                         [--force]
            """,
        sections: [
            .init(
                Setting.flagsOnly([
                    .value("map", "M", "the map whose constants are fitted"),
                    .value("readings", "R.jsonl", "the readings recorded on the walk"),
                    .value("truth", "T.jsonl", "where the walker really was"),
                    .value("out", "M2", "write the calibrated map here (M is left alone)"),
                    .switchFlag("in-place", "write it over M, after copying M to M.bak"),
                    .value("window", "S", "seconds per sample and (agent, tag)", default: "1"),
                    .switchFlag(
                        "no-tag-power", "do not write tags' measured power (the walk's tags are not ones you track)"),
                    .switchFlag(
                        "no-radio-map",
                        "do not write a radio map (each agent's residual surface, which the grid tracker weighs "
                            + "readings against: docs/calibration.md)"),
                    .value(
                        "coverage", "FILE.svg",
                        "draw the floor with the surveyed positions and each area's held-out error (where to survey next)"
                    ),
                    .switchFlag(
                        "force", "write the map even when the spatial check says it is worse (exit 3 otherwise)"),
                ])
            )
        ],
        notes: """
            Agents with too little data (under 30 samples, or under 2 m of distance spread) keep their map values and
            are named; if no agent can be fitted, nothing is written and the exit status is 2. The floor is cut into
            areas (the map's zones, or blocks of the surveyed box); each is held out in turn and the locator's pipeline
            replayed over its readings, with the map's constants and with the calibration fitted on the other areas.
            Each agent gets what did best held out (map constants, fitted, fitted + radio map). When the chosen
            calibration is worse than the map held out by area, nothing is written and the exit status is 3, with the
            reason on stderr, unless --force. Exit status: 0 written, 1 failure, 2 bad usage or nothing to fit,
            3 refused (worse than the map).
            """)

    static func run(_ settings: Settings) throws -> ExitStatus {
        let mapPath = try settings.required("map")
        let readingsPath = try settings.required("readings")
        let truthPath = try settings.required("truth")
        let outPath = settings.value("out")
        let inPlace = try settings.switchValue("in-place")
        guard (outPath == nil) != !inPlace else { throw SettingsError.invalid("give one of --out or --in-place") }
        let window = try settings.number("window", in: 0.1...60) ?? 1
        let tagPowers = try !settings.switchValue("no-tag-power")
        let writesRadioMap = try !settings.switchValue("no-radio-map")
        let force = try settings.switchValue("force")
        let coveragePath = settings.value("coverage")

        let mapBytes = try FileAccess.read(mapPath)
        let (readings, badReadings) = try RecordingFiles.records(readingsPath, as: RecordedReading.self)
        let (truth, badTruth) = try RecordingFiles.records(truthPath, as: TruthRecord.self)
        var options = GuidedCalibrationRun.Options()
        options.window = window
        options.tagPowers = tagPowers
        options.radioMap = writesRadioMap
        let run: GuidedCalibrationRun
        do {
            run = try GuidedCalibrationRun(mapBytes: mapBytes, readings: readings, truth: truth, options: options)
        } catch {
            throw UsageError("cannot calibrate \(mapPath): \(error)")
        }
        printError(run.statisticsLine(truthCount: truth.count, badReadingLines: badReadings, badTruthLines: badTruth))
        print(run.reportText)
        if let coveragePath {
            try FileAccess.write(Array(run.coverageSVG().utf8), to: coveragePath)
            printError("wrote the coverage report to \(coveragePath)")
        }
        if let worse = run.refusal, !force {
            printError("whereabouts: not writing the calibrated map: \(worse) (--force writes it anyway)")
            return .refused
        }

        let text: String
        do {
            let calibrated = try run.calibratedMap()
            if writesRadioMap {
                let skipped = calibrated.withoutRadioMap
                printError(
                    "radio map: \(calibrated.radioMapAgents) agents"
                        + (skipped.isEmpty ? "" : "; none for \(skipped.joined(separator: ", "))"))
            }
            text = calibrated.text
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
        try write(text, original: mapBytes, mapPath: mapPath, outPath: inPlace ? nil : outPath)
        return .success
    }

    /// Writes the calibrated map to `outPath`, or over `mapPath` (nil `outPath`) after copying the original to M.bak.
    static func write(_ text: String, original: [UInt8], mapPath: String, outPath: String?) throws {
        if let outPath {
            try FileAccess.write(Array(text.utf8), to: outPath)
            printError("wrote \(outPath)")
        } else {
            try FileAccess.write(original, to: mapPath + ".bak")
            try FileAccess.write(Array(text.utf8), to: mapPath)
            printError("wrote \(mapPath) (the original is in \(mapPath).bak)")
        }
    }
}
