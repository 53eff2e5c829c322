extension GridKernels {
    /// The box of the cells at least `ratio` of the peak among the first `columns` × `rows` of `values` (row by row),
    /// as the first and last column and row; nil when every cell is 0. `peak` is the largest cell, when the caller
    /// knows it.
    ///
    /// The first and last rows with a cell at the threshold are found by whole rows from each end; the rows between
    /// them can only widen the box, so each is read only outside the columns the box already spans (most of the
    /// window is inside it: this was a scan of every cell, 5 % of the engine).
    static func box(
        of values: [Float], columns: Int, rows: Int, ratio: Float, peak knownPeak: Float?
    ) -> (left: Int, right: Int, top: Int, bottom: Int)? {
        values.withUnsafeBufferPointer { p in
            let peak = knownPeak ?? largest(UnsafeBufferPointer(rebasing: p[0..<columns * rows]))
            guard peak > 0 else { return nil }
            let threshold = peak * ratio
            /// The first column in `from..<to` of `row` at the threshold or above.
            func first(_ row: Int, _ from: Int, _ to: Int) -> Int? {
                let base = row &* columns
                var column = from
                while column < to {
                    if !(p[base &+ column] < threshold) { return column }
                    column &+= 1
                }
                return nil
            }
            /// The last column in `from..<to` of `row` at the threshold or above.
            func last(_ row: Int, _ from: Int, _ to: Int) -> Int? {
                let base = row &* columns
                var column = to &- 1
                while column >= from {
                    if !(p[base &+ column] < threshold) { return column }
                    column &-= 1
                }
                return nil
            }
            var top = 0
            var left = columns
            var right = -1
            while top < rows {
                if let column = first(top, 0, columns) {
                    left = column
                    right = last(top, column, columns) ?? column
                    break
                }
                top += 1
            }
            guard top < rows else { return nil }
            var bottom = rows - 1
            while bottom > top {
                if let column = first(bottom, 0, columns) {
                    left = min(left, column)
                    right = max(right, last(bottom, column, columns) ?? column)
                    break
                }
                bottom -= 1
            }
            var row = top + 1
            while row < bottom {
                if left > 0, let column = first(row, 0, left) { left = column }
                if right < columns - 1, let column = last(row, right + 1, columns) { right = column }
                row += 1
            }
            return (left, right, top, bottom)
        }
    }

    /// The first and second moments of a posterior's cells (`probabilities` over `window` on `grid`), in cells from
    /// the window's first column and row, and the zones of the grid that hold mass, in the grid's order, with their
    /// share of it (none when the total is 0).
    ///
    /// Each row is summed in Float, then added to the totals in Double. The mass per zone is summed in a temporary
    /// buffer (on the stack, for a floor of up to 128 zones at least), then only the zones with mass kept.
    static func moments(
        of probabilities: [Float], window: CellWindow, grid: FloorGrid
    ) -> (total: Double, x: Double, y: Double, xx: Double, yy: Double, zones: [ZoneProbability]) {
        withUnsafeTemporaryAllocation(of: Double.self, capacity: grid.zones.count) { zoneMass in
            zoneMass.initialize(repeating: 0)
            let (total, x, y, xx, yy) = moments(
                of: probabilities, window: window, grid: grid, zoneMass: zoneMass)
            guard total > 0 else { return (total, x, y, xx, yy, []) }
            let inverse = 1 / total
            var zones: [ZoneProbability] = []
            zones.reserveCapacity(zoneMass.count { $0 > 0 })
            for index in zoneMass.indices where zoneMass[index] > 0 {
                zones.append(ZoneProbability(zone: grid.zones[index], probability: zoneMass[index] * inverse))
            }
            return (total, x, y, xx, yy, zones)
        }
    }

    private static func moments(
        of probabilities: [Float], window: CellWindow, grid: FloorGrid, zoneMass: UnsafeMutableBufferPointer<Double>
    ) -> (total: Double, x: Double, y: Double, xx: Double, yy: Double) {
        var sx = 0.0
        var sy = 0.0
        var sxx = 0.0
        var syy = 0.0
        var total = 0.0
        var tally = ZoneTally(mass: zoneMass)
        probabilities.withUnsafeBufferPointer { probabilities in
            grid.zoneOfCell.withUnsafeBufferPointer { zoneOfCell in
                grid.zoneShareOfCell.withUnsafeBufferPointer { zoneShareOfCell in
                    grid.secondZoneOfCell.withUnsafeBufferPointer { secondZoneOfCell in
                        grid.secondZoneShareOfCell.withUnsafeBufferPointer { secondZoneShareOfCell in
                            for row in 0..<window.rows {
                                let y = Double(row)
                                let gridBase = (window.row0 + row) * grid.columns + window.column0
                                var rowTotal: Float = 0
                                var rowX: Float = 0
                                var rowXX: Float = 0
                                for column in 0..<window.columns {
                                    let p = probabilities[row * window.columns + column]
                                    guard p > 0 else { continue }
                                    let x = Float(column)
                                    rowTotal += p
                                    rowX += p * x
                                    rowXX += p * x * x
                                    let cell = gridBase + column
                                    let zone = zoneOfCell[cell]
                                    guard zone >= 0 else { continue }
                                    tally.add(Double(p * zoneShareOfCell[cell]), to: Int(zone))
                                    let second = secondZoneOfCell[cell]
                                    if second >= 0 {
                                        tally.add(Double(p * secondZoneShareOfCell[cell]), to: Int(second))
                                    }
                                }
                                let mass = Double(rowTotal)
                                total += mass
                                sx += Double(rowX)
                                sxx += Double(rowXX)
                                sy += mass * y
                                syy += mass * y * y
                            }
                        }
                    }
                }
            }
        }
        tally.finish()
        return (total, sx, sy, sxx, syy)
    }
}

/// Sums into a zone's mass, cell after cell, with the mass of the zone last added to held in a register until another
/// zone's comes: the cells of a row are mostly one zone's, and each add waited for the store of the one before (a
/// quarter of ``GridKernels/moments(of:window:grid:)``). Every zone's terms are added in the same order as before,
/// so the sums are the same bit for bit.
private struct ZoneTally {
    let mass: UnsafeMutableBufferPointer<Double>
    /// The zone whose sum is in ``held`` (not yet in ``mass``), or -1.
    var zone = -1
    var held = 0.0

    init(mass: UnsafeMutableBufferPointer<Double>) { self.mass = mass }

    @inline(__always)
    mutating func add(_ value: Double, to zone: Int) {
        if zone != self.zone {
            finish()
            self.zone = zone
            held = mass[zone]
        }
        held += value
    }

    /// Writes the held sum back.
    @inline(__always)
    mutating func finish() {
        if zone >= 0 { mass[zone] = held }
    }
}
