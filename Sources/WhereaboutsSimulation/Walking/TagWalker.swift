public import WhereaboutsCore

/// How simulated people move.
public struct WalkerConfiguration: Sendable, Hashable {
    /// Walking speeds in m/s; each leg picks one.
    public var speed: ClosedRange<Double> = 0.7...1.4
    /// Pauses at a destination, in seconds.
    public var pause: ClosedRange<Double> = 5...60
    /// Time to climb or descend one flight of stairs, in seconds.
    public var stairsTime: Double = 12
    /// Share of trips that go to another floor, when stairs lead there.
    public var floorChangeShare: Double = 0.3
    /// Share of trips to a point anywhere on the floor rather than inside a zone.
    public var anywhereShare: Double = 0.15
    /// Destinations in zones keep at least this far (metres) from the zone's boundary.
    public var zoneInset: Double = 0.75

    public init() {}
}

/// Where people can go on a map: floors, their zones, the stairs between them, and what stops people on each floor.
struct WalkArea: Sendable {
    let map: FloorMap
    let zonesByFloor: [UInt16: [Zone]]
    /// Per floor with walls that block walking or obstacles, its routes; a floor without either has none.
    let routesByFloor: [UInt16: FloorRoutes]

    init(map: FloorMap) {
        self.map = map
        zonesByFloor = Dictionary(grouping: map.zones, by: \.floor)
        var routes: [UInt16: FloorRoutes] = [:]
        for floor in map.floors {
            let walls = map.walls.filter { $0.floor == floor.major && $0.blocksWalking }
            let obstacles = map.obstacles.filter { $0.floor == floor.major }.map(\.polygon)
            guard !walls.isEmpty || !obstacles.isEmpty else { continue }
            routes[floor.major] = FloorRoutes(outline: floor.outline, walls: walls, obstacles: obstacles)
        }
        routesByFloor = routes
    }

    /// A random point inside `polygon`, at least `inset` from its boundary where possible.
    func randomPoint(in polygon: Polygon, inset: Double, using generator: inout some RandomNumberGenerator) -> Point {
        let (low, high) = polygon.bounds
        for _ in 0..<64 {
            let point = Point(
                x: Double.random(in: low.x...high.x, using: &generator),
                y: Double.random(in: low.y...high.y, using: &generator)
            )
            if polygon.contains(point), polygon.distanceToBoundary(point) >= inset { return point }
        }
        return polygon.clamped(polygon.centroid)
    }

    /// Whether the straight walk from `start` to `end` stays on the floor (checked at half-metre steps).
    func isWalkable(from start: Point, to end: Point, on outline: Polygon) -> Bool {
        let steps = Int(start.distance(to: end) / 0.5) + 1
        for step in 0...steps {
            let fraction = Double(step) / Double(steps)
            if !outline.contains(start + (end - start) * fraction) { return false }
        }
        return true
    }
}

/// One simulated person carrying a tag: random trips between zones, pauses, and floor changes by the stairs.
///
/// The walk is a function of the seed alone: each walker owns its generator.
public struct TagWalker: Sendable {
    private enum Step: Sendable {
        case walk(to: Point, speed: Double)
        case pause(Double)
        case climb(to: UInt16, duration: Double)
    }

    /// Where the tag is.
    public private(set) var position: Point
    /// The floor it is on (during a climb, the nearer one).
    public private(set) var floor: UInt16
    private var steps: [Step] = []
    private var stepIndex = 0
    private var stepElapsed = 0.0
    private var generator: SplitMix64

    /// Places a walker at a random spot of a random floor.
    init(area: WalkArea, configuration: WalkerConfiguration, seed: UInt64) {
        generator = SplitMix64(seed: seed)
        if let floor = area.map.floors.randomElement(using: &generator) {
            self.floor = floor.major
            position = area.randomPoint(in: floor.outline, inset: 0.5, using: &generator)
            // Not inside an obstacle.
            if let routes = area.routesByFloor[floor.major] {
                for _ in 0..<64 where !routes.isFree(position) {
                    position = area.randomPoint(in: floor.outline, inset: 0.5, using: &generator)
                }
            }
        } else {
            floor = 0
            position = Point(x: 0, y: 0)
        }
        plan(area: area, configuration: configuration)
    }

    /// Places a walker at a random spot of a random floor that stands there until ``steer(to:floor:area:configuration:)``
    /// sends it somewhere (a surveyor's tag, walked to the points a test or an operator names).
    init(standingIn area: WalkArea, configuration: WalkerConfiguration, seed: UInt64) {
        self.init(area: area, configuration: configuration, seed: seed)
        steps = [.pause(.infinity)]
        stepIndex = 0
        stepElapsed = 0
    }

    /// Sends the walker from where it is to `point` on `floor` at a walking speed, around the floor's walls and
    /// obstacles where it has some (by the stairs when the floor changes), to stand there until steered again.
    ///
    /// Returns false, and leaves the walker where it is, when `floor` is not on the map or no stairs lead there.
    mutating func steer(to point: Point, floor target: UInt16, area: WalkArea, configuration: WalkerConfiguration)
        -> Bool
    {
        guard area.map.floor(major: target) != nil else { return false }
        var legs: [Step] = []
        var here = position
        let speed = randomSpeed(configuration)
        if target != floor {
            guard let flight = area.map.stairs.first(where: { $0.floors.contains(floor) && $0.floors.contains(target) })
            else { return false }
            let route = area.routesByFloor[floor]?.route(from: here, to: flight.position) ?? [flight.position]
            legs += route.map { .walk(to: $0, speed: speed) }
            legs.append(.climb(to: target, duration: configuration.stairsTime))
            here = flight.position
        }
        // A point no route reaches (inside an obstacle, a room without a door) is walked to straight.
        let route = area.routesByFloor[target]?.route(from: here, to: point) ?? [point]
        legs += route.map { .walk(to: $0, speed: speed) }
        steps = legs + [.pause(.infinity)]
        stepIndex = 0
        stepElapsed = 0
        return true
    }

    /// Moves the walker on by `elapsed` seconds.
    mutating func advance(by elapsed: Double, area: WalkArea, configuration: WalkerConfiguration) {
        var remaining = elapsed
        while remaining > 1e-12 {
            if stepIndex >= steps.count { plan(area: area, configuration: configuration) }
            switch steps[stepIndex] {
            case .walk(let target, let speed):
                let distance = position.distance(to: target)
                let reach = speed * remaining
                if reach >= distance {
                    position = target
                    remaining -= distance / speed
                    nextStep()
                } else {
                    position = position + (target - position) * (reach / distance)
                    remaining = 0
                }
            case .pause(let duration):
                let used = max(min(remaining, duration - stepElapsed), 0)
                stepElapsed += used
                remaining -= used
                if stepElapsed >= duration - 1e-12 { nextStep() }
            case .climb(let target, let duration):
                let used = max(min(remaining, duration - stepElapsed), 0)
                stepElapsed += used
                remaining -= used
                // Halfway up, the tag is nearer the other floor.
                if stepElapsed >= duration / 2 { floor = target }
                if stepElapsed >= duration - 1e-12 {
                    floor = target
                    nextStep()
                }
            }
        }
    }

    private mutating func nextStep() {
        stepIndex += 1
        stepElapsed = 0
    }

    /// Plans the next trip: perhaps to another floor by the stairs, then to a point in a zone, then a pause.
    private mutating func plan(area: WalkArea, configuration: WalkerConfiguration) {
        steps.removeAll(keepingCapacity: true)
        stepIndex = 0
        stepElapsed = 0
        var here = position
        var destinationFloor = floor
        let stairs = area.map.stairs.filter { $0.floors.contains(floor) }
        if !stairs.isEmpty, Double.random(in: 0..<1, using: &generator) < configuration.floorChangeShare {
            if let flight = stairs.randomElement(using: &generator),
                let other = flight.floors.filter({ $0 != floor }).randomElement(using: &generator)
            {
                let speed = randomSpeed(configuration)
                // Around the floor's walls when it has some; straight on where no route is found.
                let route = area.routesByFloor[floor]?.route(from: here, to: flight.position) ?? [flight.position]
                for point in route { steps.append(.walk(to: point, speed: speed)) }
                steps.append(.climb(to: other, duration: configuration.stairsTime))
                destinationFloor = other
                here = flight.position
            }
        }
        guard let outline = area.map.floor(major: destinationFloor)?.outline else {
            steps.append(.pause(1))
            return
        }
        if let routes = area.routesByFloor[destinationFloor] {
            // Walls and obstacles: a destination a person can stand at and reach, through doors; none in 20 tries
            // (a room without a door) leaves the walker where it is.
            var route: [Point] = []
            for _ in 0..<20 {
                let destination = randomDestination(
                    area: area, floor: destinationFloor, outline: outline, configuration)
                if routes.isFree(destination), let found = routes.route(from: here, to: destination) {
                    route = found
                    break
                }
            }
            let speed = randomSpeed(configuration)
            for point in route { steps.append(.walk(to: point, speed: speed)) }
        } else {
            var destination = here
            for attempt in 0..<20 {
                destination = randomDestination(area: area, floor: destinationFloor, outline: outline, configuration)
                // Prefer destinations reachable in a straight line; accept anything after a few tries.
                if attempt >= 19 || area.isWalkable(from: here, to: destination, on: outline) { break }
            }
            steps.append(.walk(to: destination, speed: randomSpeed(configuration)))
        }
        let pause = max(Double.random(in: configuration.pause, using: &generator), 0.1)
        steps.append(.pause(pause))
    }

    private mutating func randomDestination(
        area: WalkArea,
        floor: UInt16,
        outline: Polygon,
        _ configuration: WalkerConfiguration
    ) -> Point {
        let zones = area.zonesByFloor[floor] ?? []
        guard Double.random(in: 0..<1, using: &generator) >= configuration.anywhereShare,
            let zone = zones.randomElement(using: &generator)
        else {
            return area.randomPoint(in: outline, inset: 0.3, using: &generator)
        }
        return area.randomPoint(in: zone.polygon, inset: configuration.zoneInset, using: &generator)
    }

    private mutating func randomSpeed(_ configuration: WalkerConfiguration) -> Double {
        max(Double.random(in: configuration.speed, using: &generator), 0.05)
    }
}
