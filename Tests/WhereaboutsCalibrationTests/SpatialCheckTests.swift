import Testing
import WhereaboutsCalibration
import WhereaboutsCore
import WhereaboutsMapFile

@Suite("The spatial check's parts")
struct SpatialCheckTests {
    static func map() throws -> FloorMap {
        let text = """
            {"site": {"uuid": "6b6f6c61-6b6f-7773-6b69-000000000001", "name": "box"},
             "model": {"measured_power": -59, "path_loss_exponent": 2, "tag_height": 1},
             "floors": [{"major": 1, "name": "F", "height": 0, "outline": [[0, 0], [12, 0], [12, 6], [0, 6]]}],
             "agents": [{"id": "a", "floor": 1, "x": 0, "y": 0, "z": 2}]}
            """
        return try FloorMap.parse(Array(text.utf8)).get()
    }

    @Test("worse means a median or p90 above the map's by more than the tolerance, and says which")
    func worse() throws {
        let before = ErrorSummary([1, 1, 1, 1, 2])
        #expect(SpatialReport.worse(before: before, after: ErrorSummary([1, 1, 1, 1, 2]), tolerance: 0.02) == nil)
        let median = try #require(
            SpatialReport.worse(before: before, after: ErrorSummary([1.1, 1.1, 1.1, 1.1, 2]), tolerance: 0.02))
        #expect(median.contains("median error rises from 1.0 to 1.1 m"))
        let p90 = try #require(
            SpatialReport.worse(before: before, after: ErrorSummary([1, 1, 1, 1, 3]), tolerance: 0.02))
        #expect(p90.contains("p90"))
        #expect(SpatialReport.worse(before: nil, after: before, tolerance: 0.02) == nil)
    }

    @Test("a survey of the whole box is cut into about eight blocks; half of it is cut as finely")
    func blocks() throws {
        let whole = (0..<600).map {
            (floor: UInt16(1), point: Point(x: Double($0 % 30) * 0.4, y: Double($0 / 30) * 0.3))
        }
        let areas = SurveyAreas(map: try Self.map(), positions: whole, minimumSamples: 30)
        #expect(areas.kind == .blocks)
        #expect(areas.areas.count >= 4 && areas.areas.count <= 8)
        #expect(areas.areas.allSatisfy { $0.isChecked })
        #expect(areas.areas.reduce(0) { $0 + $1.samples } == whole.count)
        #expect(areas.index(floor: 1, point: Point(x: 0.1, y: 5.7)) == 0, "A1 is the north-west block")
        let half = whole.filter { $0.point.x < 6 }
        #expect(SurveyAreas(map: try Self.map(), positions: half, minimumSamples: 30).areas.count >= 4)
    }

    @Test("coverage is the share of the floor near surveyed places, and it sets how hard the priors pull")
    func coverage() throws {
        let west = (0..<60).map {
            (floor: UInt16(1), point: Point(x: 0.5 + Double($0 % 6), y: 0.5 + Double($0 / 6) * 0.5))
        }
        let share = SurveyCoverage(map: try Self.map(), positions: west).share(ofFloor: 1)
        #expect(share > 0.45 && share < 0.65, "\(share)")
        #expect(SurveyCoverage(map: try Self.map(), positions: west).share(ofFloor: 2) == 0)
        let settings = CalibrationSettings()
        #expect(settings.coverageFactor(0.9) == 1)
        #expect(settings.coverageFactor(0.4) < settings.coverageFactor(0.6))
        #expect(settings.coverageFactor(0.6) < 1)
        #expect(settings.coverageFactor(0) == settings.minimumCoverageFactor)
    }
}
