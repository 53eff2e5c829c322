import WhereaboutsCore

/// Where people can walk on one floor, and the routes between two places there: around the walls that block
/// walking (through their doors and past their open ends) and around obstacles.
///
/// A route is the shortest chain of straight legs through turning points: the doors' centres, points just past a
/// wall's open end, and points just outside an obstacle's corners. A person in a walled room leaves it by a door,
/// as the grid tracker expects of them (docs/tracker.md, free space); walkers that cut through walls would be
/// scored against a motion the map says cannot happen.
///
/// Which turning points see each other is worked out once, for every pair: a floor of a few hundred doors takes
/// well under a second; the simulator is not meant for floors of thousands.
struct FloorRoutes: Sendable {
    /// How far past a wall's open end, or out from an obstacle's corner, a route turns (metres).
    static let clearance = 0.4
    /// Legs are checked against the outline and the obstacles at this spacing (metres).
    static let checkSpacing = 0.25

    let outline: Polygon
    let barriers: [Segment]
    let obstacles: [Polygon]
    /// Where a route may turn.
    let turns: [Point]
    /// Per pair of turning points, whether the straight leg between them is clear; row by row.
    private let turnLinks: [Bool]

    init(outline: Polygon, walls: [Wall], obstacles: [Polygon]) {
        self.outline = outline
        self.obstacles = obstacles
        let barriers = walls.flatMap(\.barriers)
        self.barriers = barriers
        var turns: [Point] = []
        for wall in walls where wall.blocksWalking {
            turns.append(contentsOf: wall.doors.map(\.centre))
        }
        // Just past each end of a barrier stretch: the open end of a partition, or the edge of a door. A point that
        // lands outside the floor, or on another wall, is harmless: no clear leg reaches it.
        for barrier in barriers {
            let length = barrier.start.distance(to: barrier.end)
            guard length > 0 else { continue }
            let direction = (barrier.end - barrier.start) * (1 / length)
            turns.append(barrier.start + direction * -Self.clearance)
            turns.append(barrier.end + direction * Self.clearance)
        }
        for obstacle in obstacles {
            let centre = obstacle.centroid
            for corner in obstacle.vertices {
                let away = corner - centre
                let length = (away.dot(away)).squareRoot()
                guard length > 0 else { continue }
                turns.append(corner + away * (Self.clearance * 1.5 / length))
            }
        }
        let free = turns.filter { Self.isFree($0, outline: outline, obstacles: obstacles) }
        self.turns = free
        var links = [Bool](repeating: false, count: free.count * free.count)
        for i in free.indices {
            for j in free.indices where j > i {
                let clear = Self.isClear(
                    from: free[i], to: free[j], outline: outline, barriers: barriers, obstacles: obstacles)
                links[i * free.count + j] = clear
                links[j * free.count + i] = clear
            }
        }
        turnLinks = links
    }

    /// Whether a person can stand at `point`: inside the outline and outside every obstacle.
    func isFree(_ point: Point) -> Bool {
        Self.isFree(point, outline: outline, obstacles: obstacles)
    }

    private static func isFree(_ point: Point, outline: Polygon, obstacles: [Polygon]) -> Bool {
        outline.contains(point) && !obstacles.contains { $0.contains(point) }
    }

    /// Whether the straight walk from `start` to `end` stays on the free floor and meets no barrier.
    func isClear(from start: Point, to end: Point) -> Bool {
        Self.isClear(from: start, to: end, outline: outline, barriers: barriers, obstacles: obstacles)
    }

    private static func isClear(
        from start: Point, to end: Point, outline: Polygon, barriers: [Segment], obstacles: [Polygon]
    ) -> Bool {
        let leg = Segment(start, end)
        if barriers.contains(where: { $0.intersects(leg) }) { return false }
        let steps = Int(start.distance(to: end) / checkSpacing) + 1
        for step in 0...steps {
            let point = start + (end - start) * (Double(step) / Double(steps))
            if !isFree(point, outline: outline, obstacles: obstacles) { return false }
        }
        return true
    }

    /// The points a walk from `start` to `end` goes through, `end` last and `start` left out: the shortest chain
    /// of clear legs through the turning points; nil when there is none.
    func route(from start: Point, to end: Point) -> [Point]? {
        if isClear(from: start, to: end) { return [end] }
        // Dijkstra over the turning points, the start and the end: the turning points are few (a floor's doors and
        // corners), so a plain scan for the nearest open node does.
        let count = turns.count
        let fromStart = turns.map { isClear(from: start, to: $0) }
        let toEnd = turns.map { isClear(from: $0, to: end) }
        var distance = [Double](repeating: .infinity, count: count)
        var previous = [Int](repeating: -1, count: count)
        var done = [Bool](repeating: false, count: count)
        for index in 0..<count where fromStart[index] { distance[index] = start.distance(to: turns[index]) }
        var best = Double.infinity
        var last = -1
        while true {
            var next = -1
            for index in 0..<count where !done[index] && distance[index] < .infinity {
                if next < 0 || distance[index] < distance[next] { next = index }
            }
            guard next >= 0, distance[next] < best else { break }
            done[next] = true
            if toEnd[next] {
                let total = distance[next] + turns[next].distance(to: end)
                if total < best {
                    best = total
                    last = next
                }
            }
            for other in 0..<count where !done[other] && turnLinks[next * count + other] {
                let through = distance[next] + turns[next].distance(to: turns[other])
                if through < distance[other] {
                    distance[other] = through
                    previous[other] = next
                }
            }
        }
        guard last >= 0 else { return nil }
        var points = [end]
        var node = last
        while node >= 0 {
            points.append(turns[node])
            node = previous[node]
        }
        return points.reversed()
    }
}
