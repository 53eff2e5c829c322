public import WhereaboutsCalibration
public import WhereaboutsCore
public import WhereaboutsJSON
public import WhereaboutsWire

/// The accuracy report at the end of a survey: `whereabouts calibrate`'s fit and spatial check over the recorded
/// readings and truth (``GuidedCalibrationRun``, the same path), per area the samples and the held-out error before
/// and after, the overall figures, the error to expect over the floor, whether the calibrated map would be refused
/// and why, and the calibrated map's text; as JSON for the page (``json``) and as a standalone HTML file
/// (``html``).
public struct SurveyReport: Sendable {
    /// One area of the spatial check.
    public struct Area: Sendable {
        public var name: String
        public var floor: UInt16
        public var polygon: Polygon
        public var samples: Int
        /// Whether it had enough samples to be held out (else it was always in training, and has no figures).
        public var isChecked: Bool
        /// Held-out positioning error with the map's constants and with the chosen calibration.
        public var before: ErrorSummary?
        public var after: ErrorSummary?
        /// Held-out RSSI residual RMS, dB, with the map's constants and with the chosen calibration.
        public var residualBefore: Double?
        public var residualAfter: Double?
    }

    /// One agent: what it gets.
    public struct Agent: Sendable {
        public var id: String
        public var samples: Int
        public var choice: AgentChoice
        public var rssiOffset: Double
        public var pathLossExponent: Double
        /// Why it keeps its map values (too few samples, too narrow a spread), if it does.
        public var kept: String?
    }

    /// The map's site name.
    public var site: String
    /// Why no calibration could be made (no usable samples, nothing to fit); nil when it was.
    public var failure: String?
    /// The areas, in the spatial check's order.
    public var areas: [Area] = []
    /// Every checked area's errors together, before and after; their samples.
    public var before: ErrorSummary?
    public var after: ErrorSummary?
    public var checkedSamples = 0
    public var residualBefore: Double?
    public var residualAfter: Double?
    /// The error to expect over the floor with the chosen calibration (``SpatialReport/expected``).
    public var expected: ErrorSummary?
    /// The covered share of each surveyed floor.
    public var coverage: [UInt16: Double] = [:]
    /// How often the survey's truth fell within the accuracy the calibrated map publishes, and the scale written
    /// (``GuidedCalibrationRun/claim``).
    public var claim: AccuracyClaim?
    public var agents: [Agent] = []
    /// Why `calibrate` would refuse to write the calibrated map (exit 3 unless `--force`); nil when it would not.
    public var refusal: String?
    /// The calibrated map's text (written even when refused, for `--force`); nil when it could not be made.
    public var mapText: String?
    /// The line about what happened to the readings, as `calibrate` prints it.
    public var statistics = ""
    /// What `calibrate` prints for the same files.
    public var text = ""
    /// The coverage drawing (`calibrate --coverage`): SVG.
    public var coverageSVG = ""

    /// A report that says why there is none.
    public init(site: String, failure: String) {
        self.site = site
        self.failure = failure
    }

    /// The report of a run.
    public init(_ run: GuidedCalibrationRun) {
        let check = run.check
        site = run.calibration.map.site.name
        areas = check.figures.map { figures in
            Area(
                name: figures.area.name, floor: figures.area.floor, polygon: figures.area.polygon,
                samples: figures.area.samples, isChecked: figures.area.isChecked, before: figures.before,
                after: figures.after, residualBefore: figures.residualBefore, residualAfter: figures.residualAfter)
        }
        before = check.before
        after = check.after
        checkedSamples = check.figures.filter(\.area.isChecked).reduce(0) { $0 + $1.area.samples }
        residualBefore = check.residualBefore
        residualAfter = check.residualAfter
        expected = check.expected
        coverage = check.coverage.shares
        claim = run.claim
        agents = run.result.agents.map { agent in
            let choice = check.choices.indices.contains(agent.agentIndex) ? check.choices[agent.agentIndex] : .map
            return Agent(
                id: agent.id, samples: agent.samples, choice: agent.refusal == nil ? choice : .map,
                rssiOffset: agent.after.rssiOffset, pathLossExponent: agent.after.pathLossExponent,
                kept: agent.refusal?.description)
        }
        refusal = run.refusal
        text = run.reportText
        coverageSVG = run.coverageSVG()
        do {
            mapText = try run.calibratedMap().text
        } catch {
            failure = "the calibrated map could not be made: \(error)"
        }
    }

    /// Runs the calibration and the spatial check over a survey and reports; a report with ``failure`` when no
    /// calibration can be made. Takes as long as `calibrate` (four replays of the survey).
    public static func make(
        document: JSONValue, readings: [RecordedReading], truth: [TruthRecord],
        options: GuidedCalibrationRun.Options = GuidedCalibrationRun.Options(), badReadingLines: Int = 0,
        badTruthLines: Int = 0
    ) -> SurveyReport {
        let site = document.object?["site"]?.object?["name"]?.string ?? "the site"
        do {
            let run = try GuidedCalibrationRun(document: document, readings: readings, truth: truth, options: options)
            var report = SurveyReport(run)
            report.statistics = run.statisticsLine(
                truthCount: truth.count, badReadingLines: badReadingLines, badTruthLines: badTruthLines)
            return report
        } catch {
            return SurveyReport(site: site, failure: "cannot calibrate: \(error)")
        }
    }

    /// Whether the calibrated map can be saved as it is: made, and not refused.
    public var isSavable: Bool { failure == nil && refusal == nil && mapText != nil }

    /// Where to survey next: areas with too few samples to check, and areas whose held-out error after calibration
    /// is 2 m or more (grey and red on the coverage drawing).
    public var surveyNext: [Area] {
        areas.filter { !$0.isChecked || ($0.after ?? $0.before).map { $0.median >= 2 } ?? true }
    }

    /// Whether every agent keeps the map's constants (the map would be written as it was, but for its accuracy scale).
    public var keepsMapConstants: Bool { agents.allSatisfy { $0.choice == .map } }
}
