import Foundation
import TestFixtures
import Testing
import WhereaboutsCore
import WhereaboutsMapFile

/// The repository's root, for the shipped maps.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// A shared fixture's text (`scenarios/…`).
func fixtureText(_ relativePath: String) throws -> String {
    try TestFixtures.text(relativePath)
}

func loadMap(_ text: String) throws -> FloorMap {
    try FloorMap.parse(Array(text.utf8)).get()
}

func shippedMap(_ name: String) throws -> FloorMap {
    let data = try #require(
        FileManager.default.contents(atPath: repositoryRoot.appendingPathComponent("maps/\(name)").path))
    return try FloorMap.parse(Array(data)).get()
}
