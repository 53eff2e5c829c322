import Foundation
import TestFixtures
import Testing
import WhereaboutsCore
import WhereaboutsMapFile
import WhereaboutsSimulation
import WhereaboutsWire

/// This target's own fixtures (the accuracy baselines), found from this file's path so that tests can re-record
/// them in place. The recordings and scenario maps it shares with other targets are in ``TestFixtures``.
let fixturesDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

/// The repository's root, for the shipped maps.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// A shared fixture's text (`scenarios/…`, `kolakowski/…`).
func fixtureText(_ relativePath: String) throws -> String {
    try TestFixtures.text(relativePath)
}

func loadMap(_ text: String) throws -> FloorMap {
    try FloorMap.parse(Array(text.utf8)).get()
}

func scenarioMap(_ name: String) throws -> FloorMap {
    try loadMap(try fixtureText("scenarios/\(name).json"))
}

func shippedMap(_ name: String) throws -> FloorMap {
    let data = try #require(
        FileManager.default.contents(atPath: repositoryRoot.appendingPathComponent("maps/\(name)").path))
    return try FloorMap.parse(Array(data)).get()
}

/// A recording decoded without a single bad line.
func cleanRecords<Record: RecordingLine>(_ text: String, as type: Record.Type) throws -> [Record] {
    let decoded = JSONLines.decode(text, as: type)
    #expect(decoded.errors.isEmpty, "bad lines: \(decoded.errors.prefix(3))")
    return decoded.records
}

/// Runs a whole simulation and returns its readings and truth as recording text, exactly as `whereabouts sim`
/// writes them.
func simulate(
    map: FloorMap,
    configuration: SimulationConfiguration,
    seed: UInt64
) throws -> (readings: String, truth: String) {
    var simulator = try Simulator(map: map, configuration: configuration, seed: seed)
    var readings = ""
    var truth = ""
    while let window = simulator.nextWindow() {
        for batch in window.batches { readings += JSONLines.encode(batch.recordedReadings) }
        truth += JSONLines.encode(window.truth)
    }
    return (readings, truth)
}
