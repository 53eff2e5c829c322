extension FloorGrid {
    /// Per cell of a floor: whether it is free, and the zone (and second zone) its area lies in, with their shares.
    struct Cells {
        var free: [Bool]
        var zoneOfCell: [Int16]
        var zoneShareOfCell: [Float]
        var secondZoneOfCell: [Int16]
        var secondZoneShareOfCell: [Float]
    }

    /// The cells of a floor of `columns` × `rows` cells of side `cellSize` from `origin`: a cell is free when its
    /// centre is inside `outline` and in no obstacle; its zones are those of `zones` that hold its area (a cell
    /// whose centre and near-corners agree lies in one zone, or none; another is sampled at 16 points). A floor too
    /// small or too thin for any cell centre to fall inside has every cell free, so that it still works.
    static func cells(
        outline: Polygon, zones floorZones: [Zone], obstacles: [Polygon], origin low: Point, cellSize: Double,
        columns: Int, rows: Int
    ) -> Cells {
        let count = columns * rows
        var cells = Cells(
            free: [Bool](repeating: false, count: count), zoneOfCell: [Int16](repeating: -1, count: count),
            zoneShareOfCell: [Float](repeating: 0, count: count),
            secondZoneOfCell: [Int16](repeating: -1, count: count),
            secondZoneShareOfCell: [Float](repeating: 0, count: count))
        // The zones that reach a row's band, in the map's order (the first that holds a point is its zone): a large
        // floor's cells are many, and so may its zones be.
        var rowZones: [Int] = []
        func zone(at point: Point) -> Int {
            for index in rowZones where floorZones[index].polygon.contains(point) { return index }
            return -1
        }
        for row in 0..<rows {
            let bandLow = low.y + Double(row) * cellSize - 1e-9
            let bandHigh = bandLow + cellSize + 2e-9
            rowZones = floorZones.indices.filter {
                let (minimum, maximum) = floorZones[$0].polygon.bounds
                return maximum.y >= bandLow && minimum.y <= bandHigh
            }
            for column in 0..<columns {
                let corner = Point(x: low.x + Double(column) * cellSize, y: low.y + Double(row) * cellSize)
                let centre = Point(x: corner.x + 0.5 * cellSize, y: corner.y + 0.5 * cellSize)
                let index = row * columns + column
                cells.free[index] = outline.contains(centre) && !obstacles.contains { $0.contains(centre) }
                let central = zone(at: centre)
                // Most cells lie inside one zone (or none): their centre and near-corners agree.
                let inset = 0.125 * cellSize
                let corners = [
                    Point(x: corner.x + inset, y: corner.y + inset),
                    Point(x: corner.x + cellSize - inset, y: corner.y + inset),
                    Point(x: corner.x + inset, y: corner.y + cellSize - inset),
                    Point(x: corner.x + cellSize - inset, y: corner.y + cellSize - inset),
                ]
                if corners.allSatisfy({ zone(at: $0) == central }) {
                    cells.zoneOfCell[index] = Int16(central)
                    cells.zoneShareOfCell[index] = central >= 0 ? 1 : 0
                    continue
                }
                let counts = sampledZones(corner: corner, cellSize: cellSize, zone: zone(at:))
                if let first = counts.first {
                    cells.zoneOfCell[index] = Int16(first.zone)
                    cells.zoneShareOfCell[index] = Float(first.count) / 16
                }
                if counts.count > 1 {
                    cells.secondZoneOfCell[index] = Int16(counts[1].zone)
                    cells.secondZoneShareOfCell[index] = Float(counts[1].count) / 16
                }
            }
        }
        if !cells.free.contains(true) { cells.free = [Bool](repeating: true, count: count) }
        return cells
    }

    /// The zones at 16 points of the cell from `corner` (a 4 × 4 lattice), with how many fall in each, most first
    /// (then by zone).
    private static func sampledZones(
        corner: Point, cellSize: Double, zone: (Point) -> Int
    ) -> [(zone: Int, count: Int)] {
        var counts: [(zone: Int, count: Int)] = []
        for sampleRow in 0..<4 {
            for sampleColumn in 0..<4 {
                let point = Point(
                    x: corner.x + (Double(sampleColumn) + 0.5) * 0.25 * cellSize,
                    y: corner.y + (Double(sampleRow) + 0.5) * 0.25 * cellSize)
                let found = zone(point)
                guard found >= 0 else { continue }
                if let slot = counts.firstIndex(where: { $0.zone == found }) {
                    counts[slot].count += 1
                } else {
                    counts.append((found, 1))
                }
            }
        }
        counts.sort { ($0.count, -$0.zone) > ($1.count, -$1.zone) }
        return counts
    }

    /// Each cell's run of joined cells along its row (east) and its column (north): the first and last cell of the
    /// run. Two neighbours are joined when both are free and no barrier crosses the step between their centres.
    static func runs(
        free: [Bool], barriers: [Segment], origin low: Point, cellSize: Double, columns: Int, rows: Int
    ) -> (eastFirst: [Int32], eastLast: [Int32], northFirst: [Int32], northLast: [Int32]) {
        let count = columns * rows
        func centre(_ column: Int, _ row: Int) -> Point {
            Point(x: low.x + (Double(column) + 0.5) * cellSize, y: low.y + (Double(row) + 0.5) * cellSize)
        }
        let width = columns
        // The barriers that may cross a row's (or a column's) steps: those that reach its line of centres.
        var lineBarriers: [Segment] = []
        func joined(_ column: Int, _ row: Int, _ nextColumn: Int, _ nextRow: Int) -> Bool {
            guard free[row * width + column], free[nextRow * width + nextColumn] else { return false }
            let step = Segment(centre(column, row), centre(nextColumn, nextRow))
            return !lineBarriers.contains { $0.intersects(step) }
        }
        var eastRunFirst = [Int32](repeating: 0, count: count)
        var eastRunLast = [Int32](repeating: 0, count: count)
        for row in 0..<rows {
            let y = centre(0, row).y
            lineBarriers = barriers.filter {
                min($0.start.y, $0.end.y) <= y + 1e-6 && max($0.start.y, $0.end.y) >= y - 1e-6
            }
            var first = 0
            for column in 0..<columns {
                if column == 0 || !joined(column - 1, row, column, row) { first = column }
                eastRunFirst[row * columns + column] = Int32(first)
            }
            var last = columns - 1
            for column in stride(from: columns - 1, through: 0, by: -1) {
                if column == columns - 1 || !joined(column, row, column + 1, row) { last = column }
                eastRunLast[row * columns + column] = Int32(last)
            }
        }
        var northRunFirst = [Int32](repeating: 0, count: count)
        var northRunLast = [Int32](repeating: 0, count: count)
        for column in 0..<columns {
            let x = centre(column, 0).x
            lineBarriers = barriers.filter {
                min($0.start.x, $0.end.x) <= x + 1e-6 && max($0.start.x, $0.end.x) >= x - 1e-6
            }
            var first = 0
            for row in 0..<rows {
                if row == 0 || !joined(column, row - 1, column, row) { first = row }
                northRunFirst[row * columns + column] = Int32(first)
            }
            var last = rows - 1
            for row in stride(from: rows - 1, through: 0, by: -1) {
                if row == rows - 1 || !joined(column, row, column, row + 1) { last = row }
                northRunLast[row * columns + column] = Int32(last)
            }
        }
        return (eastRunFirst, eastRunLast, northRunFirst, northRunLast)
    }
}
