extension AccuracyPlan {
    /// Each zone's plan: the mean expected accuracy over its cells, and which other zones its cells' expected radii
    /// reach (a circle of the cell's accuracy around its centre that meets another zone's area: a fix there may be
    /// published in that zone).
    ///
    /// A zone's cells are those it covers most of (`zoneOfCell`); a zone too small to cover most of any cell takes
    /// the cells it covers second most of (`secondZoneOfCell`).
    static func zonePlans(
        _ zones: [Zone], zoneOfCell: [Int16], secondZoneOfCell: [Int16], free: [Bool], accuracy: [Double?],
        origin: Point, cellSize: Double, columns: Int
    ) -> [ZonePlan] {
        var cellsOfZone = [[Int]](repeating: [], count: zones.count)
        for index in zoneOfCell.indices where free[index] && zoneOfCell[index] >= 0 {
            cellsOfZone[Int(zoneOfCell[index])].append(index)
        }
        for zone in zones.indices where cellsOfZone[zone].isEmpty {
            cellsOfZone[zone] = secondZoneOfCell.indices.filter { free[$0] && Int(secondZoneOfCell[$0]) == zone }
        }
        return zones.indices.map { zone in
            let cells = cellsOfZone[zone]
            let heard = cells.compactMap { index in accuracy[index].map { (index, $0) } }
            let mean = heard.isEmpty ? nil : heard.reduce(0) { $0 + $1.1 } / Double(heard.count)
            var reached = [Int](repeating: 0, count: zones.count)
            var confused = 0
            for (index, radius) in heard {
                let centre = Point(
                    x: origin.x + (Double(index % columns) + 0.5) * cellSize,
                    y: origin.y + (Double(index / columns) + 0.5) * cellSize)
                var any = false
                for other in zones.indices where other != zone && reaches(zones[other].polygon, centre, radius) {
                    reached[other] += 1
                    any = true
                }
                if any { confused += 1 }
            }
            let share = { (count: Int) in heard.isEmpty ? 0 : Double(count) / Double(heard.count) }
            let confusions = zones.indices.filter { reached[$0] > 0 }
                .sorted { (reached[$0], -$0) > (reached[$1], -$1) }
                .map { Confusion(minor: zones[$0].minor, share: share(reached[$0])) }
            return ZonePlan(
                key: zones[zone].key, name: zones[zone].name, accuracy: mean, cells: cells.count,
                heardCells: heard.count, width: narrowestWidth(of: zones[zone].polygon),
                confusedShare: share(confused), confusedWith: confusions)
        }
    }

    /// Whether a circle of `radius` around `centre` meets `polygon`'s area.
    static func reaches(_ polygon: Polygon, _ centre: Point, _ radius: Double) -> Bool {
        let (low, high) = polygon.bounds
        // Beyond the box by the radius: cannot meet it (most zones of a floor, most of the time).
        guard centre.x >= low.x - radius, centre.x <= high.x + radius, centre.y >= low.y - radius,
            centre.y <= high.y + radius
        else { return false }
        return polygon.contains(centre) || polygon.distanceToBoundary(centre) < radius
    }

    /// A polygon's narrowest width: the smallest extent of its convex hull across the normal of one of the hull's
    /// edges (exactly the minimum width; a rectangle's shorter side, however it is turned). A hull of more than 256
    /// edges (a traced curve) is measured across 256 evenly turned directions instead, so the cost stays linear.
    static func narrowestWidth(of polygon: Polygon) -> Double {
        let hull = convexHull(polygon.vertices)
        guard hull.count >= 3 else { return 0 }
        var normals: [Point] = []
        if hull.count <= 256 {
            for index in hull.indices {
                let direction = hull[(index + 1) % hull.count] - hull[index]
                let length = direction.dot(direction).squareRoot()
                if length > 1e-9 { normals.append(Point(x: -direction.y / length, y: direction.x / length)) }
            }
        } else {
            normals = (0..<256).map { step in
                let angle = Double(step) * 3.141_592_653_589_793 / 256
                return Point(x: cosine(angle), y: cosine(angle - 1.570_796_326_794_896_6))
            }
        }
        var best = Double.infinity
        for normal in normals {
            var low = Double.infinity
            var high = -Double.infinity
            for vertex in hull {
                let along = vertex.dot(normal)
                low = min(low, along)
                high = max(high, along)
            }
            best = min(best, high - low)
        }
        return best.isFinite ? best : 0
    }

    /// The convex hull of `points`, counter-clockwise (Andrew's monotone chain); fewer than three points as given.
    static func convexHull(_ points: [Point]) -> [Point] {
        let sorted = points.filter(\.isFinite).sorted { ($0.x, $0.y) < ($1.x, $1.y) }
        guard sorted.count >= 3 else { return sorted }
        func chain(_ ordered: some Sequence<Point>) -> [Point] {
            var out: [Point] = []
            for point in ordered {
                while out.count >= 2, (out[out.count - 1] - out[out.count - 2]).cross(point - out[out.count - 2]) <= 0 {
                    out.removeLast()
                }
                out.append(point)
            }
            return out
        }
        let lower = chain(sorted)
        let upper = chain(sorted.reversed())
        return Array(lower.dropLast()) + Array(upper.dropLast())
    }
}
