import Testing
import WhereaboutsMapFile

@testable import WhereaboutsCore

@Suite("The grid's cell from the floor's free space")
struct GridResolutionTests {
    /// A 12 × 8 m room; `inside` is more of the map's JSON (obstacles, walls, zones), `model` more of its model.
    static func room(_ inside: String = "", model: String = "") throws -> FloorMap {
        let text = """
            {
              "site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Room"},
              "model": {"measured_power": -59, "path_loss_exponent": 2.0\(model)},
              "floors": [{"major": 1, "name": "Ground", "outline": [[0,0],[12,0],[12,8],[0,8]]}],
              "agents": [{"id": "a1", "floor": 1, "x": 1, "y": 1, "z": 2.4}, {"id": "a2", "floor": 1, "x": 11, "y": 7, "z": 2.4}]
              \(inside)
            }
            """
        return try FloorMap.parse(Array(text.utf8)).get()
    }

    /// Two rows of desks from x = 2 to 10 with an aisle `aisle` metres wide between them, centred on y = 4; the desks
    /// are 2 m or more from the walls.
    static func desks(aisle: Double, zones: String = "", model: String = "") throws -> FloorMap {
        let low = 4 - aisle / 2
        let high = 4 + aisle / 2
        return try room(
            """
            , "obstacles": [
                {"floor": 1, "polygon": [[2,2],[10,2],[10,\(low)],[2,\(low)]]},
                {"floor": 1, "polygon": [[2,\(high)],[10,\(high)],[10,6],[2,6]]}
              ]\(zones)
            """, model: model)
    }

    static func resolution(_ map: FloorMap, cellSize: Double? = nil) -> GridResolution {
        var configuration = GridFilter.Configuration()
        configuration.cellSize = cellSize
        return GridResolution(floor: map.floors[0], map: map, configuration: configuration)
    }

    @Test("a one-metre aisle between desks takes 0.5 m cells: two across it")
    func metreAisle() throws {
        let resolution = Self.resolution(try Self.desks(aisle: 1))
        #expect(resolution.cellSize == 0.5)
        #expect(resolution.source == .freeSpace)
        let width = try #require(resolution.passageWidth)
        #expect(abs(width - 1) <= FreeSpaceRaster.finestPixel, "aisle measured \(width) m")
        let centre = try #require(resolution.passageCentre)
        #expect(abs(centre.y - 4) < 0.1 && centre.x > 2 && centre.x < 10, "passage at \(centre)")
    }

    @Test("aisles of 0.6, 1.5 and 2 m take 0.25, 0.75 and 1 m cells", arguments: [(0.6, 0.25), (1.5, 0.75), (2, 1)])
    func aisles(aisle: Double, cell: Double) throws {
        let resolution = Self.resolution(try Self.desks(aisle: aisle))
        #expect(resolution.cellSize == cell, "aisle \(aisle) m: passage \(String(describing: resolution.passageWidth))")
    }

    @Test("an open floor takes 1 m cells; its narrowest passage is its own width")
    func openFloor() throws {
        let resolution = Self.resolution(try Self.room())
        #expect(resolution.cellSize == 1)
        #expect(resolution.source == .freeSpace)
        let width = try #require(resolution.passageWidth)
        #expect(abs(width - 8) <= FreeSpaceRaster.finestPixel, "room measured \(width) m across")
    }

    @Test("a room's corners and a gap narrower than a person are not passages")
    func cornersAndSlivers() throws {
        // An L-shaped floor, and a pillar 0.3 m from the south wall: still 1 m cells.
        let text = """
            {
              "site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "L"},
              "model": {"measured_power": -59, "path_loss_exponent": 2.0},
              "floors": [{"major": 1, "name": "Ground", "outline": [[0,0],[12,0],[12,4],[4,4],[4,12],[0,12]]}],
              "agents": [{"id": "a1", "floor": 1, "x": 1, "y": 1, "z": 2.4}],
              "obstacles": [{"floor": 1, "polygon": [[6,0.3],[7,0.3],[7,1.3],[6,1.3]]}]
            }
            """
        let map = try FloorMap.parse(Array(text.utf8)).get()
        let resolution = Self.resolution(map)
        #expect(resolution.cellSize == 1)
        let width = try #require(resolution.passageWidth)
        #expect(width >= 2.6, "narrowest \(width) m")  // The pillar's 2.7 m to the north wall.
    }

    @Test("a door in a wall that blocks walking is a passage: 1 m takes 0.5 m cells, 2 m takes 1 m")
    func doors() throws {
        for (door, cell) in [(1.0, 0.5), (2.0, 1.0)] {
            let map = try Self.room(
                """
                , "walls": [{"floor": 1, "from": [6, 0], "to": [6, 8], "loss": 3, "blocks_walking": true,
                             "doors": [{"at": [6, 4], "width": \(door)}]}]
                """)
            let resolution = Self.resolution(map)
            #expect(resolution.cellSize == cell, "door \(door) m: \(String(describing: resolution.passageWidth))")
            let centre = try #require(resolution.passageCentre)
            #expect(abs(centre.x - 6) < 0.1 && abs(centre.y - 4) < 0.1, "passage at \(centre)")
        }
        // The same wall, when people walk through it: only the room's width counts.
        let open = try Self.room(#", "walls": [{"floor": 1, "from": [6, 0], "to": [6, 8], "loss": 3}]"#)
        #expect(Self.resolution(open).cellSize == 1)
    }

    @Test("the map's cell_size wins over the free space, and a configured cell over both")
    func precedence() throws {
        let map = try Self.desks(aisle: 1, model: #", "cell_size": 0.75"#)
        let mapped = Self.resolution(map)
        #expect(mapped.cellSize == 0.75)
        #expect(mapped.source == .map)
        #expect(mapped.passageWidth == nil, "measured although the map sets the cell")
        let configured = Self.resolution(map, cellSize: 0.4)
        #expect(configured.cellSize == 0.4)
        #expect(configured.source == .configuration)
        // Asked to measure (map check does), it reports the aisle but keeps the map's cell.
        let reported = GridResolution(floor: map.floors[0], map: map, measuring: true)
        #expect(reported.cellSize == 0.75)
        #expect(abs((reported.passageWidth ?? 0) - 1) <= FreeSpaceRaster.finestPixel)
    }

    @Test("zones do not change the cell: none, one over the floor, or many small ones")
    func zonesDoNotCount() throws {
        let one = #", "zones": [{"floor": 1, "minor": 1, "name": "All", "polygon": [[0,0],[12,0],[12,8],[0,8]]}]"#
        let small = (0..<12).map { index in
            let x = Double(index)
            return
                #"{"floor": 1, "minor": \#(index + 1), "name": "Z\#(index)", "polygon": [[\#(x),0],[\#(x + 1),0],[\#(x + 1),1],[\#(x),1]]}"#
        }
        let many = ", \"zones\": [" + small.joined(separator: ", ") + "]"
        for aisle in [1.0, 2.0] {
            let cells = try ["", one, many].map { zones in
                Self.resolution(try Self.desks(aisle: aisle, zones: zones)).cellSize
            }
            #expect(Set(cells).count == 1, "aisle \(aisle) m: \(cells)")
        }
    }

    @Test("the engine's grid uses the chosen cell, and the budget still coarsens a huge floor")
    func engineAndBudget() throws {
        let map = try Self.desks(aisle: 1)
        let grid = FloorGrid(
            floor: map.floors[0], map: map, zones: [], walls: [], obstacles: map.obstacles.map(\.polygon),
            barriers: [], radio: RadioConstants(map: map), configuration: GridFilter.Configuration())
        #expect(grid.cellSize == 0.5)
        #expect(grid.resolution == Self.resolution(map))
        // A floor 20 km across cannot take 1 m cells: the budget coarsens what the free space asked for.
        let preferred = GridResolution.cellSize(forPassage: nil)
        #expect(preferred == 1)
        #expect(FloorGrid.cellSize(preferred, width: 20_000, height: 20_000) > 1)
    }

    @Test(
        "the rule's steps: half the passage, down to 0.25 m steps, from 0.25 to 1 m",
        arguments: [
            (nil, 1.0), (0.5, 0.25), (0.95, 0.5), (1.0, 0.5), (1.45, 0.75), (1.5, 0.75), (1.95, 1.0), (5.0, 1.0),
        ] as [(Double?, Double)])
    func steps(width: Double?, cell: Double) {
        #expect(GridResolution.cellSize(forPassage: width) == cell)
    }
}
