import Foundation
import TestFixtures
import Testing
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsSimulation
import WhereaboutsWire

/// A seeded scenario of the accuracy harness: a small map and simulation settings.
struct Scenario: Sendable, CustomTestStringConvertible {
    var name: String
    var tags: Int
    var duration: Double
    var seed: UInt64

    var testDescription: String { name }

    /// Its map, and its simulated readings and truth as recording text, as `whereabouts sim` writes them.
    func simulated() throws -> (map: FloorMap, readings: String, truth: String) {
        let map = try scenarioMap(name)
        var simulation = SimulationConfiguration()
        simulation.tagCount = tags
        simulation.duration = duration
        let (readings, truth) = try simulate(map: map, configuration: simulation, seed: seed)
        return (map, readings, truth)
    }
}

/// The figures a scenario is held to, recorded in `Fixtures/baselines/<name>.json`.
struct Baseline: Equatable {
    var median: Double
    var p90: Double
    var zoneAccuracy: Double

    /// Worse than the baseline by more than this share of the median or p90 fails.
    static let worseShare = 0.10
    /// Worse zone accuracy by more than this (absolute share) fails.
    static let worseZoneAccuracy = 0.03
    /// Better by more than this share means the baseline is stale: re-record it.
    static let betterShare = 0.25

    init(median: Double, p90: Double, zoneAccuracy: Double) {
        self.median = median
        self.p90 = p90
        self.zoneAccuracy = zoneAccuracy
    }

    init(_ report: AccuracyReport) throws {
        let error = try #require(report.error)
        median = (error.median * 1000).rounded() / 1000
        p90 = (error.p90 * 1000).rounded() / 1000
        zoneAccuracy = ((report.zoneAccuracy ?? 0) * 1000).rounded() / 1000
    }

    static func url(_ name: String) -> URL {
        fixturesDirectory.appendingPathComponent("baselines/\(name).json")
    }

    static func load(_ name: String) throws -> Baseline {
        let data = try #require(FileManager.default.contents(atPath: url(name).path), "no baseline for \(name)")
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return Baseline(
            median: try #require(object["median"] as? Double),
            p90: try #require(object["p90"] as? Double),
            zoneAccuracy: try #require(object["zone_accuracy"] as? Double)
        )
    }

    func save(_ name: String, note: String) throws {
        let text = """
            {"scenario": "\(name)", "note": "\(note)", "median": \(median), "p90": \(p90), \
            "zone_accuracy": \(zoneAccuracy)}

            """
        try FileManager.default.createDirectory(
            at: Self.url(name).deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: Self.url(name))
    }

    /// Compares a run with this baseline; records the run instead when RECORD_BASELINE=1.
    static func check(_ name: String, _ measured: Baseline, note: String) throws {
        if ProcessInfo.processInfo.environment["RECORD_BASELINE"] == "1" {
            try measured.save(name, note: note)
            return
        }
        let baseline = try load(name)
        let rerecord = "if this is an improvement, re-record with RECORD_BASELINE=1 swift test --filter AccuracyHarness"
        #expect(
            measured.median <= baseline.median * (1 + worseShare),
            "\(name): median \(measured.median) m is worse than the baseline \(baseline.median) m by over 10 %")
        #expect(
            measured.p90 <= baseline.p90 * (1 + worseShare),
            "\(name): p90 \(measured.p90) m is worse than the baseline \(baseline.p90) m by over 10 %")
        #expect(
            measured.zoneAccuracy >= baseline.zoneAccuracy - worseZoneAccuracy,
            "\(name): zone accuracy \(measured.zoneAccuracy) fell below the baseline \(baseline.zoneAccuracy)")
        #expect(
            measured.median >= baseline.median * (1 - betterShare) && measured.p90 >= baseline.p90 * (1 - betterShare),
            "\(name): \(measured) is far better than the baseline \(baseline); \(rerecord)")
    }
}

/// The zone figures of a report, for the harness's printout: changes per tag-hour reported and true, the delay to
/// detect a change, and the calibration of zone probabilities.
func zoneFigures(_ report: AccuracyReport) -> String {
    let changes =
        "\(report.reportedZoneChangesPerTagHour ?? 0) reported / \(report.trueZoneChangesPerTagHour ?? 0) true"
    let calibration = report.confidentZoneAccuracy.map { "\($0)" } ?? "none"
    return "zone changes per tag-hour \(changes), detection delay median \(report.detectionDelay?.median ?? -1) s, "
        + "zones given p >= \(AccuracyReport.confidentProbability) right \(calibration) of \(report.confidentZones)"
}

@Suite("Accuracy harness", .ownThread)
struct AccuracyHarnessTests {
    /// Six tags for ten minutes each: about 2 s per scenario in a debug build.
    static let scenarios = [
        Scenario(name: "open-office", tags: 6, duration: 600, seed: 42),
        Scenario(name: "walled-rooms", tags: 6, duration: 600, seed: 42),
        Scenario(name: "two-floors", tags: 6, duration: 600, seed: 42),
        Scenario(name: "sparse-agents", tags: 6, duration: 600, seed: 42),
    ]

    @Test("simulated scenarios hold their baselines", arguments: scenarios)
    func scenario(_ scenario: Scenario) throws {
        // Through recording text, as `whereabouts sim | replay | evaluate` would.
        let (map, readingsText, truthText) = try scenario.simulated()
        let readings = try cleanRecords(readingsText, as: RecordedReading.self)
        let truth = try cleanRecords(truthText, as: TruthRecord.self)
        var configuration = LocatorReplay.defaultConfiguration
        // The default tracker is the grid filter, with or without a radio map.
        #expect(configuration.engine.positioning == .grid)
        let (output, _) = LocatorReplay.run(map: map, readings: readings, configuration: configuration)
        let report = AccuracyReport(positions: output.positions, truth: truth, map: map)
        #expect(report.unscored == 0)
        #expect((report.floorAccuracy ?? 0) >= 0.95)
        let measured = try Baseline(report)
        print("accuracy \(scenario.name): \(measured), floor \(report.floorAccuracy ?? 0), " + zoneFigures(report))
        try Baseline.check(
            scenario.name, measured,
            note:
                "\(scenario.tags) tags, \(Int(scenario.duration)) s, seed \(scenario.seed), default settings (grid filter)"
        )
        // Issue 11: zone changes per tag-hour within 10 % of the true count (met since 68a0343; entering a zone at
        // 0.6 left the open office 11 % short).
        let reported = try #require(report.reportedZoneChangesPerTagHour)
        let actual = try #require(report.trueZoneChangesPerTagHour)
        #expect(abs(reported / actual - 1) <= 0.1, "\(reported) zone changes per tag-hour against \(actual) true")
        try Self.expectHonestAccuracy(report, scenario.name)
        // The same readings with a second of fixed lag (issue 11, item 5): each position is of a second earlier,
        // smoothed with the readings since, and scored against the truth then.
        configuration.engine.grid.lag = 1
        let (lagged, _) = LocatorReplay.run(map: map, readings: readings, configuration: configuration)
        let laggedReport = AccuracyReport(positions: lagged.positions, truth: truth, map: map)
        print("accuracy \(scenario.name), 1 s lag: \(try Baseline(laggedReport)), " + zoneFigures(laggedReport))
        // It gains 0.9-1.4 points of zone accuracy on three scenarios and loses 0.2 on the two floors (at the cells
        // chosen per floor); that the lag helps at all is held by FixedLagTests and the Kolakowski robot path.
        #expect(
            (laggedReport.zoneAccuracy ?? 0) >= (report.zoneAccuracy ?? 1) - 0.01, "the lag must not cost zones")
    }

    /// Issue 45, item 5: the published accuracy is the radius that holds the true position about 68 % of the time.
    /// The goal, 60–75 %, is held: the posterior's spread in quadrature with a model error that grows with the
    /// distance to the agents (``TagEstimator/gridAccuracy(spread:at:floor:ranges:)``) gives 62.9–70.8 % here
    /// (seed 42) and 71.2 % on the Kolakowski robot path, where one factor on the spread gave 59.0–62.2 % and 72.1 %.
    static func expectHonestAccuracy(_ report: AccuracyReport, _ name: String) throws {
        let within = try #require(report.withinAccuracy)
        print("accuracy \(name): \(within) of fixes within their own accuracy")
        #expect(within >= 0.60 && within <= 0.75, "\(name): \(within) of fixes within their own accuracy")
    }

    /// What a second of delay costs, scored as the harness scores: the truth itself, each second reported as where
    /// the tag was `delay` seconds before. Issue 11 asks for 95 % in the walled rooms and 90 % in the open office;
    /// the scenarios' people change zone about 140 times an hour, and each second a change is reported late is a
    /// second scored wrong, whatever the positions.
    @Test(
        "a perfect tracker a second late scores under 97 % of zones; two seconds late, under 95 %",
        arguments: [
            scenarios[0], scenarios[1],
        ])
    func delayAlone(_ scenario: Scenario) throws {
        let (map, _, truthText) = try scenario.simulated()
        let truth = try cleanRecords(truthText, as: TruthRecord.self)
        let byTag = Dictionary(grouping: truth, by: \.tag)
        var accuracy: [Double] = []
        for delay in 0...3 {
            var positions: [PositionRecord] = []
            for samples in byTag.values {
                let sorted = samples.sorted { $0.time < $1.time }
                var earlier = 0
                for sample in sorted {
                    // The newest sample at least `delay` seconds old (the truth is sampled every second).
                    while earlier + 1 < sorted.count, sorted[earlier + 1].time <= sample.time - Double(delay) + 1e-6 {
                        earlier += 1
                    }
                    let past = sorted[earlier]
                    guard past.time <= sample.time - Double(delay) + 1e-6 else { continue }
                    let zone = map.zones.first {
                        $0.floor == past.floor && $0.polygon.contains(Point(x: past.x, y: past.y))
                    }
                    positions.append(
                        PositionRecord(
                            time: sample.time, tag: sample.tag, x: past.x, y: past.y, floor: past.floor,
                            zone: zone?.minor, accuracy: 0))
                }
            }
            let report = AccuracyReport(positions: positions, truth: truth, map: map)
            accuracy.append(try #require(report.zoneAccuracy))
        }
        print("the truth itself, 0-3 s late, \(scenario.name): zone accuracy \(accuracy)")
        #expect(accuracy[0] == 1, "scored as the harness scores, the truth on time is right every second")
        #expect(accuracy[1] < 0.97)
        #expect(accuracy[2] < 0.95)
        #expect(accuracy[3] < accuracy[2])
    }

    @Test("trilateration holds its own baselines on the simulated scenarios", arguments: scenarios)
    func trilaterationScenario(_ scenario: Scenario) throws {
        let (map, readingsText, truthText) = try scenario.simulated()
        let readings = try cleanRecords(readingsText, as: RecordedReading.self)
        let truth = try cleanRecords(truthText, as: TruthRecord.self)
        var configuration = LocatorReplay.defaultConfiguration
        configuration.engine.positioning = .trilateration
        let (output, _) = LocatorReplay.run(map: map, readings: readings, configuration: configuration)
        let report = AccuracyReport(positions: output.positions, truth: truth, map: map)
        #expect(report.unscored == 0)
        #expect((report.floorAccuracy ?? 0) >= 0.95)
        let measured = try Baseline(report)
        print(
            "accuracy trilateration \(scenario.name): \(measured), floor \(report.floorAccuracy ?? 0), "
                + zoneFigures(report))
        try Baseline.check(
            "trilateration-\(scenario.name)", measured,
            note:
                "trilateration, \(scenario.tags) tags, \(Int(scenario.duration)) s, seed \(scenario.seed), default settings"
        )
    }

    @Test("the Kolakowski robot path, with default constants, meets issue 11's goal and beats the references")
    func kolakowskiRobot() throws {
        let map = try shippedMap("kolakowski-flat.json")
        let readings = try cleanRecords(
            try fixtureText("kolakowski/robot-readings.jsonl"), as: RecordedReading.self)
        let truth = try cleanRecords(try fixtureText("kolakowski/robot-truth.jsonl"), as: TruthRecord.self)
        #expect(readings.count == 12_927)
        #expect(truth.count == 719)
        let (output, replay) = LocatorReplay.run(map: map, readings: readings)
        #expect(replay.counters.accepted == readings.count)
        let report = AccuracyReport(positions: output.positions, truth: truth, map: map)
        let error = try #require(report.error)
        print(
            "accuracy kolakowski-robot: median \(error.median) m, p90 \(error.p90) m, over \(report.scored), "
                + "zone accuracy \(report.zoneAccuracy ?? 0), " + zoneFigures(report))
        // Issue 45, item 6: zone changes within 15 % of the truth. The map's rooms meet at the middle of each doorway
        // they share (before, 0.1–0.44 m strips between their polygons made each pass through a door two changes in
        // the truth, room, no zone, room, that no decision on one estimate a second can see).
        let reported = try #require(report.reportedZoneChangesPerTagHour)
        let actual = try #require(report.trueZoneChangesPerTagHour)
        #expect(abs(reported / actual - 1) <= 0.15, "\(reported) zone changes per tag-hour against \(actual)")
        try Self.expectHonestAccuracy(report, "kolakowski-robot")
        // Issue 11's goal for default constants on this path: 1.4 m / 3.0 m (the tags are near −45 dBm at 1 m,
        // the map says −59: the grid filter learns each tag's offset).
        #expect(error.median <= 1.4)
        #expect(error.p90 <= 3.0)
        #expect(error.median < Self.referenceMedian)
        #expect(error.p90 < Self.referenceP90)
        try Baseline.check(
            "kolakowski-robot", try Baseline(report), note: "robot test path, default engine (grid filter)")
    }

    /// References on 2 s windows of the Kolakowski robot path: weighted centroid of the 3 strongest anchors
    /// 2.09 m / 3.26 m; least squares with the default constants 2.08 m / 3.39 m.
    static let referenceMedian = 2.08
    static let referenceP90 = 3.26

    @Test("trilateration on the Kolakowski robot path beats the weighted-centroid and least-squares references")
    func trilaterationKolakowskiRobot() throws {
        let map = try shippedMap("kolakowski-flat.json")
        let readings = try cleanRecords(
            try fixtureText("kolakowski/robot-readings.jsonl"), as: RecordedReading.self)
        let truth = try cleanRecords(try fixtureText("kolakowski/robot-truth.jsonl"), as: TruthRecord.self)
        var configuration = LocatorReplay.defaultConfiguration
        configuration.engine.positioning = .trilateration
        let (output, _) = LocatorReplay.run(map: map, readings: readings, configuration: configuration)
        let report = AccuracyReport(positions: output.positions, truth: truth, map: map)
        let error = try #require(report.error)
        print(
            "accuracy trilateration kolakowski-robot: median \(error.median) m, p90 \(error.p90) m, over \(report.scored)"
        )
        #expect(error.median < Self.referenceMedian)
        #expect(error.p90 < Self.referenceP90)
        try Baseline.check(
            "trilateration-kolakowski-robot", try Baseline(report), note: "robot test path, trilateration")
    }
}
