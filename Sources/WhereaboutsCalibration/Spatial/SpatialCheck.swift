public import WhereaboutsCore
public import WhereaboutsJSON
import WhereaboutsMapFile
public import WhereaboutsWire

/// What an agent gets written: the map's constants, the fitted ones, or the fitted ones with a radio map.
public enum AgentChoice: String, Sendable, Hashable, CaseIterable {
    case map = "map constants"
    case fitted = "fitted"
    case radioMap = "fitted + radio map"
}

/// The spatial check's outcome: per area held out, the errors with the map's constants and with the chosen
/// calibration; per agent, the held-out residuals of each choice and the one taken.
public struct SpatialReport: Sendable {
    /// One area's figures (nil where it was not checked, or nothing was scored).
    public struct AreaFigures: Sendable {
        public var area: SurveyArea
        /// Positioning error of the pipeline replayed over the area's readings with the map's constants.
        public var before: ErrorSummary?
        /// … with the chosen calibration fitted on the other areas.
        public var after: ErrorSummary?
        /// … with the chosen calibration fitted on every area, this one included (where the survey went).
        public var surveyed: ErrorSummary?
        /// RMS of the area's RSSI residuals with the map's constants and with the chosen calibration, dB.
        public var residualBefore: Double?
        public var residualAfter: Double?
    }

    /// The areas.
    public var areas: SurveyAreas
    /// Per area, in the order of ``SurveyAreas/areas``.
    public var figures: [AreaFigures]
    /// Every checked area's errors together, before and after.
    public var before: ErrorSummary?
    public var after: ErrorSummary?
    /// The error to expect over the floor with the chosen calibration: the surveyed share of the floor (the
    /// coverage) at the error of the calibration fitted on every area (``AreaFigures/surveyed``), the rest at the
    /// held-out error (``after``), as one weighted distribution. With the map's constants it is ``before``.
    public var expected: ErrorSummary?
    /// Every checked area's RSSI residuals together (RMS, dB), before and after.
    public var residualBefore: Double?
    public var residualAfter: Double?
    /// Per agent, in map order: what it gets.
    public var choices: [AgentChoice]
    /// Per agent, in map order: the held-out RSSI residual RMS (dB) of each choice, in ``AgentChoice`` order.
    public var agentResiduals: [[Double?]]
    /// How much of each floor the whole survey covered.
    public var coverage: SurveyCoverage
    /// The radio map learnt on every sample, with the constants fitted on every sample (``GuidedCalibration/fit()``),
    /// when the check replayed the survey (it scores what will be written): what `calibrate` writes, learnt once.
    public var radioMap: [String: RadioSurface]?
    /// Why the chosen calibration is worse than the map it started from (nil: it is not).
    public var worse: String?

    /// Why errors `after` are worse than `before`: the median or the p90 higher by more than `tolerance` (a share);
    /// nil when they are not (or either is missing).
    public static func worse(before: ErrorSummary?, after: ErrorSummary?, tolerance: Double) -> String? {
        guard let before, let after else { return nil }
        if after.median > before.median * (1 + tolerance) {
            return "held out by area, the median error rises from \(before.median.rounded(toDecimals: 2)) to "
                + "\(after.median.rounded(toDecimals: 2)) m"
        }
        if after.p90 > before.p90 * (1 + tolerance) {
            return "held out by area, the p90 error rises from \(before.p90.rounded(toDecimals: 2)) to "
                + "\(after.p90.rounded(toDecimals: 2)) m"
        }
        return nil
    }
}

extension GuidedCalibration {
    /// The fewest samples an area needs to be held out on its own: the fit's own minimum, and 3 % of the survey.
    var minimumAreaSamples: Int { max(settings.minimumSamples, samples.count * 3 / 100) }

    /// The survey's areas (``SurveyAreas``).
    public func surveyAreas() -> SurveyAreas {
        SurveyAreas(
            map: map,
            positions: samples.compactMap { sample in
                sample.position.map { (map.agents[sample.receiver].floor, $0) }
            },
            minimumSamples: minimumAreaSamples)
    }

    /// Leave-one-area-out validation and the per-agent choice.
    ///
    /// An agent on a floor the survey covered less than ``CalibrationSettings/minimumChoiceCoverage`` of keeps the
    /// map's constants (the check cannot see the places nobody surveyed).
    ///
    /// Each checked area is held out in turn: the constants (with the coverage of the other areas setting the
    /// priors) and a radio map are fitted on the other areas' samples, and the area's samples are scored with the
    /// map's constants, the fitted ones and the fitted ones plus the radio map. Each agent takes the choice with
    /// the lowest held-out RSSI residual over all areas: a fitted choice must beat the map's constants by `margin`
    /// dB; then the radio map is taken unless it is worse than the fitted constants alone by more than half of it. Then, with `replay`, the pipeline is
    /// replayed over each area's readings twice (the map as it is; the choices applied to the fit without the area)
    /// and the positions are scored against the truth. The chosen calibration is **worse** when its median or p90
    /// error over all areas exceeds the map's by more than `tolerance` (a share).
    public func spatialCheck(
        margin: Double = 0.25,
        tolerance: Double = 0.05,
        replay: ((FloorMap, [RecordedReading]) -> [PositionRecord])? = nil
    ) -> SpatialReport {
        let areas = surveyAreas()
        let sampleAreas = samples.map { sample in
            sample.position.flatMap { areas.index(floor: map.agents[sample.receiver].floor, point: $0) }
        }
        var folds: [Int: Fold] = [:]
        var held = [[[Double]]](
            repeating: [[Double]](repeating: [], count: AgentChoice.allCases.count), count: map.agents.count)
        for (areaIndex, area) in areas.areas.enumerated() where area.isChecked {
            let training = samples.indices.filter { sampleAreas[$0] != areaIndex }
            let result = fit(training: training.map { samples[$0] })
            let trainingSet = Set(training)
            let radioMap = (try? self.radioMap(result, trainingOn: { trainingSet.contains($0) })) ?? [:]
            let scored = heldOutResiduals(result, radioMap: radioMap) { sampleAreas[$0] == areaIndex }
            folds[areaIndex] = Fold(result: result, radioMap: radioMap, residuals: scored)
            for agent in held.indices {
                for choice in held[agent].indices { held[agent][choice] += scored[agent][choice] }
            }
        }
        let agentResiduals = held.map { $0.map { rootMeanSquare($0) } }
        let coverage = coverage(of: samples)
        let choices = agentResiduals.enumerated().map { agent, residuals in
            coverage.share(ofFloor: map.agents[agent].floor) < settings.minimumChoiceCoverage
                ? .map : Self.choose(residuals, margin: margin)
        }
        var report = SpatialReport(
            areas: areas, figures: areas.areas.map { SpatialReport.AreaFigures(area: $0) }, choices: choices,
            agentResiduals: agentResiduals, coverage: coverage)
        scoreAreas(&report, folds: folds, replay: replay)
        report.worse = SpatialReport.worse(before: report.before, after: report.after, tolerance: tolerance)
        return report
    }

    /// The choice for one agent from its held-out residuals (map, fitted, fitted + radio map).
    static func choose(_ residuals: [Double?], margin: Double) -> AgentChoice {
        guard let map = residuals[0] else { return .map }
        let fitted = residuals[1] ?? .infinity
        let mapped = residuals[2] ?? .infinity
        guard min(fitted, mapped) < map - margin else { return .map }
        // A radio map goes back to the trend where it knows nothing, so held out it ties with the fitted constants
        // at worst unless it overfits; and the tracker does best with every agent on the same footing (an agent
        // without one has a different variance model). So it is kept unless it is clearly worse.
        return mapped <= fitted + margin / 2 ? .radioMap : .fitted
    }

    /// One area held out: what was fitted without it, and its samples' residuals per agent and choice.
    private struct Fold {
        var result: CalibrationResult
        var radioMap: [String: RadioSurface]
        var residuals: [[[Double]]]
    }

    /// Per agent and choice, the residuals of the samples `heldOut` accepts.
    private func heldOutResiduals(
        _ result: CalibrationResult, radioMap: [String: RadioSurface], heldOut: (Int) -> Bool
    ) -> [[[Double]]] {
        var out = [[[Double]]](
            repeating: [[Double]](repeating: [], count: AgentChoice.allCases.count), count: map.agents.count)
        for (agent, values) in residuals(on: map, powers: [:], keepingSample: heldOut) {
            out[agent][0] = values.map(\.residual)
        }
        guard let calibrated = try? calibratedMap(result) else { return out }
        for (agent, values) in residuals(on: calibrated, powers: result.fittedPowers, keepingSample: heldOut) {
            out[agent][1] = values.map(\.residual)
            let surface = radioMap[calibrated.agents[agent].id]
            out[agent][2] = values.map { $0.residual - (surface?.residual(at: $0.point).mean ?? 0) }
        }
        return out
    }

    /// Fills the report's per-area and overall figures: residuals of the choices, and the replays.
    private func scoreAreas(
        _ report: inout SpatialReport, folds: [Int: Fold],
        replay: ((FloorMap, [RecordedReading]) -> [PositionRecord])?
    ) {
        let readingAreas = readings.map { reading in
            truth.position(of: reading.tag, at: reading.time).flatMap {
                report.areas.index(floor: $0.floor, point: $0.point)
            }
        }
        var allBefore: [Double] = []
        var allAfter: [Double] = []
        var allSurveyed: [Double] = []
        // The chosen calibration fitted on every sample: what is written.
        var whole: FloorMap?
        if replay != nil {
            let everything = fit(training: samples)
            let learnt = (try? radioMap(everything)) ?? [:]
            report.radioMap = learnt
            whole = try? chosenMap(everything, radioMap: learnt, choices: report.choices)
        }
        var residualsBefore: [Double] = []
        var residualsAfter: [Double] = []
        for (areaIndex, fold) in folds.sorted(by: { $0.key < $1.key }) {
            let scored = fold.residuals
            var before: [Double] = []
            var after: [Double] = []
            for (agent, choice) in report.choices.enumerated() {
                let index = AgentChoice.allCases.firstIndex(of: choice) ?? 0
                before += scored[agent][0]
                after += scored[agent][index]
            }
            report.figures[areaIndex].residualBefore = rootMeanSquare(before)
            report.figures[areaIndex].residualAfter = rootMeanSquare(after)
            residualsBefore += before
            residualsAfter += after
            guard let replay else { continue }
            let areaReadings = readings.indices.filter { readingAreas[$0] == areaIndex }.map { readings[$0] }
            guard !areaReadings.isEmpty,
                let chosen = try? chosenMap(fold.result, radioMap: fold.radioMap, choices: report.choices)
            else { continue }
            let errorsBefore = positionErrors(replay(map, areaReadings))
            let errorsAfter = positionErrors(replay(chosen, areaReadings))
            report.figures[areaIndex].before = ErrorSummary(errorsBefore)
            report.figures[areaIndex].after = ErrorSummary(errorsAfter)
            allBefore += errorsBefore
            allAfter += errorsAfter
            if let whole {
                let errors = positionErrors(replay(whole, areaReadings))
                report.figures[areaIndex].surveyed = ErrorSummary(errors)
                allSurveyed += errors
            }
        }
        report.before = ErrorSummary(allBefore)
        report.after = ErrorSummary(allAfter)
        let shares = report.coverage.shares.values
        let share = shares.isEmpty ? 0 : shares.reduce(0, +) / Double(shares.count)
        report.expected =
            report.choices.contains(where: { $0 != .map })
            ? ErrorSummary(blending: allSurveyed, share: share, with: allAfter) : report.before
        report.residualBefore = rootMeanSquare(residualsBefore)
        report.residualAfter = rootMeanSquare(residualsAfter)
    }

    // MARK: - Writing the choices

    /// What the choices write: agents' constants, tags' powers (with their deviations) and radio surfaces.
    ///
    /// An agent that keeps the map's constants keeps its predictions for the surveyed tags: when their power moves
    /// by ΔP (the samples' mean change), its offset moves by ΔP too (the common shift, docs/calibration.md). When
    /// every agent keeps the map's constants, nothing is written.
    public func chosenValues(
        _ result: CalibrationResult, radioMap: [String: RadioSurface], choices: [AgentChoice], tagPowers: Bool = true
    ) -> (
        agents: [String: AgentConstants], powers: [TagIdentity: Double], deviations: [TagIdentity: Double],
        radioMap: [String: RadioSurface]
    ) {
        guard choices.contains(where: { $0 != .map }) else { return ([:], [:], [:], [:]) }
        let fittedTags = result.transmitters.filter(\.isFitted)
        let weight = fittedTags.reduce(0) { $0 + $1.samples }
        let shift =
            tagPowers && weight > 0
            ? fittedTags.reduce(0) { $0 + Double($1.samples) * ($1.after - $1.before) } / Double(weight) : 0
        var agents: [String: AgentConstants] = [:]
        var surfaces: [String: RadioSurface] = [:]
        for (index, agent) in result.agents.enumerated() {
            let choice = choices.indices.contains(index) ? choices[index] : .map
            if choice != .map, agent.isFitted {
                agents[agent.id] = agent.after
                if choice == .radioMap, let surface = radioMap[agent.id] { surfaces[agent.id] = surface }
            } else if abs(shift) >= 0.005 {
                agents[agent.id] = AgentConstants(
                    rssiOffset: agent.before.rssiOffset + shift, pathLossExponent: agent.before.pathLossExponent)
            }
        }
        let powers = tagPowers ? result.fittedPowers : [:]
        var deviations: [TagIdentity: Double] = [:]
        for tag in fittedTags where powers[tag.identity] != nil {
            deviations[tag.identity] = min(max(tag.deviation ?? 1, 1), 30)
        }
        return (agents, powers, deviations, surfaces)
    }

    /// The map document with the choices written in (``chosenValues(_:radioMap:choices:tagPowers:)``), and the
    /// accuracy scale when one is given (``AccuracyClaim/scale``).
    public func chosenDocument(
        _ result: CalibrationResult, radioMap: [String: RadioSurface], choices: [AgentChoice], tagPowers: Bool = true,
        accuracyScale: Double? = nil
    ) -> JSONValue {
        let values = chosenValues(result, radioMap: radioMap, choices: choices, tagPowers: tagPowers)
        return MapDocument.apply(
            agents: values.agents, powers: values.powers, powerDeviations: values.deviations,
            radioMaps: values.radioMap, accuracyScale: accuracyScale, to: document)
    }

    /// The map with the choices applied.
    public func chosenMap(
        _ result: CalibrationResult, radioMap: [String: RadioSurface], choices: [AgentChoice], tagPowers: Bool = true,
        accuracyScale: Double? = nil
    ) throws(CalibrationError) -> FloorMap {
        let edited = chosenDocument(
            result, radioMap: radioMap, choices: choices, tagPowers: tagPowers, accuracyScale: accuracyScale)
        switch FloorMap.load(edited) {
        case .success(let loaded): return loaded
        case .failure(let problems): throw .editedMapInvalid(problems)
        }
    }
}
