import Testing
import WhereaboutsMapFile

@testable import WhereaboutsCore

/// Issue 46, item 3: the accuracy to expect from a map, on named geometries.
@Suite("The accuracy plan of a floor")
struct AccuracyPlanTests {
    /// A 20 × 20 m room with `agents` (JSON objects) and `extras` appended to the map's members.
    static func square(agents: String, _ extras: String = "") throws -> FloorMap {
        let text = """
            {
              "site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Square"},
              "model": {"measured_power": -59, "path_loss_exponent": 2.0},
              "floors": [{"major": 1, "name": "Ground", "height": 0, "outline": [[0,0],[20,0],[20,20],[0,20]]}],
              "agents": [\(agents)]\(extras)
            }
            """
        return try FloorMap.parse(Array(text.utf8)).get()
    }

    static let corners = """
        {"id": "sw", "floor": 1, "x": 1, "y": 1, "z": 2.4}, {"id": "se", "floor": 1, "x": 19, "y": 1, "z": 2.4},
        {"id": "nw", "floor": 1, "x": 1, "y": 19, "z": 2.4}, {"id": "ne", "floor": 1, "x": 19, "y": 19, "z": 2.4}
        """

    @Test("four agents at a square's corners: best near the middle, worse toward the edges, symmetric")
    func corners() throws {
        let plan = try #require(AccuracyPlan(map: try Self.square(agents: Self.corners), floor: 1))
        #expect(plan.cellSize == 0.5 && plan.columns == 40 && plan.rows == 40)
        #expect(plan.freeCells == 1600)
        #expect(plan.sparseShare == 0, "every agent hears the whole room")
        let centre = try #require(plan.accuracy(at: Point(x: 10.25, y: 10.25)))
        let edge = try #require(plan.accuracy(at: Point(x: 10.25, y: 0.25)))
        let corner = try #require(plan.accuracy(at: Point(x: 0.25, y: 19.75)))
        #expect(centre < edge && centre < corner, "centre \(centre), edge \(edge), corner \(corner)")
        // The best cell lies near the middle.
        let best = try #require(
            plan.accuracy.indices.filter { plan.accuracy[$0] != nil }.min {
                (plan.accuracy[$0] ?? 0) < (plan.accuracy[$1] ?? 0)
            })
        let bestCentre = plan.centre(column: best % plan.columns, row: best / plan.columns)
        #expect(bestCentre.distance(to: Point(x: 10, y: 10)) <= 4, "best at \(bestCentre)")
        // Mirror images of a cell expect the same.
        let mirrored = try #require(plan.accuracy(at: Point(x: 19.75, y: 19.75)))
        #expect(abs(mirrored - (plan.accuracy(at: Point(x: 0.25, y: 0.25)) ?? 0)) < 1e-9)
        // Sane magnitudes: a few metres, as the locator publishes in such a room.
        #expect(centre > 0.5 && centre < 5, "centre \(centre)")
        #expect((plan.quantile(0.9) ?? 0) >= (plan.quantile(0.5) ?? 1))
    }

    @Test("a single agent gives a capped, finite accuracy everywhere, worse than four agents")
    func singleAgent() throws {
        let map = try Self.square(agents: #"{"id": "a", "floor": 1, "x": 10, "y": 10, "z": 2.4}"#)
        let plan = try #require(AccuracyPlan(map: map, floor: 1))
        let values = plan.accuracy.compactMap { $0 }
        #expect(values.count == 1600, "the one agent hears every cell of the room")
        let diagonal = (2.0 * 400).squareRoot()
        #expect(values.allSatisfy { $0.isFinite && $0 > 0 && $0 <= diagonal + 1e-9 })
        #expect(plan.sparseShare == 1)
        let four = try #require(AccuracyPlan(map: try Self.square(agents: Self.corners), floor: 1))
        #expect((plan.quantile(0.5) ?? 0) > (four.quantile(0.5) ?? .infinity))
    }

    @Test("a map's accuracy scale multiplies the plan as it multiplies what the locator publishes")
    func accuracyScale() throws {
        let plain = try Self.square(agents: Self.corners)
        var scaled = plain
        scaled.model.accuracyScale = 0.8
        let before = try #require(AccuracyPlan(map: plain, floor: 1))
        let after = try #require(AccuracyPlan(map: scaled, floor: 1))
        #expect(before.accuracy.count == after.accuracy.count && before.accuracy.count == 1600)
        for (unscaled, scaledValue) in zip(before.accuracy, after.accuracy) {
            let unscaled = try #require(unscaled)
            let scaledValue = try #require(scaledValue)
            #expect(abs(scaledValue - 0.8 * unscaled) < 1e-9, "\(scaledValue) against 0.8 × \(unscaled)")
        }
    }

    @Test("a wall that takes an agent out of hearing raises the expected error behind it")
    func wall() throws {
        // 25 dB across the north-east corner: from the rest of the room its agent is heard at −104 dBm or less.
        let wall = #", "walls": [{"floor": 1, "from": [14, 20], "to": [20, 14], "loss": 25}]"#
        let open = try #require(AccuracyPlan(map: try Self.square(agents: Self.corners), floor: 1))
        let walled = try #require(AccuracyPlan(map: try Self.square(agents: Self.corners, wall), floor: 1))
        let behind = Point(x: 4.25, y: 4.25)
        let before = try #require(open.accuracy(at: behind))
        let after = try #require(walled.accuracy(at: behind))
        #expect(after > before, "behind the wall: \(before) m without it, \(after) m with it")
        #expect(walled.agentsHeard[walled.columns * 8 + 8] == 3 && open.agentsHeard[open.columns * 8 + 8] == 4)
        // A light wall that leaves every agent heard changes nothing: in dB a constant loss does not change how fast
        // the level changes with position, which is what the bound counts (the tracker models the loss exactly).
        let light = #", "walls": [{"floor": 1, "from": [14, 20], "to": [20, 14], "loss": 3}]"#
        let lightly = try #require(AccuracyPlan(map: try Self.square(agents: Self.corners, light), floor: 1))
        #expect(lightly.accuracy == open.accuracy)
    }

    @Test("a floor with no agents has no accuracy anywhere and says so, without failing")
    func noAgents() throws {
        let map = try Self.square(
            agents: "", #", "zones": [{"floor": 1, "minor": 1, "name": "Room", "polygon": [[2,2],[8,2],[8,8],[2,8]]}]"#)
        let plan = try #require(AccuracyPlan(map: map, floor: 1))
        #expect(plan.freeCells == 1600)
        #expect(plan.accuracy.allSatisfy { $0 == nil })
        #expect(plan.quantile(0.5) == nil)
        #expect(plan.sparseShare == 1)
        let zone = try #require(plan.zones.first)
        #expect(zone.accuracy == nil && zone.heardCells == 0 && zone.cells == 144 && zone.confusedShare == 0)
        #expect(AccuracyPlan(map: map, floor: 2) == nil, "no such floor")
    }

    @Test("zones: the mean over their cells, their narrowest width, and the zones their radii reach")
    func zones() throws {
        // A 2 m wide strip along the west wall and the rest of the room beside it; a far corner room apart.
        let zones = """
            , "zones": [
              {"floor": 1, "minor": 1, "name": "Strip", "polygon": [[0,0],[2,0],[2,20],[0,20]]},
              {"floor": 1, "minor": 2, "name": "Hall", "polygon": [[2,0],[14,0],[14,20],[2,20]]},
              {"floor": 1, "minor": 3, "name": "Corner", "polygon": [[17,17],[20,17],[20,20],[17,20]]}
            ]
            """
        let plan = try #require(AccuracyPlan(map: try Self.square(agents: Self.corners, zones), floor: 1))
        let strip = plan.zones[0]
        let hall = plan.zones[1]
        #expect(strip.cells == 160 && hall.cells == 960)
        #expect(abs(strip.width - 2) < 1e-9 && abs(hall.width - 12) < 1e-9)
        // Every strip cell's radius (metres) reaches the hall, 0–2 m away; none reaches the corner room.
        #expect(strip.confusedShare == 1)
        #expect(strip.confusedWith.map(\.minor) == [2])
        let mean = (0..<plan.rows).flatMap { row in (0..<4).compactMap { plan.accuracy[row * plan.columns + $0] } }
        #expect(abs((strip.accuracy ?? 0) - mean.reduce(0, +) / Double(mean.count)) < 1e-9)
        // The hall's cells by the strip reach it; its middle does not; the corner room is reached least of all.
        #expect(hall.confusedShare > 0 && hall.confusedShare < 1)
        #expect(hall.confusedWith.first?.minor == 1)
        #expect(abs(plan.zones[2].width - 3) < 1e-9)
        #expect(!plan.zones[2].confusedWith.map(\.minor).contains(1), "the strip is 15 m from the corner room")
    }

    @Test("a rotated rectangle's narrowest width is its shorter side")
    func narrowestWidth() {
        let angle = 0.5
        let (c, s) = (cosine(angle), cosine(angle - 1.570_796_326_794_896_6))
        let corners = [(0.0, 0.0), (6, 0), (6, 2), (0, 2)].map { Point(x: $0 * c - $1 * s, y: $0 * s + $1 * c) }
        #expect(abs(AccuracyPlan.narrowestWidth(of: Polygon(corners)) - 2) < 1e-9)
        // An L: its hull's narrowest width (across the cut from (4, 1) to (1, 4)), not an arm's.
        let ell = Polygon([(0, 0), (4, 0), (4, 1), (1, 1), (1, 4), (0, 4)].map { Point(x: $0, y: $1) })
        #expect(abs(AccuracyPlan.narrowestWidth(of: ell) - 5 / 2.0.squareRoot()) < 1e-9)
    }

    @Test("a large floor gets coarser planning cells so its cost stays bounded")
    func coarseOnLargeFloors() {
        let configuration = AccuracyPlan.Configuration()
        #expect(AccuracyPlan.cellSize(width: 20, height: 20, agents: 4, configuration: configuration) == 0.5)
        let large = AccuracyPlan.cellSize(width: 400, height: 300, agents: 200, configuration: configuration)
        #expect(large > 0.5)
        #expect((400 / large).rounded(.up) * (300 / large).rounded(.up) <= Double(configuration.maximumCells))
    }

    @Test("a path tested against its direction's walls loses what it loses against every wall (seeded)")
    func wallSectors() {
        var random = SplitMix64(seed: 46)
        func uniform(_ range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &random) }
        for _ in 0..<20 {
            let agent = Point(x: uniform(0...20), y: uniform(0...20))
            var walls = (0..<30).map { _ in
                Wall(
                    floor: 1,
                    segment: Segment(
                        Point(x: uniform(0...20), y: uniform(0...20)), Point(x: uniform(0...20), y: uniform(0...20))),
                    loss: uniform(1...10))
            }
            // A wall through the agent, and one along a line through it.
            walls.append(
                Wall(floor: 1, segment: Segment(agent - Point(x: 3, y: 1), agent + Point(x: 3, y: 1)), loss: 7))
            walls.append(
                Wall(floor: 1, segment: Segment(agent + Point(x: 1, y: 1), agent + Point(x: 4, y: 4)), loss: 5))
            let sectors = WallSectors(walls: walls, around: agent)
            for _ in 0..<200 {
                let point = Point(x: uniform(-5...25), y: uniform(-5...25))
                let all = pathGain(from: agent, heightAboveTag: 1.2, exponent: 2, walls: walls, to: point)
                let sector = pathGain(
                    from: agent, heightAboveTag: 1.2, exponent: 2, walls: sectors.walls(toward: point), to: point)
                #expect(all == sector, "from \(agent) to \(point)")
            }
        }
    }
}
