import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsMapFile

@Suite("Map free space: walls that block walking, doors, obstacles")
struct FreeSpaceTests {
    /// ``MapValidationTests/valid`` with a walled wall (a door in it) and an obstacle.
    static let wall = #"{"floor": 1, "from": [10, 0], "to": [10, 10], "loss": 4}"#
    static let walled =
        #"{"floor": 1, "from": [10, 0], "to": [10, 10], "loss": 4, "blocks_walking": true, "doors": [{"at": [10, 8], "width": 1}]}], "obstacles": [{"floor": 1, "name": "Desks", "polygon": [[3,3],[6,3],[6,5],[3,5]]}"#

    func problems(_ replacement: String) throws -> [String] {
        try MapValidationTests().problems(replacing: Self.wall, with: replacement).map(\.description)
    }

    @Test("a wall that blocks walking loads with its door as a gap, and an obstacle with its polygon")
    func loads() throws {
        let text = MapValidationTests.valid.replacingOccurrences(of: Self.wall, with: Self.walled)
        let map = try mapFromJSON(text).get()
        let wall = try #require(map.walls.first)
        #expect(wall.blocksWalking)
        #expect(wall.doors == [Door(centre: Point(x: 10, y: 8), width: 1)])
        // The barrier is the wall less the door: 0…7.5 and 8.5…10 along it.
        #expect(
            wall.barriers == [
                Segment(Point(x: 10, y: 0), Point(x: 10, y: 7.5)), Segment(Point(x: 10, y: 8.5), Point(x: 10, y: 10)),
            ])
        #expect(map.obstacles.map(\.floor) == [1])
        #expect(map.obstacles.first?.polygon.area == 6)
        // A wall that only attenuates blocks nobody.
        let plain = try mapFromJSON(MapValidationTests.valid).get()
        #expect(plain.walls.first?.barriers == [])
        #expect(plain.obstacles.isEmpty)
    }

    @Test(
        "a bad wall or obstacle names the field",
        arguments: [
            (
                #"{"floor": 1, "from": [10, 0], "to": [10, 10], "loss": 4, "blocks_walking": "yes"}"#,
                "$.walls[0].blocks_walking: must be true or false"
            ),
            (
                #"{"floor": 1, "from": [10, 0], "to": [10, 10], "loss": 4, "doors": [{"at": [10, 5], "width": 1}]}"#,
                "$.walls[0].doors: only a wall that blocks walking"
            ),
            (
                #"{"floor": 1, "from": [10, 0], "to": [10, 10], "loss": 4, "blocks_walking": true, "doors": [{"at": [11, 5], "width": 1}]}"#,
                "$.walls[0].doors[0].at: a door must be on its wall"
            ),
            (
                #"{"floor": 1, "from": [10, 0], "to": [10, 10], "loss": 4, "blocks_walking": true, "doors": [{"at": [10, 9.8], "width": 1}]}"#,
                "$.walls[0].doors[0]: the door"
            ),
            (
                #"{"floor": 1, "from": [10, 0], "to": [10, 10], "loss": 4, "blocks_walking": true, "doors": [{"at": [10, 5], "width": 0.1}]}"#,
                "$.walls[0].doors[0].width: must be between 0.3 and 20"
            ),
            (
                #"{"floor": 1, "from": [10, 0], "to": [10, 10], "loss": 4, "blocks_walking": true, "doors": [{"at": [10, 5], "width": 2}, {"at": [10, 6], "width": 1}]}"#,
                "$.walls[0].doors[1]: overlaps door 0"
            ),
            (
                #"{"floor": 1, "from": [10, 0], "to": [10, 10], "loss": 4, "blocks_walking": true, "doors": [{"at": [10, 5], "wide": 1}]}"#,
                "$.walls[0].doors[0]"
            ),
            (
                #"{"floor": 1, "from": [10, 0], "to": [10, 10], "loss": 4}], "obstacles": [{"floor": 1, "polygon": [[18,8],[25,8],[25,12],[18,12]]}"#,
                "$.obstacles[0].polygon: an obstacle must lie inside the outline of floor 1"
            ),
            (
                #"{"floor": 1, "from": [10, 0], "to": [10, 10], "loss": 4}], "obstacles": [{"floor": 7, "polygon": [[1,1],[2,1],[2,2]]}"#,
                "$.obstacles[0].floor"
            ),
            (
                #"{"floor": 1, "from": [10, 0], "to": [10, 10], "loss": 4}], "obstacles": [{"floor": 1, "polygon": [[1,1],[2,1]]}"#,
                "$.obstacles[0].polygon: a polygon needs at least 3 points"
            ),
        ])
    func badFreeSpace(replacement: String, expected: String) throws {
        let found = try problems(replacement)
        #expect(found.contains { $0.hasPrefix(expected) }, "expected \(expected), got \(found)")
    }
}
