import CommandLineSupport
import WhereaboutsCalibration
import WhereaboutsCore
import WhereaboutsDrawing
import WhereaboutsJSON
import WhereaboutsLocator
import WhereaboutsMapFile
import WhereaboutsSettings
import WhereaboutsWire

/// `whereabouts render`: draws the map, and the last positions if given, as SVG; or a tag's grid posterior at a
/// moment of a readings recording, replayed through the locator's pipeline; or a survey's coverage; or the map's
/// expected accuracy (``AccuracyPlan``).
enum RenderCommand {
    static let interface = CommandInterface(
        program: "whereabouts render",
        synopsis: """
            whereabouts render --map M [--positions P.jsonl] [--scale PX] --out FILE.svg
                   whereabouts render --map M --readings R.jsonl --posterior TAG [--at UNIX] [--truth T.jsonl]
                       [--scale PX] --out FILE.svg
                   whereabouts render --map M --coverage --readings R.jsonl --truth T.jsonl [--scale PX] --out FILE.svg
                   whereabouts render --map M --plan [--scale PX] --out FILE.svg
            """,
        sections: [
            .init(
                Setting.flagsOnly([
                    .value("map", "M", "the floor map"),
                    .value("out", "FILE.svg", "write the drawing here"),
                    .value("positions", "P.jsonl", "draw the last position of each tag"),
                    .value("readings", "R.jsonl", "with --posterior: the readings to replay"),
                    .value("posterior", "TAG", "draw this tag's grid posterior"),
                    .value("at", "UNIX", "with --posterior: the moment drawn", default: "the last reading"),
                    .value(
                        "truth", "T.jsonl", "with --posterior: where the tag really was; with --coverage: the survey's"),
                    .switchFlag(
                        "coverage",
                        "draw a survey's coverage: its positions and each area's held-out error (as calibrate --coverage)"
                    ),
                    .switchFlag(
                        "plan",
                        "draw the accuracy to expect from the map's agents, as a heat map (as map check reports)"),
                    .value("scale", "PX", "pixels per metre", default: "30"),
                ]))
        ],
        notes: """
            --scale PX sets the pixels per metre (default 30). With --posterior, the readings are replayed (as
            `whereabouts replay` does, with the grid filter) up to --at (default: the last reading), and the drawing shows
            that tag's posterior over its floor's cells, its estimate with its accuracy and, with --truth, where it really
            was at that moment. With --coverage, the readings and truth are a survey: the drawing is the one
            `whereabouts calibrate --coverage` writes (the spatial check is run as calibrate runs it; nothing is written
            to the map). With --plan, each floor is shaded by the accuracy its agents should give (the radius holding about
            68 % of fixes, from the radio model and the agents' geometry; docs/map.md, "Expected accuracy").
            """)

    static func run(_ settings: Settings) throws -> ExitStatus {
        let mapPath = try settings.required("map")
        let outPath = try settings.required("out")
        let map = try RecordingFiles.map(mapPath)
        var renderer = MapRenderer()
        if let scale = try settings.number("scale", in: 1...1000) { renderer.scale = scale }
        let svg: String
        if try settings.switchValue("plan") {
            svg = renderer.planSVG(map: map, plans: AccuracyPlan.floors(of: map))
        } else if try settings.switchValue("coverage") {
            let readingsPath = try settings.required("readings")
            let truthPath = try settings.required("truth")
            svg = try coverageSVG(
                mapPath: mapPath, readingsPath: readingsPath, truthPath: truthPath, scale: renderer.scale)
        } else if let tagText = settings.value("posterior") {
            guard let tag = TagIdentity(tagText) else {
                throw UsageError(
                    "--posterior must be a tag id such as ibeacon-<uuid>-<major>-<minor>, not \"\(tagText)\"")
            }
            let readingsPath = try settings.required("readings")
            let at = try settings.number("at")
            let truthPath = settings.value("truth")
            svg = try posteriorSVG(
                renderer, map: map, tag: tag, readingsPath: readingsPath, at: at, truthPath: truthPath)
        } else {
            let positions =
                try settings.value("positions").map { try RecordingFiles.records($0, as: PositionRecord.self).records }
                ?? []
            svg = renderer.svg(map: map, positions: positions)
        }
        try FileAccess.write(Array(svg.utf8), to: outPath)
        return .success
    }

    /// Runs the spatial check of a survey as `calibrate` does and draws its coverage.
    static func coverageSVG(mapPath: String, readingsPath: String, truthPath: String, scale: Double) throws -> String {
        let readings = try RecordingFiles.records(readingsPath, as: RecordedReading.self).records
        let truth = try RecordingFiles.records(truthPath, as: TruthRecord.self).records
        let mapBytes = try FileAccess.read(mapPath)
        let calibration: GuidedCalibration
        do {
            let document: JSONValue
            do { document = try MapDocument.parse(mapBytes) } catch {
                throw CalibrationError.malformedMap(error)
            }
            calibration = try GuidedCalibration(document: document, readings: readings, truth: truth)
        } catch {
            throw UsageError("cannot check the survey on \(mapPath): \(error)")
        }
        let check = calibration.spatialCheck { map, readings in
            LocatorReplay.run(map: map, readings: readings).output.positions
        }
        return CalibrationReport.coverageSVG(calibration, check: check, scale: scale)
    }

    /// Replays the readings up to `at` with the grid filter and draws the tag's posterior then.
    static func posteriorSVG(
        _ renderer: MapRenderer, map: FloorMap, tag: TagIdentity, readingsPath: String, at: Double?, truthPath: String?
    ) throws -> String {
        let readings = try RecordingFiles.records(readingsPath, as: RecordedReading.self).records
        let end = at ?? readings.map(\.time).filter(\.isFinite).max() ?? 0
        var configuration = LocatorReplay.defaultConfiguration
        // The posterior is the grid filter's: trilateration has none to draw.
        configuration.engine.positioning = .grid
        let (output, replay) = LocatorReplay.run(
            map: map, readings: readings.filter { $0.time <= end }, configuration: configuration)
        guard let posterior = replay.posterior(of: tag) else {
            throw UsageError("\(tag) has no posterior at \(fixed(end, 3)): it was not heard in the readings up to then")
        }
        let estimate = output.positions.last { $0.tag == tag }
        var truth: [TruthRecord] = []
        if let truthPath {
            // The true position nearest in time to the estimate's.
            let records = try RecordingFiles.records(truthPath, as: TruthRecord.self).records.filter { $0.tag == tag }
            let time = estimate?.time ?? end
            if let nearest = records.min(by: { abs($0.time - time) < abs($1.time - time) }) { truth = [nearest] }
        }
        return renderer.svg(map: map, positions: estimate.map { [$0] } ?? [], posterior: posterior, truth: truth)
    }
}
