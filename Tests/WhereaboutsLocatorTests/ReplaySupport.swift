import TestFixtures
import Testing
import WhereaboutsCore
import WhereaboutsMapFile
import WhereaboutsSimulation
import WhereaboutsWire

/// The simulation's scenario maps, from the shared fixtures.
func scenarioMap(_ name: String) throws -> FloorMap {
    try FloorMap.parse(TestFixtures.bytes("scenarios/\(name).json")).get()
}

/// A recording decoded without a single bad line.
func cleanRecords<Record: RecordingLine>(_ text: String, as type: Record.Type) throws -> [Record] {
    let decoded = JSONLines.decode(text, as: type)
    #expect(decoded.errors.isEmpty, "bad lines: \(decoded.errors.prefix(3))")
    return decoded.records
}

/// Runs a whole simulation; returns its windows (the agents' batches and the truth), in time order.
func simulatedWindows(map: FloorMap, configuration: SimulationConfiguration, seed: UInt64) throws
    -> [SimulatedWindow]
{
    var simulator = try Simulator(map: map, configuration: configuration, seed: seed)
    var windows: [SimulatedWindow] = []
    while let window = simulator.nextWindow() { windows.append(window) }
    return windows
}

/// The readings of a whole simulation as recording text, exactly as `whereabouts sim` writes them.
func simulatedReadings(map: FloorMap, configuration: SimulationConfiguration, seed: UInt64) throws -> String {
    try simulatedWindows(map: map, configuration: configuration, seed: seed)
        .flatMap(\.batches).map { JSONLines.encode($0.recordedReadings) }.joined()
}
