import TestFixtures
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsMapFile

/// The map document of a scenario of the test fixtures (`scenarios/open-office.json`, …).
func scenarioDocument(_ name: String) throws -> JSONValue {
    try MapDocument.parse(Array(try TestFixtures.text("scenarios/\(name).json").utf8))
}
