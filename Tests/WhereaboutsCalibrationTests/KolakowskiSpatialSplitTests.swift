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
        let calibration = try GuidedCalibration(document: mapDocument, readings: readings, truth: truth.filter(keeps))
        let result = try calibration.calibrate()
        let report = calibration.spatialCheck(replay: replayPositions)
        let radioMap = try report.radioMap ?? calibration.radioMap(result)
        let chosen = try calibration.chosenMap(result, radioMap: radioMap, choices: report.choices)
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
                + "expected \(report.expected.map { "\(metres($0.median)) / \(metres($0.p90))" } ?? "-"), "
                + "worse: \(report.worse ?? "no"); robot path \(metres(outcome.robot.median)) / "
                + "\(metres(outcome.robot.p90)) (south \(metres(outcome.robotHalves.south)), "
                + "north \(metres(outcome.robotHalves.north)))")
    }

    /// The default map on the robot path (1.154 / 2.423 m at cd52844).
    static func defaultError() throws -> AccuracyReport.Distribution {
        try pipelineError(map: try loadMap(try document(try shippedMapText("kolakowski-flat.json"))))
    }

    /// The issue's goal for one half: the robot path within 5 % of the default map at the median and p90, and the
    /// spatial report's median within 25 % of the robot path's; and no fitted value railing to a bound.
    static func expectGoal(_ outcome: Outcome, against baseline: AccuracyReport.Distribution) throws {
        #expect(outcome.robot.median <= baseline.median * 1.05)
        #expect(outcome.robot.p90 <= baseline.p90 * 1.05)
        let reported = try #require(outcome.report.expected).median
        #expect(abs(reported - outcome.robot.median) <= 0.25 * outcome.robot.median)
        #expect(outcome.report.worse == nil)
        let settings = CalibrationSettings()
        for agent in outcome.result.agents where agent.isFitted {
            #expect(abs(agent.after.rssiOffset) < settings.offsetBounds.upperBound - 5)
            #expect(agent.after.pathLossExponent > settings.exponentBounds.lowerBound + 0.1)
            #expect(agent.after.pathLossExponent < settings.exponentBounds.upperBound - 1)
        }
        for tag in outcome.result.transmitters where tag.isFitted {
            #expect(abs(tag.after - tag.before) < 15)
            #expect(try #require(tag.deviation) > 0)
        }
    }

    @Test("calibrated on the south half, then the north half: the robot path is never more than 5 % worse")
    func halves() throws {
        let baseline = try Self.defaultError()
        print("spatial split: default map on the robot path \(metres(baseline.median)) / \(metres(baseline.p90))")
        let south = try Self.calibrate { $0.y < 3.415 }
        Self.describe("south", south)
        try Self.expectGoal(south, against: baseline)
        let north = try Self.calibrate { $0.y >= 3.415 }
        Self.describe("north", north)
        try Self.expectGoal(north, against: baseline)
    }

    @Test("calibrated on the west half, then the east half (printed, and held to the same goal)")
    func westAndEast() throws {
        let baseline = try Self.defaultError()
        let west = try Self.calibrate { $0.x < 4.535 }
        Self.describe("west", west)
        let east = try Self.calibrate { $0.x >= 4.535 }
        Self.describe("east", east)
        #expect(west.robot.median <= baseline.median * 1.05 && west.robot.p90 <= baseline.p90 * 1.05)
        #expect(east.robot.median <= baseline.median * 1.05 && east.robot.p90 <= baseline.p90 * 1.05)
    }

    @Test("the full walk: the spatial check keeps the radio map, and the robot path does not get worse")
    func fullWalk() throws {
        let full = try Self.calibrate { _ in true }
        Self.describe("full", full)
        #expect(full.report.choices.allSatisfy { $0 == .radioMap })
        // Before the spatial check the same walk gave 0.843 / 1.629 m at the 0.5 m cells the zones chose; at the
        // 0.25 m cells the free space chooses (issue 45), the map calibrated as before gives 0.913 / 1.826 m
        // (KolakowskiCalibrationTests), and the spatial check must not do worse than that.
        #expect(full.robot.median <= 0.92)
        #expect(full.robot.p90 <= 1.84)
        #expect(full.report.worse == nil)
        let areas = full.report.figures.filter(\.area.isChecked)
        #expect(areas.count >= 4 && areas.count <= 8)
    }
}
