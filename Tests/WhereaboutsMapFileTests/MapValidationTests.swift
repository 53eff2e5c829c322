import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsMapFile

@Suite("Map validation")
struct MapValidationTests {
    /// A small valid map; each case below breaks one thing in it.
    static let valid = """
        {
          "site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Test site"},
          "model": {"measured_power": -59, "path_loss_exponent": 2.2, "floor_loss": 12, "cell_size": 0.4,
                    "accuracy_scale": 0.8},
          "floors": [
            {"major": 1, "name": "Ground", "height": 0, "outline": [[0,0],[20,0],[20,10],[0,10]]},
            {"major": 2, "name": "Upper", "height": 3.5, "outline": [[0,0],[20,0],[20,10],[0,10]]}
          ],
          "zones": [
            {"floor": 1, "minor": 1, "name": "West", "polygon": [[0,0],[10,0],[10,10],[0,10]]},
            {"floor": 1, "minor": 2, "name": "East", "polygon": [[10,0],[20,0],[20,10],[10,10]]},
            {"floor": 2, "minor": 1, "name": "Loft", "polygon": [[2,2],[8,2],[8,8],[2,8]]}
          ],
          "agents": [
            {"id": "a-1", "floor": 1, "x": 1, "y": 1, "z": 2.4},
            {"id": "a-2", "floor": 1, "x": 19, "y": 9, "z": 2.4, "rssi_offset": -3, "path_loss_exponent": 2.5},
            {"id": "b_1", "floor": 2, "x": 5, "y": 5, "z": 2.2}
          ],
          "tags": [{"id": "ibeacon-f7826da6-4fa2-4e98-8024-bc5b71e0893e-100-1", "name": "Alice", "measured_power": -61, "measured_power_sigma": 1.5}],
          "walls": [{"floor": 1, "from": [10, 0], "to": [10, 10], "loss": 4}]
        }
        """

    func problems(replacing target: String, with replacement: String) throws -> [MapProblem] {
        #expect(Self.valid.contains(target), "the case must change the document")
        let text = Self.valid.replacingOccurrences(of: target, with: replacement)
        switch mapFromJSON(text) {
        case .success: return []
        case .failure(let problems): return problems.problems
        }
    }

    @Test("the valid document loads with every field")
    func valid() throws {
        let map = try mapFromJSON(Self.valid).get()
        #expect(map.site.name == "Test site")
        #expect(map.floors.map(\.major) == [1, 2])
        #expect(map.zones.count == 3)
        #expect(map.agents[1].rssiOffset == -3)
        #expect(map.agents[1].pathLossExponent == 2.5)
        #expect(map.model.pathLossExponent == 2.2)
        #expect(map.model.floorLoss == 12)
        #expect(map.knownTags.first?.measuredPower == -61)
        #expect(map.knownTags.first?.measuredPowerSigma == 1.5)
        #expect(map.model.cellSize == 0.4)
        #expect(map.model.accuracyScale == 0.8)
        #expect(map.walls.first?.loss == 4)
        #expect(map.agentIndex(of: "b_1") == 2)
    }

    @Test("both shipped maps pass", arguments: ["demo-office.json", "kolakowski-flat.json"])
    func shippedMaps(name: String) throws {
        let map = try loadShippedMap(name)
        #expect(!map.agents.isEmpty)
        if name == "demo-office.json" {
            #expect(map.floors.count == 2)
            #expect(map.zones.count >= 8)
            #expect(map.agents.count >= 10)
        }
    }

    @Test("a map edited in place finds its agents, floors and tags where they are now")
    func editedInPlace() throws {
        var map = try loadShippedMap("demo-office.json")
        let removed = map.agents[0].id
        let moved = map.agents[1].id
        map.agents.removeFirst()
        #expect(map.agentIndex(of: removed) == nil)
        #expect(map.agentIndex(of: moved) == 0)
        let lastFloor = try #require(map.floors.last)
        map.floors.removeLast()
        #expect(map.floor(major: lastFloor.major) == nil)
        if let tag = map.knownTags.first {
            map.knownTags.removeAll()
            #expect(map.knownTag(tag.identity) == nil)
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var target: String
        var replacement: String
        var path: String
        var words: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "duplicate major", target: #""major": 2"#, replacement: #""major": 1"#, path: "$.floors[1].major",
            words: "duplicate major"),
        Case(
            name: "duplicate minor",
            target: #""floor": 1, "minor": 2"#,
            replacement: #""floor": 1, "minor": 1"#,
            path: "$.zones[1].minor",
            words: "duplicate minor"
        ),
        Case(
            name: "duplicate agent id", target: #""id": "a-2""#, replacement: #""id": "a-1""#, path: "$.agents[1].id",
            words: "duplicate agent id"),
        Case(
            name: "degenerate polygon (collinear points)",
            target: "[[2,2],[8,2],[8,8],[2,8]]",
            replacement: "[[2,2],[5,2],[8,2]]",
            path: "$.zones[2].polygon",
            words: "degenerate"
        ),
        Case(
            name: "too few points",
            target: "[[2,2],[8,2],[8,8],[2,8]]",
            replacement: "[[2,2],[8,2]]",
            path: "$.zones[2].polygon",
            words: "at least 3 points"
        ),
        Case(
            name: "repeated point",
            target: "[[2,2],[8,2],[8,8],[2,8]]",
            replacement: "[[2,2],[8,2],[8,2],[2,8]]",
            path: "$.zones[2].polygon[2]",
            words: "repeats"
        ),
        Case(
            name: "self-intersecting polygon",
            target: "[[2,2],[8,2],[8,8],[2,8]]",
            replacement: "[[2,2],[8,8],[8,2],[2,8]]",
            path: "$.zones[2].polygon",
            words: "self-intersecting"
        ),
        Case(
            name: "zones overlapping",
            target: "[[10,0],[20,0],[20,10],[10,10]]",
            replacement: "[[9,0],[20,0],[20,10],[9,10]]",
            path: "$.zones[1].polygon",
            words: "overlaps zone \"West\""
        ),
        Case(
            name: "zone leaving its floor",
            target: "[[2,2],[8,2],[8,8],[2,8]]",
            replacement: "[[2,2],[28,2],[28,8],[2,8]]",
            path: "$.zones[2].polygon",
            words: "leaves the outline"
        ),
        Case(
            name: "agent outside its floor", target: #""x": 19, "y": 9"#, replacement: #""x": 25, "y": 9"#,
            path: "$.agents[1]", words: "outside the outline"),
        Case(
            name: "non-finite number", target: #""z": 2.2"#, replacement: #""z": 1e999"#, path: "$.agents[2].z",
            words: "finite"),
        Case(
            name: "malformed UUID",
            target: #""uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e""#,
            replacement: #""uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893""#,
            path: "$.site.uuid",
            words: "not a UUID"
        ),
        Case(
            name: "unknown key (a typo)", target: #""rssi_offset": -3"#, replacement: #""rssi_ofset": -3"#,
            path: "$.agents[1].rssi_ofset", words: "unknown key"),
        Case(
            name: "unknown root key", target: #""walls":"#, replacement: #""wals":"#, path: "$.wals",
            words: "unknown key"),
        Case(
            name: "bad agent id", target: #""id": "b_1""#, replacement: #""id": "b/1""#, path: "$.agents[2].id",
            words: "agent ids"),
        Case(
            name: "floor that does not exist", target: #""id": "b_1", "floor": 2"#,
            replacement: #""id": "b_1", "floor": 7"#, path: "$.agents[2].floor", words: "no floor has major 7"),
        Case(
            name: "wrong type", target: #""name": "Ground""#, replacement: #""name": 5"#, path: "$.floors[0].name",
            words: "must be a string"),
        Case(
            name: "missing field", target: #", "z": 2.4},"#, replacement: "},", path: "$.agents[0].z",
            words: "is required"),
        Case(
            name: "fractional major", target: #""major": 2"#, replacement: #""major": 2.5"#, path: "$.floors[1].major",
            words: "whole number"),
        Case(
            name: "bad tag identity", target: #""id": "ibeacon-f7826da6"#, replacement: #""id": "ibeacon-x7826da6"#,
            path: "$.tags[0].id", words: "not a tag identity"),
        Case(
            name: "out-of-range model constant", target: #""path_loss_exponent": 2.2"#,
            replacement: #""path_loss_exponent": 9"#, path: "$.model.path_loss_exponent", words: "between"),
        Case(
            name: "floor loss out of range", target: #""floor_loss": 12"#, replacement: #""floor_loss": -3"#,
            path: "$.model.floor_loss", words: "between"),
        Case(
            name: "cell size out of range", target: #""cell_size": 0.4"#, replacement: #""cell_size": 0"#,
            path: "$.model.cell_size", words: "between"),
        Case(
            name: "accuracy scale out of range", target: #""accuracy_scale": 0.8"#,
            replacement: #""accuracy_scale": 0.1"#, path: "$.model.accuracy_scale", words: "between"),
        Case(
            name: "power spread without a power", target: #""measured_power": -61, "#, replacement: "",
            path: "$.tags[0].measured_power_sigma", words: "has none"),
        Case(
            name: "zero-length wall", target: #""to": [10, 10]"#, replacement: #""to": [10, 0]"#, path: "$.walls[0]",
            words: "two distinct ends"),
    ]

    @Test("each kind of error is caught and named with its path", arguments: cases)
    func caught(_ testCase: Case) throws {
        let found = try problems(replacing: testCase.target, with: testCase.replacement)
        #expect(!found.isEmpty, "\(testCase.name) was not caught")
        let match = found.first { $0.path == testCase.path && $0.message.contains(testCase.words) }
        #expect(match != nil, "expected \(testCase.path): …\(testCase.words)…, got \(found)")
    }

    @Test("every problem is reported, not only the first")
    func allProblems() throws {
        var text = Self.valid.replacingOccurrences(of: #""major": 2"#, with: #""major": 1"#)
        text = text.replacingOccurrences(of: #""id": "b_1""#, with: #""id": "b 1""#)
        text = text.replacingOccurrences(of: #""rssi_offset": -3"#, with: #""rssi_offset": "loud""#)
        guard case .failure(let problems) = mapFromJSON(text) else {
            Issue.record("a broken map loaded")
            return
        }
        let paths = Set(problems.problems.map(\.path))
        #expect(paths.isSuperset(of: ["$.floors[1].major", "$.agents[2].id", "$.agents[1].rssi_offset"]))
    }

    @Test("text that is not JSON names the line and column")
    func notJSON() {
        guard case .failure(let problems) = mapFromJSON("{\n  \"site\": ,\n}") else {
            Issue.record("garbage loaded")
            return
        }
        #expect(problems.problems.count == 1)
        #expect(problems.problems[0].message.contains("line 2"))
    }
    @Test("optional stairs load, and bad stairs are named with their path")
    func stairs() throws {
        let walls = #""walls": [{"floor": 1, "from": [10, 0], "to": [10, 10], "loss": 4}]"#
        func withStairs(_ stairs: String) -> Result<FloorMap, MapProblems> {
            mapFromJSON(Self.valid.replacingOccurrences(of: walls, with: walls + #", "stairs": "# + stairs))
        }
        #expect(try mapFromJSON(Self.valid).get().stairs.isEmpty)
        let map = try withStairs(#"[{"floors": [1, 2], "x": 4, "y": 5}]"#).get()
        #expect(map.stairs == [Stairs(floors: [1, 2], position: Point(x: 4, y: 5))])

        let bad: [(stairs: String, path: String, words: String)] = [
            (#"[{"floors": [1, 3], "x": 4, "y": 5}]"#, "$.stairs[0].floors[1]", "no floor has major 3"),
            (#"[{"floors": [1], "x": 4, "y": 5}]"#, "$.stairs[0].floors", "at least two floors"),
            (#"[{"floors": [2, 2], "x": 4, "y": 5}]"#, "$.stairs[0].floors[1]", "listed twice"),
            (#"[{"floors": [1, 2], "x": 40, "y": 5}]"#, "$.stairs[0]", "outside the outline of floor 1"),
            (#"[{"floors": [1, 2], "x": 4}]"#, "$.stairs[0].y", "is required"),
            (#"[{"floors": [1, 2], "x": 4, "y": 5, "z": 1}]"#, "$.stairs[0].z", "unknown key"),
        ]
        for (stairs, path, words) in bad {
            guard case .failure(let problems) = withStairs(stairs) else {
                Issue.record("stairs \(stairs) should not load")
                continue
            }
            #expect(
                problems.problems.contains { $0.path == path && $0.message.contains(words) },
                "\(stairs): \(problems)")
        }
    }
}
