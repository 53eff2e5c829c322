import TestFixtures
import Testing
import WhereaboutsMapFile

@testable import WhereaboutsCore

/// Issue 45, item 4: the power prior of a tag the map names, and a tag whose readings its posterior cannot explain.
@Suite("The grid filter's power prior and lost tags", .ownThread)
struct GridFilterLostTests {
    /// Two rooms of 10 × 10 m side by side, three agents in each, no walls.
    static let mapText = """
        {
          "site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Two rooms"},
          "model": {"measured_power": -59, "path_loss_exponent": 2.0},
          "floors": [{"major": 1, "name": "Ground", "height": 0, "outline": [[0,0],[20,0],[20,10],[0,10]]}],
          "zones": [
            {"floor": 1, "minor": 1, "name": "West", "polygon": [[0,0],[10,0],[10,10],[0,10]]},
            {"floor": 1, "minor": 2, "name": "East", "polygon": [[10,0],[20,0],[20,10],[10,10]]}
          ],
          "agents": [
            {"id": "w1", "floor": 1, "x": 2, "y": 2, "z": 2.4}, {"id": "w2", "floor": 1, "x": 2, "y": 8, "z": 2.4},
            {"id": "w3", "floor": 1, "x": 8, "y": 5, "z": 2.4}, {"id": "e3", "floor": 1, "x": 12, "y": 5, "z": 2.4},
            {"id": "e1", "floor": 1, "x": 18, "y": 2, "z": 2.4}, {"id": "e2", "floor": 1, "x": 18, "y": 8, "z": 2.4}
          ]
        }
        """

    let map: FloorMap
    let grid: FloorGrid

    init() throws {
        map = try FloorMap.parse(Array(Self.mapText.utf8)).get()
        let floor = try #require(map.floor(major: 1))
        grid = FloorGrid(
            floor: floor, map: map, zones: map.zones(onFloor: 1), walls: [], obstacles: [], barriers: [],
            radio: RadioConstants(map: map), configuration: GridFilter.Configuration())
    }

    /// Every agent's reading of a tag at `point`, as loud as the path loss makes it (no noise).
    func observations(at point: Point) -> [GridFilter.Observation] {
        map.agents.indices.map { agent in
            let height = map.agents[agent].height - map.model.tagHeight
            let planar = map.agents[agent].position.distance(to: point)
            let distance = (planar * planar + height * height).squareRoot()
            return GridFilter.Observation(slot: grid.slotOfAgent[agent], level: -20 * logarithm10(max(distance, 1)))
        }
    }

    @Test("a tag whose power the map names keeps its power offset within that sigma; another learns it from 10 dB")
    func powerPrior() throws {
        var filter = GridFilter(configuration: GridFilter.Configuration())
        var named: GridPosterior?
        var unnamed: GridPosterior?
        let readings = observations(at: Point(x: 5, y: 5))
        _ = try #require(
            filter.update(
                &named, observations: readings, loudest: nil, powerSigma: 3, grids: [grid], gridIndex: 0, now: 0))
        _ = try #require(
            filter.update(&unnamed, observations: readings, loudest: nil, grids: [grid], gridIndex: 0, now: 0))
        let namedVariance = try #require(named?.offsetVariance)
        let unnamedVariance = try #require(unnamed?.offsetVariance)
        #expect(namedVariance <= 9)
        #expect(unnamedVariance > 9)
    }
}
