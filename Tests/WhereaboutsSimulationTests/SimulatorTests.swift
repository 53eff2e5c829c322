import TestFixtures
import Testing
import WhereaboutsCore
import WhereaboutsWire

@testable import WhereaboutsSimulation

@Suite("Simulator", .ownThread)
struct SimulatorTests {
    static func shortRun(tags: Int = 3, duration: Double = 60) -> SimulationConfiguration {
        var configuration = SimulationConfiguration()
        configuration.tagCount = tags
        configuration.duration = duration
        return configuration
    }

    @Test("the same seed gives the same readings and truth; another seed does not")
    func determinism() throws {
        let map = try scenarioMap("two-floors")
        let first = try simulate(map: map, configuration: Self.shortRun(), seed: 11)
        let again = try simulate(map: map, configuration: Self.shortRun(), seed: 11)
        let other = try simulate(map: map, configuration: Self.shortRun(), seed: 12)
        #expect(first.readings == again.readings)
        #expect(first.truth == again.truth)
        #expect(first.readings != other.readings)
        #expect(first.truth != other.truth)
    }

    @Test("each window has one batch per agent, readings stamped with the window's end and aggregated")
    func batchShape() throws {
        let map = try scenarioMap("open-office")
        var configuration = Self.shortRun(tags: 4, duration: 10)
        configuration.startTime = 1000
        var simulator = try Simulator(map: map, configuration: configuration, seed: 3)
        var windows = 0
        var readings = 0
        while let window = simulator.nextWindow() {
            windows += 1
            #expect(window.end == 1000 + Double(windows))
            #expect(window.batches.map(\.agent.rawValue) == map.agents.map(\.id))
            #expect(window.truth.count == 4)
            for batch in window.batches {
                #expect(batch.windowEnd == window.end)
                #expect(Set(batch.readings.map(\.tag)).count == batch.readings.count, "one reading per tag")
                for reading in batch.readings {
                    readings += 1
                    #expect(reading.time == window.end)
                    #expect(reading.count >= 1 && reading.count <= 12, "10 adverts/s, some missed")
                    #expect(reading.rssi >= -100 && reading.rssi <= 0)
                    #expect(reading.power == -59)
                    #expect((reading.variance ?? 0) >= 0)
                    #expect((reading.variance == nil) == (reading.count == 1))
                }
            }
        }
        #expect(windows == 10)
        // Six agents close to four tags hear nearly every window.
        #expect(readings > 4 * 6 * 10 * 8 / 10)
    }

    @Test("tags stay on the map, and change floor only at the stairs")
    func walking() throws {
        let map = try scenarioMap("two-floors")
        var configuration = Self.shortRun(tags: 6, duration: 900)
        configuration.walker.floorChangeShare = 0.6
        var simulator = try Simulator(map: map, configuration: configuration, seed: 5)
        var previous: [TagIdentity: TruthRecord] = [:]
        var floorChanges = 0
        var zonesVisited: Set<ZoneKey> = []
        let stairs = try #require(map.stairs.first).position
        while let window = simulator.nextWindow() {
            for record in window.truth {
                let floor = try #require(map.floor(major: record.floor))
                let point = Point(x: record.x, y: record.y)
                #expect(floor.outline.contains(point))
                if let zone = map.zones(onFloor: record.floor).first(where: { $0.polygon.contains(point) }) {
                    zonesVisited.insert(zone.key)
                }
                if let before = previous[record.tag] {
                    #expect(point.distance(to: Point(x: before.x, y: before.y)) <= 1.41, "walking pace")
                    if before.floor != record.floor {
                        floorChanges += 1
                        #expect(point.distance(to: stairs) < 1e-6)
                    }
                }
                previous[record.tag] = record
            }
        }
        #expect(floorChanges >= 4)
        #expect(zonesVisited.count == map.zones.count)
    }

    @Test("a map without stairs keeps every tag on its floor")
    func noStairs() throws {
        var map = try scenarioMap("two-floors")
        map.stairs = []
        var simulator = try Simulator(map: map, configuration: Self.shortRun(tags: 6, duration: 600), seed: 9)
        var floors: [TagIdentity: UInt16] = [:]
        while let window = simulator.nextWindow() {
            for record in window.truth {
                #expect(floors[record.tag, default: record.floor] == record.floor)
                floors[record.tag] = record.floor
            }
        }
        #expect(floors.count == 6)
    }

    @Test("the channel: weaker with distance, through walls and through floors")
    func channel() throws {
        // Without shadowing, fading or misses, each agent's mean RSSI follows the map's model exactly.
        var configuration = Self.shortRun(tags: 1, duration: 30)
        configuration.channel.shadowingSigma = 0
        configuration.channel.ricianK = 1e9
        configuration.channel.advertLoss = 0
        configuration.channel.measuredPowerSpread = 0
        configuration.channel.sensitivity = -127
        configuration.walker.pause = 1000...1000
        configuration.walker.speed = 0.001...0.001
        for name in ["walled-rooms", "two-floors"] {
            let map = try scenarioMap(name)
            var simulator = try Simulator(map: map, configuration: configuration, seed: 21)
            let next = simulator.nextWindow()
            let window = try #require(next)
            let truth = try #require(window.truth.first)
            let tagPoint = Point(x: truth.x, y: truth.y)
            for batch in window.batches {
                let agent = map.agents[batch.agentIndex]
                let reading = try #require(batch.readings.first, "every agent hears a loud, lossless tag")
                let tagFloor = try #require(map.floor(major: truth.floor))
                let agentFloor = try #require(map.floor(major: agent.floor))
                let dz = (agentFloor.height + agent.height) - (tagFloor.height + map.model.tagHeight)
                let horizontal = tagPoint.distance(to: agent.position)
                let distance = (horizontal * horizontal + dz * dz).squareRoot()
                var expected = PathLossModel(measuredPower: -59, exponent: 2).expectedRSSI(atDistance: distance)
                let path = Segment(tagPoint, agent.position)
                for wall in map.walls where wall.segment.properlyIntersects(path) {
                    if wall.floor == truth.floor || wall.floor == agent.floor { expected -= wall.loss }
                }
                if agent.floor != truth.floor { expected -= configuration.channel.floorLoss }
                // Whole-dBm rounding and the tag's creep over the window allow about half a dB.
                #expect(abs(reading.rssi - expected) < 0.75, "\(name) \(agent.id): \(reading.rssi) vs \(expected)")
            }
        }
    }

    @Test("shadowing of one link drifts slowly: consecutive windows agree better than distant ones")
    func correlatedShadowing() throws {
        let map = try scenarioMap("open-office")
        var configuration = Self.shortRun(tags: 1, duration: 600)
        configuration.walker.pause = 10_000...10_000
        configuration.channel.ricianK = 1e9
        configuration.channel.measuredPowerSpread = 0
        var simulator = try Simulator(map: map, configuration: configuration, seed: 4)
        var series: [Double] = []
        // The tag walks to its first destination, then stands: use the last 400 s.
        while let window = simulator.nextWindow() {
            if window.end - configuration.startTime > 200, let reading = window.batches[0].readings.first {
                series.append(reading.rssi)
            }
        }
        #expect(series.count > 350)
        let mean = series.reduce(0, +) / Double(series.count)
        let variance = series.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(series.count)
        let lagOne = zip(series, series.dropFirst()).reduce(0) { $0 + ($1.0 - mean) * ($1.1 - mean) }
        let correlation = lagOne / Double(series.count - 1) / variance
        #expect(correlation > 0.9, "Gauss–Markov shadowing with a 120 s time constant")
    }

    @Test("out-of-range settings are refused with their name")
    func invalidSettings() throws {
        let map = try scenarioMap("open-office")
        var configuration = SimulationConfiguration()
        configuration.duration = -1
        #expect(throws: SimulationError.self) { try Simulator(map: map, configuration: configuration, seed: 1) }
        configuration = SimulationConfiguration()
        configuration.channel.advertLoss = 1
        #expect(throws: SimulationError.self) { try Simulator(map: map, configuration: configuration, seed: 1) }
        configuration = SimulationConfiguration()
        configuration.channel.shadowingSigma = .nan
        #expect(throws: SimulationError.self) { try Simulator(map: map, configuration: configuration, seed: 1) }
    }

    @Test("a simulated agent aggregates with the agent's code: IQR fences, whole dBm, tags in order, window's end")
    func aggregation() throws {
        let agent = try #require(AgentID("o-1"))
        var receiver = SimulatedReceiver(agent: agent, windowLength: 1, start: 4)
        let a = TagIdentity.address(1)
        let b = TagIdentity.address(2)
        for (index, rssi) in [-70, -71, -69, -70, -72, -68, -95].enumerated() {
            receiver.hear(tag: b, rssi: rssi, power: -61, at: 4 + Double(index) / 10)
        }
        receiver.hear(tag: a, rssi: -80, power: nil, at: 4.9)
        let batches = receiver.batches(until: 5)
        #expect(batches.map(\.windowEnd) == [5])
        let readings = try #require(batches.first).readings
        #expect(readings.map(\.tag) == [a, b], "in tag order, as the agent batches them")
        // -95 lies outside Tukey's fences [-74.5, -66.5]; the mean and variance are the inliers', the count all.
        #expect(readings[1].rssi == -70 && readings[1].variance == 2 && readings[1].count == 7)
        #expect(readings[1].power == -61)
        #expect(readings[0].rssi == -80 && readings[0].variance == nil && readings[0].count == 1)
        #expect(readings.allSatisfy { $0.time == 5 })
        let empty = receiver.batches(until: 6)
        #expect(empty.map(\.windowEnd) == [6] && empty.allSatisfy { $0.readings.isEmpty }, "an empty window closes")
    }
}

@Suite("Walkers and walls", .ownThread)
struct WalkerRouteTests {
    /// Walks `walkers` people for `duration` seconds in 0.05 s steps and counts the steps that cross a wall that
    /// blocks walking (less its doors, on the map as it is) or end inside an obstacle, and the zones visited.
    static func walk(
        _ map: FloorMap, barriersOf checked: FloorMap, walkers: Int = 4, duration: Double = 1200
    ) -> (crossings: Int, inObstacles: Int, zones: Set<ZoneKey>, turns: Int) {
        let area = WalkArea(map: map)
        let barriers = checked.walls.flatMap(\.barriers)
        var crossings = 0
        var inObstacles = 0
        var zones: Set<ZoneKey> = []
        var turns = 0
        for seed in 0..<UInt64(walkers) {
            var walker = TagWalker(area: area, configuration: WalkerConfiguration(), seed: seed)
            var heading: Point?
            for _ in 0..<Int(duration / 0.05) {
                let before = walker.position
                walker.advance(by: 0.05, area: area, configuration: WalkerConfiguration())
                let step = Segment(before, walker.position)
                if barriers.contains(where: { $0.properlyIntersects(step) }) { crossings += 1 }
                if checked.obstacles.contains(where: { $0.polygon.contains(walker.position) }) { inObstacles += 1 }
                if let zone = map.zones.first(where: { $0.polygon.contains(walker.position) }) {
                    zones.insert(zone.key)
                }
                let moved = walker.position - before
                let length = moved.dot(moved).squareRoot()
                if length > 1e-6 {
                    let direction = moved * (1 / length)
                    if let heading, heading.dot(direction) < 0.99 { turns += 1 }
                    heading = direction
                }
            }
        }
        return (crossings, inObstacles, zones, turns)
    }

    @Test("walkers leave a walled room only by its door and never stand in an obstacle")
    func throughDoors() throws {
        var map = try scenarioMap("walled-rooms")
        // A block of desks in room 5.
        map.obstacles = [
            Obstacle(
                floor: 1,
                polygon: Polygon([Point(x: 10, y: 9.5), Point(x: 14, y: 9.5), Point(x: 14, y: 12), Point(x: 10, y: 12)])
            )
        ]
        #expect(map.walls.allSatisfy { $0.blocksWalking })
        let routed = Self.walk(map, barriersOf: map)
        #expect(routed.crossings == 0)
        #expect(routed.inObstacles == 0)
        #expect(routed.zones.count == map.zones.count, "every room is reached, through its door")
        // The same people on the same map whose walls do not stop them walk straight through walls and desks.
        var open = map
        open.obstacles = []
        for index in open.walls.indices {
            open.walls[index].blocksWalking = false
            open.walls[index].doors = []
        }
        let straight = Self.walk(open, barriersOf: map)
        #expect(straight.crossings > 20)
        #expect(straight.inObstacles > 0)
        // Routes turn at doors: more turns than straight trips.
        #expect(routed.turns > straight.turns)
    }

    @Test("a route between two rooms leaves by one door and enters by the other; none reaches a closed room")
    func routeThroughDoors() throws {
        var map = try scenarioMap("walled-rooms")
        let area = WalkArea(map: map)
        let routes = try #require(area.routesByFloor[1])
        // Room 1 (0–8 × 0–6) to room 2 (8–16 × 0–6): the wall between them has no door, so out through room 1's
        // door (1 m, centred on (4, 6)), along the corridor, in through room 2's (centred on (12, 6)).
        let from = Point(x: 2, y: 3)
        let to = Point(x: 14, y: 3)
        let route = try #require(routes.route(from: from, to: to))
        #expect(route.last == to)
        func throughDoor(at x: Double) -> Bool {
            route.contains { abs($0.y - 6) < 1e-9 && abs($0.x - x) < 0.5 }
        }
        #expect(throughDoor(at: 4))
        #expect(throughDoor(at: 12))
        var length = 0.0
        var here = from
        for point in route {
            #expect(routes.isClear(from: here, to: point))
            length += here.distance(to: point)
            here = point
        }
        // No shorter than by the doors' nearest edges, (4.5, 6) and (11.5, 6), and not much longer.
        let shortest = from.distance(to: Point(x: 4.5, y: 6)) + 7 + Point(x: 11.5, y: 6).distance(to: to)
        #expect(length >= shortest - 1e-9)
        #expect(length < shortest + 1)
        // Within a room: straight there.
        #expect(routes.route(from: from, to: Point(x: 6, y: 2)) == [Point(x: 6, y: 2)])
        // Room 1 without its door: nothing reaches it.
        for index in map.walls.indices where map.walls[index].segment.start.y == 6 {
            map.walls[index].doors.removeAll { $0.centre.x == 4 }
        }
        let closed = try #require(WalkArea(map: map).routesByFloor[1])
        #expect(closed.route(from: to, to: from) == nil)
    }

    @Test("a destination no door reaches is never walked to")
    func closedRoom() throws {
        var map = try scenarioMap("walled-rooms")
        // Room 1 loses its door: nobody gets in, and a walker that starts there never leaves.
        for index in map.walls.indices where map.walls[index].segment.start.y == 6 {
            map.walls[index].doors.removeAll { $0.centre.x == 4 }
        }
        let area = WalkArea(map: map)
        let room1 = try #require(map.zones.first { $0.minor == 1 }).polygon
        var startedInside = 0
        for seed in 0..<UInt64(40) {
            var walker = TagWalker(area: area, configuration: WalkerConfiguration(), seed: seed)
            let inside = room1.contains(walker.position)
            if inside { startedInside += 1 }
            for _ in 0..<600 {
                walker.advance(by: 1, area: area, configuration: WalkerConfiguration())
                #expect(room1.contains(walker.position) == inside, "seed \(seed) crossed into or out of room 1")
            }
        }
        // Some walkers start in the closed room (a sixth of the floor's area), most do not.
        #expect(startedInside > 0 && startedInside < 40, "\(startedInside) of 40 started in room 1")
    }
}
