import Foundation
import TestFixtures
import Testing
import WhereaboutsCalibration
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsLocator
import WhereaboutsSimulation
import WhereaboutsWire

/// Issue 45's "Kolakowski spatial split": calibrate on the calibration samples of one half of the flat only, test
/// on the whole robot path.
@Suite("Calibration on part of the Kolakowski flat", .ownThread)
struct KolakowskiSpatialSplitTests {
    struct Outcome {
        var robot: AccuracyReport.Distribution
        /// The robot path's median error where its truth is south, and north, of y = 3.415 m.
        var robotHalves: (south: Double, north: Double)
        var report: SpatialReport
        var result: CalibrationResult
    }

    /// Calibrates on the samples whose truth `keeps`, as `whereabouts calibrate` does, and replays the robot path
    /// on what it would write.
    static func calibrate(keeping keeps: (TruthRecord) -> Bool) throws -> Outcome {
        let mapDocument = try document(try shippedMapText("kolakowski-flat.json"))
        let readings = try cleanRecords(
            try fixtureText("kolakowski/calibration-readings-1s.jsonl"), as: RecordedReading.self)
        let truth = try cleanRecords(try fixtureText("kolakowski/calibration-truth.jsonl"), as: TruthRecord.self)
        var settings = CalibrationSettings()
        let environment = ProcessInfo.processInfo.environment
        if let value = environment["COVEXP"].flatMap(Double.init) { settings.coverageExponent = value }
        if let value = environment["COVFULL"].flatMap(Double.init) { settings.fullCoverage = value }
        if let value = environment["PLACE"].flatMap(Int.init) { settings.samplesPerPlace = value }
        let calibration = try GuidedCalibration(
            document: mapDocument, readings: readings, truth: truth.filter(keeps), settings: settings)
        let result = try calibration.calibrate()
        var radioMap = try calibration.radioMap(result)
        if let mode = ProcessInfo.processInfo.environment["UNIFORM"] {
            for (id, var surface) in radioMap {
                let typical = mode == "min" ? (surface.deviation.min() ?? 1) : surface.priorDeviation
                surface.deviation = surface.deviation.map { _ in typical }
                radioMap[id] = surface
            }
        }
        let report = calibration.spatialCheck(replay: replayPositions)
        var choices = report.choices
        if let forced = ProcessInfo.processInfo.environment["FORCE"].flatMap(AgentChoice.init(rawValue:)) {
            choices = choices.map { _ in forced }
        }
        let chosen = try calibration.chosenMap(result, radioMap: radioMap, choices: choices)
        let robot = try pipelineError(map: chosen)
        return Outcome(robot: robot, robotHalves: try robotHalves(map: chosen), report: report, result: result)
    }

    /// The default pipeline's error on the robot path (`whereabouts replay`, then `evaluate`).
    static func pipelineError(map: FloorMap) throws -> AccuracyReport.Distribution {
        let robotReadings = try cleanRecords(
            try fixtureText("kolakowski/robot-readings.jsonl"), as: RecordedReading.self)
        let robotTruth = try cleanRecords(try fixtureText("kolakowski/robot-truth.jsonl"), as: TruthRecord.self)
        let positions = replayPositions(map, robotReadings)
        return try #require(AccuracyReport(positions: positions, truth: robotTruth, map: map).error)
    }

    /// The robot path's median error on each half of the flat.
    static func robotHalves(map: FloorMap) throws -> (south: Double, north: Double) {
        let robotReadings = try cleanRecords(
            try fixtureText("kolakowski/robot-readings.jsonl"), as: RecordedReading.self)
        let track = TruthTrack(
            try cleanRecords(try fixtureText("kolakowski/robot-truth.jsonl"), as: TruthRecord.self))
        var south: [Double] = []
        var north: [Double] = []
        for position in replayPositions(map, robotReadings) {
            guard let truth = track.position(of: position.tag, at: position.time) else { continue }
            let error = Point(x: position.x, y: position.y).distance(to: truth.point)
            if truth.point.y < 3.415 { south.append(error) } else { north.append(error) }
        }
        return (south.sorted()[south.count / 2], north.sorted()[north.count / 2])
    }

    static func describe(_ name: String, _ outcome: Outcome) {
        let report = outcome.report
        let fitted = outcome.result.agents.map {
            "\($0.id) \(($0.after.rssiOffset).rounded(toDecimals: 2)) dB n \($0.after.pathLossExponent.rounded(toDecimals: 2))"
        }
        let tags = outcome.result.transmitters.map {
            "\($0.before) -> \($0.after.rounded(toDecimals: 1)) ± \(($0.deviation ?? -1).rounded(toDecimals: 2))"
        }
        print("spatial split \(name): coverage \(report.coverage.shares), scales \(outcome.result.agentPriorScales)")
        print("spatial split \(name): fitted \(fitted.joined(separator: ", ")); tag \(tags)")
        print("spatial split \(name): choices \(report.choices.map(\.rawValue)); residuals \(report.agentResiduals)")
        for figures in report.figures {
            print(
                "spatial split \(name) area \(figures.area.name) (\(figures.area.samples) samples): "
                    + "\(figures.before.map { "\(metres($0.median)) / \(metres($0.p90))" } ?? "-") -> "
                    + "\(figures.after.map { "\(metres($0.median)) / \(metres($0.p90))" } ?? "-")")
        }
        print(
            "spatial split \(name): report \(report.before.map { metres($0.median) } ?? "-") -> "
                + "\(report.after.map { "\(metres($0.median)) / \(metres($0.p90))" } ?? "-"), "
                + "worse: \(report.worse ?? "no"); robot path \(metres(outcome.robot.median)) / "
                + "\(metres(outcome.robot.p90)) (south \(metres(outcome.robotHalves.south)), "
                + "north \(metres(outcome.robotHalves.north)))")
    }

    @Test("calibrated on one half, the robot path is never more than 5 % worse than with the default map")
    func halves() throws {
        let south = try Self.calibrate { $0.y < 3.415 }
        Self.describe("south", south)
        if ProcessInfo.processInfo.environment["SOUTHONLY"] != nil { return }
        let north = try Self.calibrate { $0.y >= 3.415 }
        Self.describe("north", north)
        let full = try Self.calibrate { _ in true }
        Self.describe("full", full)
    }
}
