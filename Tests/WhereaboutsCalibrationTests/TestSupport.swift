import Foundation
import TestFixtures
import Testing
import WhereaboutsCalibration
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsLocator
import WhereaboutsMapFile
import WhereaboutsSimulation
import WhereaboutsWire

/// The repository's root, for the shipped maps.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// A shared fixture's text (`scenarios/…`, `kolakowski/…`).
func fixtureText(_ relativePath: String) throws -> String {
    try TestFixtures.text(relativePath)
}

func shippedMapText(_ name: String) throws -> String {
    let data = try #require(
        FileManager.default.contents(atPath: repositoryRoot.appendingPathComponent("maps/\(name)").path))
    return String(decoding: data, as: UTF8.self)
}

func document(_ text: String) throws -> JSONValue {
    try MapDocument.parse(Array(text.utf8))
}

func loadMap(_ value: JSONValue) throws -> FloorMap {
    try FloorMap.load(value).get()
}

/// A recording decoded without a single bad line.
func cleanRecords<Record: RecordingLine>(_ text: String, as type: Record.Type) throws -> [Record] {
    let decoded = JSONLines.decode(text, as: type)
    #expect(decoded.errors.isEmpty, "bad lines: \(decoded.errors.prefix(3))")
    return decoded.records
}

/// Runs a whole simulation; returns its readings (agents' beacons included when simulated) and truth.
func simulate(
    map: FloorMap,
    configuration: SimulationConfiguration,
    seed: UInt64
) throws -> (readings: [RecordedReading], truth: [TruthRecord]) {
    var simulator = try Simulator(map: map, configuration: configuration, seed: seed)
    var readings: [RecordedReading] = []
    var truth: [TruthRecord] = []
    while let window = simulator.nextWindow() {
        for batch in window.batches { readings += batch.recordedReadings }
        truth += window.truth
    }
    return (readings, truth)
}

/// The pipeline's positions over readings, as `whereabouts replay` writes them.
@Sendable func replayPositions(_ map: FloorMap, _ readings: [RecordedReading]) -> [PositionRecord] {
    LocatorReplay.run(map: map, readings: readings).output.positions
}

/// The error distribution of a replay against truth.
func replayError(
    map: FloorMap, readings: [RecordedReading], truth: [TruthRecord],
    positioning: LocatorEngine.Configuration.Positioning = .trilateration, lag: Double = 0
) throws -> AccuracyReport.Distribution {
    var configuration = LocatorReplay.defaultConfiguration
    configuration.engine.positioning = positioning
    configuration.engine.grid.lag = lag
    let (output, _) = LocatorReplay.run(map: map, readings: readings, configuration: configuration)
    let report = AccuracyReport(positions: output.positions, truth: truth, map: map)
    return try #require(report.error)
}

func metres(_ value: Double) -> String { String(format: "%.3f m", value) }
