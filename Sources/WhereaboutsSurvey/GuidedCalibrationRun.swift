public import WhereaboutsCalibration
import WhereaboutsCore
public import WhereaboutsJSON
import WhereaboutsLocator
import WhereaboutsMapFile
public import WhereaboutsWire

/// What `whereabouts calibrate` does with a map and a survey, for the command and the survey's report alike (one
/// path): the guided fit on every sample, the spatial check (each area held out, the locator's pipeline replayed as
/// `whereabouts replay` runs it), the per-agent choice, and the calibrated map's text.
public struct GuidedCalibrationRun: Sendable {
    /// `calibrate`'s options that change what is fitted or written.
    public struct Options: Sendable, Hashable {
        /// Seconds per sample and (agent, tag) (`--window`).
        public var window: Double = 1
        /// Whether tags' measured powers are written (not `--no-tag-power`).
        public var tagPowers = true
        /// Whether radio maps are written (not `--no-radio-map`).
        public var radioMap = true

        public init() {}
    }

    /// The calibrated map as it would be written.
    public struct CalibratedMap: Sendable {
        /// The map file's text (pretty-printed JSON; it loads as a map).
        public var text: String
        /// How many agents got a radio map.
        public var radioMapAgents: Int
        /// Agents whose choice was a radio map but that got none (too little of their floor surveyed).
        public var withoutRadioMap: [String]
    }

    /// The options.
    public let options: Options
    /// The survey, sampled.
    public let calibration: GuidedCalibration
    /// The fit on every sample.
    public let result: CalibrationResult
    /// The spatial check, with the choices `options` allow.
    public let check: SpatialReport
    /// How honest the published accuracy is on the survey with the map as it will be written, and the scale that
    /// makes it the 68 % radius (nil when the map cannot be built).
    public let claim: AccuracyClaim?

    /// Fits and checks.
    ///
    /// - Throws: ``CalibrationError`` as ``GuidedCalibration/init(document:readings:truth:settings:window:maximumTruthGap:)``
    ///   and ``GuidedCalibration/calibrate()`` throw it (no usable samples, nothing to fit, an invalid map).
    public init(
        document: JSONValue, readings: [RecordedReading], truth: [TruthRecord], options: Options = Options()
    ) throws(CalibrationError) {
        self.options = options
        calibration = try GuidedCalibration(
            document: document, readings: readings, truth: truth, window: options.window)
        result = try calibration.calibrate()
        let surveyed = calibration.tags.map(\.identity)
        let replay = Self.replay(tracking: surveyed)
        var check = calibration.spatialCheck(replay: replay)
        if !options.radioMap { check.choices = check.choices.map { $0 == .radioMap ? .fitted : $0 } }
        self.check = check
        // The whole survey replayed, in one go as `whereabouts replay` runs it, with what will be written.
        if let chosen = try? calibration.chosenMap(
            result, radioMap: (try? Self.radioMap(calibration, result, check)) ?? [:], choices: check.choices,
            tagPowers: options.tagPowers)
        {
            claim = calibration.accuracyClaim(of: chosen, positions: replay(chosen, calibration.readings))
        } else {
            claim = nil
        }
    }

    /// The radio map written: learnt once by the check, on the same fit (`calibrate()` is `fit()` on every sample);
    /// none when no agent chose one.
    static func radioMap(
        _ calibration: GuidedCalibration, _ result: CalibrationResult, _ check: SpatialReport
    ) throws -> [String: RadioSurface] {
        // It is learnt against the trend with every fitted value, tag powers included: without them the residuals
        // would carry the tags' power error.
        check.choices.contains(.radioMap) ? try check.radioMap ?? calibration.radioMap(result) : [:]
    }

    /// The locator's pipeline replayed as `whereabouts replay` runs it, tracking the survey's tags.
    static func replay(tracking tags: [TagIdentity]) -> @Sendable (FloorMap, [RecordedReading]) -> [PositionRecord] {
        { map, readings in LocatorReplay.run(map: tracking(tags, on: map), readings: readings).output.positions }
    }

    /// The map with the surveyed tags it does not name added to its known tags, without a power: the replays of
    /// the spatial check must track the survey's tag (a phone's iBeacon under another UUID, say), or they score
    /// nothing. What is written is not changed (`--no-tag-power` leaves the map's tags alone).
    static func tracking(_ tags: [TagIdentity], on map: FloorMap) -> FloorMap {
        let missing = tags.filter { map.knownTag($0) == nil }
        guard !missing.isEmpty else { return map }
        var tracking = map
        tracking.knownTags += missing.map { KnownTag(identity: $0, name: $0.description, measuredPower: nil) }
        return tracking
    }

    /// Fits and checks a map given as the file's bytes.
    public init(
        mapBytes: [UInt8], readings: [RecordedReading], truth: [TruthRecord], options: Options = Options()
    ) throws(CalibrationError) {
        let document: JSONValue
        do { document = try MapDocument.parse(mapBytes) } catch { throw .malformedMap(error) }
        try self.init(document: document, readings: readings, truth: truth, options: options)
    }

    /// Why the spatial check refuses the calibrated map (`calibrate` exits 3 unless `--force`); nil when it does not.
    public var refusal: String? { check.worse }

    /// The report `calibrate` prints: the spatial check per area, the agents' table, the tags, the warnings.
    public var reportText: String { CalibrationReportText.text(result, check: check, claim: claim) }

    /// The coverage drawing (`calibrate --coverage`).
    public func coverageSVG(scale: Double = 60) -> String {
        CalibrationReportText.coverageSVG(calibration, check: check, scale: scale)
    }

    /// The line `calibrate` prints about what happened to the readings.
    public func statisticsLine(truthCount: Int, badReadingLines: Int, badTruthLines: Int) -> String {
        let statistics = calibration.statistics
        return "\(statistics.readings) readings (\(badReadingLines) bad lines), \(truthCount) truth samples "
            + "(\(badTruthLines) bad lines): \(statistics.used) used in \(calibration.samples.count) samples; "
            + "\(statistics.withoutTruth) without truth, \(statistics.otherFloor) from another floor, "
            + "\(statistics.unknownAgents) from agents not in the map, \(statistics.invalid) invalid"
    }

    /// The calibrated map: the choices written into the map document, edited, never regenerated.
    ///
    /// - Throws: ``CalibrationError`` when the radio map cannot be learnt, `MapProblems` when the edited map would
    ///   not load (a bug if it happens).
    public func calibratedMap() throws -> CalibratedMap {
        let radioMap = try Self.radioMap(calibration, result, check)
        let agents = calibration.map.agents
        let skipped = agents.indices.filter { check.choices[$0] == .radioMap && radioMap[agents[$0].id] == nil }
            .map { agents[$0].id }
        let text = try MapDocument.text(
            calibration.chosenDocument(
                result, radioMap: radioMap, choices: check.choices, tagPowers: options.tagPowers,
                accuracyScale: claim?.scale))
        return CalibratedMap(text: text, radioMapAgents: radioMap.count, withoutRadioMap: skipped)
    }
}
