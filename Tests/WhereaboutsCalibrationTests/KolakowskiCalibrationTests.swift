import TestFixtures
import Testing
import WhereaboutsCalibration
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsSimulation
import WhereaboutsWire

@Suite("Guided calibration on the Kolakowski flat", .ownThread)
struct KolakowskiCalibrationTests {
    @Test("calibrating on the calibration runs improves the robot test path")
    func robotPath() throws {
        let mapDocument = try document(try shippedMapText("kolakowski-flat.json"))
        let readings = try cleanRecords(
            try fixtureText("kolakowski/calibration-readings-1s.jsonl"), as: RecordedReading.self)
        let truth = try cleanRecords(try fixtureText("kolakowski/calibration-truth.jsonl"), as: TruthRecord.self)
        let calibration = try GuidedCalibration(document: mapDocument, readings: readings, truth: truth)
        let result = try calibration.calibrate()
        for agent in result.agents {
            print(
                "kolakowski \(agent.id): \(agent.samples) samples, offset \(agent.after.rssiOffset), "
                    + "exponent \(agent.after.pathLossExponent), residual \(agent.residualBefore ?? -1) -> "
                    + "\(agent.residualAfter ?? -1) dB")
        }
        for tag in result.transmitters { print("kolakowski tag \(tag.identity): power \(tag.before) -> \(tag.after)") }
        #expect(result.agents.allSatisfy { $0.isFitted })

        let heldOut = calibration.crossValidate(folds: 5, replay: replayPositions)
        print("kolakowski held out: \(heldOut)")

        let robotReadings = try cleanRecords(
            try fixtureText("kolakowski/robot-readings.jsonl"), as: RecordedReading.self)
        let robotTruth = try cleanRecords(try fixtureText("kolakowski/robot-truth.jsonl"), as: TruthRecord.self)
        let before = try replayError(map: calibration.map, readings: robotReadings, truth: robotTruth)
        let after = try replayError(
            map: try calibration.calibratedMap(result), readings: robotReadings, truth: robotTruth)
        print(
            "kolakowski robot path: default \(metres(before.median)) / \(metres(before.p90)), "
                + "calibrated \(metres(after.median)) / \(metres(after.p90))")
        #expect(after.median < before.median)
        #expect(after.p90 < before.p90)
        // The grid filter (the default tracker) with the same constants: printed, not held. With the fitted constants
        // alone it is worse than with the defaults (their offsets trade against the exponent, docs/tracker.md);
        // `calibrate` also writes the radio map, which is what the grid is held to below.
        let gridBefore = try replayError(
            map: calibration.map, readings: robotReadings, truth: robotTruth, positioning: .grid)
        let gridAfter = try replayError(
            map: try calibration.calibratedMap(result), readings: robotReadings, truth: robotTruth, positioning: .grid)
        print(
            "kolakowski robot path, grid: default \(metres(gridBefore.median)) / \(metres(gridBefore.p90)), "
                + "calibrated \(metres(gridAfter.median)) / \(metres(gridAfter.p90))")
        let radioMap = try calibration.radioMap(result)
        for (id, surface) in radioMap.sorted(by: { $0.key < $1.key }) {
            print(
                "kolakowski radio map \(id): signal \(surface.priorDeviation) dB, length \(surface.lengthScale ?? 0) m, "
                    + "noise \(surface.noiseDeviation ?? 0) dB")
        }
        let mapped = try replayError(
            map: try calibration.calibratedMap(result, radioMap: radioMap), readings: robotReadings, truth: robotTruth,
            positioning: .grid)
        print("kolakowski robot path, grid with the radio map: \(metres(mapped.median)) / \(metres(mapped.p90))")
        // The same with a second of fixed lag (issue 11, item 5): closer still, a second later.
        let smoothed = try replayError(
            map: try calibration.calibratedMap(result, radioMap: radioMap), readings: robotReadings, truth: robotTruth,
            positioning: .grid, lag: 1)
        print(
            "kolakowski robot path, grid with the radio map, 1 s lag: \(metres(smoothed.median)) / \(metres(smoothed.p90))"
        )
        #expect(smoothed.median < mapped.median)
        #expect(smoothed.p90 < mapped.p90)
        #expect(radioMap.count == mapDocument.object?["agents"]?.array?.count)
        // Issue 11's goal for the calibrated tracker on this path was 0.9 / 2.0 m, met at 0.843 / 1.629 with the
        // 0.5 m cells the zones chose. Issue 45's cells come from the free space: 0.25 m here (the 0.79 m door), and
        // the same map gives 0.913 / 1.826 m. One cell size is one sample of how the grid falls on the map: around
        // 0.25 m and 0.5 m the means are 0.89 / 1.80 m alike (docs/tracker.md, scripts/cell-size-sweep.sh), so
        // the bound is that mean plus the spread a single size shows, not the lucky 0.5 m draw.
        #expect(mapped.median <= 0.93)
        #expect(mapped.p90 <= 2.0)
        // What `calibrate --out` writes beats what the default engine does before any calibration.
        #expect(mapped.median < gridBefore.median && mapped.p90 < gridBefore.p90)
        // And on held-out time blocks of the calibration runs, against the fitted constants alone.
        let mappedHeldOut = try #require(heldOut.positionWithRadioMap)
        #expect(mappedHeldOut.median < (try #require(heldOut.positionAfter)).median)
        #expect(try #require(heldOut.residualWithRadioMap) < (try #require(heldOut.residualAfter)))
        // The reference: a plain script (least squares on 2 s windows, one global power and exponent fitted by
        // linear regression on the calibration runs) reaches 1.45 m / 2.70 m on this path.
        #expect(after.median < 1.45)
        #expect(after.p90 < 2.70)
        // The target for calibrated positioning on this path.
        #expect(after.median <= 1.2)
        #expect(after.p90 <= 2.2)
        // Held out by time blocks on the calibration runs themselves.
        let positionBefore = try #require(heldOut.positionBefore)
        let positionAfter = try #require(heldOut.positionAfter)
        #expect(positionAfter.median < positionBefore.median)
        #expect(try #require(heldOut.residualAfter) < (try #require(heldOut.residualBefore)))
    }
}
