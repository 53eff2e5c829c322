import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsMapFile

@Suite("Radio maps in the map file")
struct RadioMapFileTests {
    static let text = """
        {"site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Test"},
         "model": {"measured_power": -59, "path_loss_exponent": 2.0},
         "floors": [{"major": 1, "name": "Ground", "outline": [[0, 0], [4, 0], [4, 2], [0, 2]]}],
         "agents": [{"id": "a", "floor": 1, "x": 1, "y": 1, "z": 2.5,
                     "radio_map": {"origin": [0, 0], "cell_size": 1, "columns": 4, "rows": 2, "prior_sd": 3,
                                   "length_scale": 1.5, "noise_sd": 2,
                                   "mean": [1, 2, 3, 4, -1, -2, -3, -4], "sd": [1, 1, 1, 3, 1, 1, 1, 3]}},
                    {"id": "b", "floor": 1, "x": 3, "y": 1, "z": 2.5}]}
        """

    @Test("an agent's radio map loads, answers by cell, and gives the prior outside its raster")
    func loads() throws {
        let map = try FloorMap.parse(Array(Self.text.utf8)).get()
        let surface = try #require(map.agents[0].radioSurface)
        #expect(map.agents[1].radioSurface == nil)
        #expect(surface.lengthScale == 1.5)
        #expect(surface.noiseDeviation == 2)
        #expect(surface.residual(at: Point(x: 2.5, y: 0.5)) == (3, 1))
        #expect(surface.residual(at: Point(x: 3.5, y: 1.5)) == (-4, 9))
        #expect(surface.residual(at: Point(x: 9, y: 0.5)) == (0, 9))
        #expect(surface.residual(at: Point(x: -0.1, y: 0.5)) == (0, 9))
    }

    @Test("a radio map written into a document loads back as it was, to the file's rounding")
    func roundTrip() throws {
        let loaded = try FloorMap.parse(Array(Self.text.utf8)).get()
        var surface = try #require(loaded.agents[0].radioSurface)
        surface.mean = surface.mean.map { $0 + 0.04 }
        let edited = MapDocument.apply(
            agents: [:], powers: [:], radioMaps: ["b": surface], to: try MapDocument.parse(Array(Self.text.utf8)))
        let map = try FloorMap.parse(Array(try MapDocument.text(edited).utf8)).get()
        let written = try #require(map.agents[1].radioSurface)
        #expect(written.mean == surface.mean.map { $0.rounded(toDecimals: 1) })
        #expect(written.deviation == surface.deviation)
        #expect(written.columns == 4 && written.rows == 2 && written.cellSize == 1)
        #expect(map.agents[0].radioSurface == loaded.agents[0].radioSurface)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var target: String
        var replacement: String
        var path: String
        var words: String
        var testDescription: String { "\(path): \(words)" }
    }

    static let cases = [
        Case(
            target: #""mean": [1, 2, 3, 4, -1, -2, -3, -4]"#, replacement: #""mean": [1, 2, 3]"#,
            path: "$.agents[0].radio_map.mean", words: "columns × rows = 8"),
        Case(
            target: #""sd": [1, 1, 1, 3, 1, 1, 1, 3]"#, replacement: #""sd": [1, 1, 1, 0, 1, 1, 1, 3]"#,
            path: "$.agents[0].radio_map.sd[3]", words: "between 0.01 and 60"),
        Case(
            target: #""mean": [1, 2, 3, 4, -1, -2, -3, -4]"#, replacement: #""mean": [1, 2, 3, 4, -1, -2, "x", -4]"#,
            path: "$.agents[0].radio_map.mean[6]", words: "must be a number"),
        Case(
            target: #""columns": 4"#, replacement: #""columns": 4.5"#, path: "$.agents[0].radio_map.columns",
            words: "whole number"),
        Case(
            target: #""cell_size": 1"#, replacement: #""cell_size": 0"#, path: "$.agents[0].radio_map.cell_size",
            words: "between"),
        Case(
            target: #""prior_sd": 3,"#, replacement: "", path: "$.agents[0].radio_map.prior_sd", words: "is required"),
        Case(
            target: #""noise_sd": 2"#, replacement: #""noise": 2"#, path: "$.agents[0].radio_map.noise",
            words: "unknown key"),
        Case(
            target: #""columns": 4, "rows": 2"#, replacement: #""columns": 4000, "rows": 4000"#,
            path: "$.agents[0].radio_map", words: "at most 4,000,000 cells"),
    ]

    @Test("a bad radio map is refused, naming the field", arguments: cases)
    func refused(_ testCase: Case) throws {
        #expect(Self.text.contains(testCase.target))
        let text = Self.text.replacingOccurrences(of: testCase.target, with: testCase.replacement)
        guard case .failure(let problems) = FloorMap.parse(Array(text.utf8)) else {
            Issue.record("accepted")
            return
        }
        #expect(
            problems.problems.contains { $0.path == testCase.path && $0.message.contains(testCase.words) },
            "\(problems.problems)")
    }
}
