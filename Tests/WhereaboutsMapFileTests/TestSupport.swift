import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsMapFile

/// The repository's root, found from this file's path, so tests read the shipped maps and nothing outside.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

func loadShippedMap(_ name: String) throws -> FloorMap {
    let data = try #require(
        FileManager.default.contents(atPath: repositoryRoot.appendingPathComponent("maps/\(name)").path))
    return try FloorMap.parse(Array(data)).get()
}

func mapFromJSON(_ text: String) -> Result<FloorMap, MapProblems> {
    FloorMap.parse(Array(text.utf8))
}

func document(_ text: String) throws -> JSONValue {
    try MapDocument.parse(Array(text.utf8))
}

/// A one-floor map with agents at the given points (antennas at 2.5 m) and a 30 m × 20 m outline.
func squareMap(agents: [(String, Double, Double)]) throws -> JSONValue {
    let list = agents.map { #"{"id": "\#($0.0)", "floor": 1, "x": \#($0.1), "y": \#($0.2), "z": 2.5}"# }
    return try document(
        """
        {"site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Test"},
         "model": {"measured_power": -59, "path_loss_exponent": 2.0, "tag_height": 1.2},
         "floors": [{"major": 1, "name": "Ground", "outline": [[0, 0], [30, 0], [30, 20], [0, 20]]}],
         "agents": [\(list.joined(separator: ", "))]}
        """)
}

func testTag(_ minor: Int = 1) throws -> TagIdentity {
    try #require(TagIdentity("ibeacon-f7826da6-4fa2-4e98-8024-bc5b71e0893e-1-\(minor)"))
}
