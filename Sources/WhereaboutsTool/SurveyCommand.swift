import CommandLineSupport
import Synchronization
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsMQTT
import WhereaboutsMapFile
import WhereaboutsSettings
import WhereaboutsSurvey
import WhereaboutsWire

/// `whereabouts survey`: a survey without the browser. Records the survey tag's readings from the broker and the
/// reference points read from standard input, then runs `calibrate`'s fit and spatial check over them and writes the
/// accuracy report (HTML and JSON) and the calibrated map.
enum SurveyCommand {
    static let interface = CommandInterface(
        program: "whereabouts survey",
        synopsis: """
            whereabouts survey --map M --broker URL --tag ID --out DIR [--dwell 30] [--time-scale X]
                                      [--time-origin UNIX] [--force] [broker options]
                   whereabouts survey --map M --out DIR --report-only [--force]
            """,
        introduction: """
              Stand the survey tag at a point and type where, one line per point: "x y" or "x y floor" (metres on
              the map; the floor's major, else the last one given, else the map's first). The point is held for
              --dwell seconds (a new line before then closes it early); the end of the input ends the survey once the
              last point's time is up. Appends survey-readings.jsonl and survey-truth.jsonl in DIR as it goes
              (docs/formats.md), then writes survey-report.html, survey-report.json and, unless the spatial check
              refuses it, survey-calibrated.json (what `whereabouts calibrate` would write for the same files).
            """,
        sections: [
            .init(
                Setting.flagsOnly([
                    .value("map", "M", "the floor map"),
                    .value("tag", "ID", "the survey tag's identity (ibeacon-<uuid>-<major>-<minor>, …)"),
                    .value("out", "DIR", "the survey's directory (an existing one; no survey files in it yet)"),
                    .value("dwell", "S", "seconds per reference point", default: "30"),
                    .value("time-scale", "X", "run the clock X times faster (against `sim --speed X`)", default: "1"),
                    .value("time-origin", "UNIX", "where the scaled clock starts", default: "now"),
                    .switchFlag("report-only", "no survey: report on the files already in DIR"),
                    .switchFlag("force", "write survey-calibrated.json even when the spatial check refuses it"),
                ]) + Setting.broker(defaultUsername: "surveyor"))
        ])

    static func run(_ settings: Settings) async throws -> ExitStatus {
        let mapPath = try settings.required("map")
        let directory = try settings.required("out")
        let force = try settings.switchValue("force")
        let document: JSONValue
        do { document = try MapDocument.parse(try FileAccess.read(mapPath)) } catch let error as JSONParseError {
            throw UsageError("\(mapPath): not JSON: \(error)")
        }
        if try settings.switchValue("report-only") {
            let readings = try RecordingFiles.records(
                directory + "/" + SurveyRecorder.readingsName, as: RecordedReading.self)
            let truth = try RecordingFiles.records(directory + "/" + SurveyRecorder.truthName, as: TruthRecord.self)
            let report = SurveyReport.make(
                document: document, readings: readings.records, truth: truth.records,
                badReadingLines: readings.badLines, badTruthLines: truth.badLines)
            return try write(report, into: directory, force: force)
        }
        let tagText = try settings.required("tag")
        guard let tag = TagIdentity(wire: tagText) else {
            throw SettingsError.invalid("--tag: not a tag identity: \(tagText)")
        }
        var configuration = SurveySession.Configuration()
        configuration.dwell = try settings.number("dwell", in: 1...3600) ?? 30
        let clock = try ScaledClock(
            scale: try settings.number("time-scale"), origin: try settings.number("time-origin"))
        let broker = try BrokerSettings(settings, defaultUsername: "surveyor")
        let recorder: SurveyRecorder
        do {
            recorder = try SurveyRecorder(
                document: document, directory: directory, configuration: configuration, clock: clock)
        } catch let error as SurveyError {
            throw UsageError("\(mapPath): \(error)")
        }
        _ = try recorder.start(tag: tag)
        let logger = Logger(label: "whereabouts survey")
        let site = recorder.site
        let reporter = PointReporter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await recorder.record(through: broker, site: site, logger: logger) }
            group.addTask { try await takePoints(from: try LineFeed.lines("-"), into: recorder) }
            group.addTask {
                while true {
                    reporter.report(recorder.progress())
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            group.addTask {
                for await _ in SignalWatcher.terminationSignals() { return }
            }
            // The points' end (or a signal, or the broker failing for good) ends the survey.
            defer { group.cancelAll() }
            try await group.next()
        }
        let progress = try recorder.finish()
        reporter.report(progress)
        writeOut(
            "survey finished: \(progress.places) points, \(progress.readings) readings, \(progress.samples) samples; "
                + "calibrating (as whereabouts calibrate does)\n")
        return try write(recorder.report(), into: directory, force: force)
    }

    /// Reads points until the input ends, then waits for the last point's time to be up.
    static func takePoints(from lines: AsyncStream<String>, into recorder: SurveyRecorder) async throws {
        var floor = recorder.firstFloor
        for await line in lines {
            guard let numbers = LineFeed.numbers(line), numbers.count == 2 || numbers.count == 3 else {
                printError("whereabouts survey: not a point (\"x y\" or \"x y floor\"): \(line)")
                continue
            }
            if numbers.count == 3 {
                guard let major = UInt16(exactly: numbers[2]) else {
                    printError("whereabouts survey: not a floor: \(line)")
                    continue
                }
                floor = major
            }
            do {
                let progress = try recorder.standAt(floor: floor, x: numbers[0], y: numbers[1])
                writeOut("point \(progress.places): (\(fixed(numbers[0])), \(fixed(numbers[1]))) on floor \(floor)\n")
            } catch let error as SurveyError {
                printError("whereabouts survey: \(error)")
            }
        }
        while recorder.progress().place?.isActive == true { try await Task.sleep(for: .milliseconds(50)) }
    }

    /// Writes the report's files (and the calibrated map unless refused); prints what `calibrate` prints.
    static func write(_ report: SurveyReport, into directory: String, force: Bool) throws -> ExitStatus {
        try FileAccess.write(Array(report.html.utf8), to: directory + "/survey-report.html")
        try FileAccess.write(Array(JSONWriter().string(report.json).utf8), to: directory + "/survey-report.json")
        if let failure = report.failure {
            printError("whereabouts survey: \(failure)")
            return .usage
        }
        if !report.statistics.isEmpty { printError(report.statistics) }
        print(report.text)
        printError("wrote \(directory)/survey-report.html and survey-report.json")
        if let refusal = report.refusal, !force {
            printError("whereabouts survey: not writing the calibrated map: \(refusal) (--force writes it anyway)")
            return .refused
        }
        guard let text = report.mapText else { return .failure }
        try FileAccess.write(Array(text.utf8), to: directory + "/survey-calibrated.json")
        printError("wrote \(directory)/survey-calibrated.json")
        return .success
    }
}

/// Prints a line each time a point's time is up: its readings and the areas that still lack samples.
final class PointReporter: Sendable {
    private let reported = Atomic<Int>(0)

    func report(_ progress: SurveyProgress) {
        guard let place = progress.place, !place.isActive else { return }
        let last = reported.load(ordering: .relaxed)
        guard progress.places > last,
            reported.compareExchange(expected: last, desired: progress.places, ordering: .relaxed).exchanged
        else { return }
        let lacking = progress.lacking.map { "\($0.name) (\($0.samples) of \(progress.minimumAreaSamples))" }
        writeOut(
            "point \(progress.places) done: \(place.readings) readings; \(progress.samples) samples in all; "
                + (lacking.isEmpty ? "every area has enough" : "lacking: " + lacking.joined(separator: ", ")) + "\n")
    }
}
