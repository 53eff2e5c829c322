import Testing

@testable import WhereaboutsCore

/// The weighing kernels against plain loops, on the gain tables of a real grid (two rooms, six agents) and seeded
/// random windows, readings, offsets and posteriors.
///
/// The weighing takes four cells at a time, but each lane is one cell and does that cell's arithmetic in the
/// plain loop's order: the offset, precision and log likelihood of every cell must be equal bit for bit. The sums
/// over cells (the moments) add four lanes at a time, and are within reordering error of plain sums
/// (``GridKernelsTests/close(_:_:terms:)``).
@Suite("The grid filter's weighing against plain loops")
struct GridWeighingTests {
    /// A random case: a window of the grid, the agents heard (each once) with their levels, the tag's offset and its
    /// prior, and a posterior over the window.
    struct Case {
        var window: CellWindow
        var observations: [GridFilter.Observation]
        var offset: Double
        var priorPrecision: Float
        var penalty: Float
        var floor: Float
        var probabilities: [Float]

        init(grid: FloorGrid, seed: UInt64) {
            var random = SplitMix64(seed: seed)
            let column0 = Int.random(in: 0..<grid.columns, using: &random)
            let row0 = Int.random(in: 0..<grid.rows, using: &random)
            let box = CellWindow(
                column0: column0, row0: row0, columns: Int.random(in: 1...(grid.columns - column0), using: &random),
                rows: Int.random(in: 1...(grid.rows - row0), using: &random))
            window = box
            observations = grid.tables.indices.filter { slot in
                grid.tables[slot].covers(column0: box.column0, row0: box.row0, columns: box.columns, rows: box.rows)
                    && Bool.random(using: &random)
            }.map { GridFilter.Observation(slot: $0, level: Double.random(in: -95 ... -40, using: &random) + 59) }
            offset = Double.random(in: -10...10, using: &random)
            let variance = Double.random(in: 1...100, using: &random)
            priorPrecision = Float(1 / variance)
            penalty = Float(1 / (2 * variance))
            floor = Float.random(in: -12 ... -6, using: &random)
            probabilities = GridKernelsTests.values(box.count, zeros: 0.3, using: &random)
        }
    }

    static func grid() throws -> FloorGrid {
        try FreeSpaceTrackingTests.plainGrid(
            try FreeSpaceTrackingTests.map(blocksWalking: true), configuration: GridFilter.Configuration())
    }

    /// One cell's weighing, plainly: the offset its readings imply, their precision plus the prior's, and their
    /// robust log likelihood around that offset.
    static func plainCell(
        column: Int, row: Int, grid: FloorGrid, of weighing: Case
    ) -> (delta: Float, weight: Float, log: Float) {
        func planes(_ slot: Int) -> (gain: Float, inverseSigma: Float, logSigma: Float) {
            let table = grid.tables[slot]
            let index = table.start + (row - table.row0) * table.columns + column - table.column0
            return (
                grid.tableValues[index], grid.tableValues[index + table.count],
                grid.tableValues[index + 2 * table.count]
            )
        }
        var sum: Float = 0
        var weight = weighing.priorPrecision
        for observation in weighing.observations {
            let (gain, inverseSigma, _) = planes(observation.slot)
            let precision = inverseSigma * inverseSigma
            sum += precision * (Float(observation.level - weighing.offset) - gain)
            weight += precision
        }
        let delta = sum / weight
        var log = -weighing.penalty * delta * delta
        for observation in weighing.observations {
            let (gain, inverseSigma, logSigma) = planes(observation.slot)
            let z = (Float(observation.level - weighing.offset) - gain - delta) * inverseSigma
            let term = -0.5 * z * z - logSigma
            log += term < weighing.floor ? weighing.floor : term
        }
        return (delta, weight, log)
    }

    @Test(
        "log likelihoods: every cell's offset, precision and log likelihood as a plain loop's, bit for bit",
        arguments: 0..<30)
    func logLikelihoods(seed: Int) throws {
        let grid = try Self.grid()
        let weighing = Case(grid: grid, seed: UInt64(700 + seed))
        let count = weighing.window.count
        var deltas = [Float](repeating: 0, count: count)
        var weights = [Float](repeating: 0, count: count)
        var logs = [Float](repeating: 0, count: count)
        let maximum = GridKernels.logLikelihoods(
            of: weighing.observations, grid: grid, window: weighing.window, offset: weighing.offset,
            priorPrecision: weighing.priorPrecision, penalty: weighing.penalty, floor: weighing.floor,
            probabilities: weighing.probabilities, deltas: &deltas, weights: &weights, logs: &logs)
        var plainMaximum = -Float.infinity
        for row in 0..<weighing.window.rows {
            for column in 0..<weighing.window.columns {
                let index = row * weighing.window.columns + column
                let plain = Self.plainCell(
                    column: weighing.window.column0 + column, row: weighing.window.row0 + row, grid: grid, of: weighing)
                #expect(deltas[index] == plain.delta && weights[index] == plain.weight && logs[index] == plain.log)
                if weighing.probabilities[index] > 0 { plainMaximum = max(plainMaximum, plain.log) }
            }
        }
        #expect(maximum == plainMaximum)
    }

    @Test(
        "multiplying the likelihoods in: each cell as a plain loop's, bit for bit; the moments within reordering error",
        arguments: 0..<30)
    func multiplyLikelihoods(seed: Int) {
        var random = SplitMix64(seed: UInt64(800 + seed))
        let count = Int.random(in: 1...300, using: &random)
        let probabilities = GridKernelsTests.values(count, using: &random)
        let deltas = GridKernelsTests.values(count, zeros: 0, using: &random).map { 20 * $0 - 10 }
        let priorPrecision = Float.random(in: 0.01...1, using: &random)
        let weights = GridKernelsTests.values(count, zeros: 0, using: &random).map { 5 * $0 + priorPrecision }
        let logs = GridKernelsTests.values(count, zeros: 0, using: &random).map { -80 * $0 }
        let maximum = logs.max() ?? 0
        let correlation: Float = 4
        var p = probabilities
        var d = deltas
        var w = weights
        let (moments, peak) = GridKernels.multiplyLikelihoods(
            into: &p, deltas: &d, weights: &w, logs: logs, count: count, maximum: maximum,
            priorPrecision: priorPrecision, correlation: correlation)
        var plainMoments = SIMD4<Float>.zero
        var plainPeak: Float = 0
        for index in 0..<count {
            let mass = probabilities[index] * GridKernels.exponential(min(logs[index] - maximum, 0))
            let readings = weights[index] - priorPrecision
            let delta = deltas[index] * weights[index] / (readings + correlation * priorPrecision)
            #expect(p[index] == mass && d[index] == delta && w[index] == readings)
            plainMoments += SIMD4(mass, mass * delta, mass * delta * delta, mass * readings)
            plainPeak = max(plainPeak, mass)
        }
        // Σp·δ and Σp·δ² add terms of both signs for δ: within reordering error of the sum of their magnitudes.
        #expect(GridKernelsTests.close(moments[0], plainMoments[0], terms: count))
        #expect(GridKernelsTests.close(moments[2], plainMoments[2], terms: count))
        #expect(GridKernelsTests.close(moments[3], plainMoments[3], terms: count))
        let magnitude = (0..<count).reduce(Float(0)) { $0 + abs(p[$1] * d[$1]) }
        #expect(abs(moments[1] - plainMoments[1]) <= 2 * Float(count) * Float.ulpOfOne * magnitude)
        #expect(peak == plainPeak)
    }

    @Test("moments and zone masses: within reordering error of plain sums in Double", arguments: 0..<20)
    func moments(seed: Int) throws {
        let grid = try Self.grid()
        let weighing = Case(grid: grid, seed: UInt64(900 + seed))
        let window = weighing.window
        let found = GridKernels.moments(of: weighing.probabilities, window: window, grid: grid)
        var total = 0.0
        var x = 0.0
        var y = 0.0
        var xx = 0.0
        var yy = 0.0
        var zoneMass = [Double](repeating: 0, count: grid.zones.count)
        for row in 0..<window.rows {
            for column in 0..<window.columns {
                let p = Double(weighing.probabilities[row * window.columns + column])
                total += p
                x += p * Double(column)
                y += p * Double(row)
                xx += p * Double(column * column)
                yy += p * Double(row * row)
                let cell = (window.row0 + row) * grid.columns + window.column0 + column
                if grid.zoneOfCell[cell] >= 0 {
                    zoneMass[Int(grid.zoneOfCell[cell])] += p * Double(grid.zoneShareOfCell[cell])
                }
                if grid.secondZoneOfCell[cell] >= 0 {
                    zoneMass[Int(grid.secondZoneOfCell[cell])] += p * Double(grid.secondZoneShareOfCell[cell])
                }
            }
        }
        // Summed in Float along each row, then in Double: each row's rounding, at most (columns − 1)·ε of its sum,
        // and two more for the products p·x·x.
        let tolerance = 2 * Double(window.columns + 2) * Double(Float.ulpOfOne)
        #expect(abs(found.total - total) <= tolerance * total)
        #expect(abs(found.x - x) <= tolerance * max(x, 1e-30))
        #expect(abs(found.y - y) <= tolerance * max(y, 1e-30))
        #expect(abs(found.xx - xx) <= tolerance * max(xx, 1e-30))
        #expect(abs(found.yy - yy) <= tolerance * max(yy, 1e-30))
        let zones = grid.zones.indices.filter { zoneMass[$0] > 0 }
        #expect(found.zones.map(\.zone) == zones.map { grid.zones[$0] })
        for (probability, index) in zip(found.zones.map(\.probability), zones) {
            #expect(abs(probability - zoneMass[index] / total) <= 4 * tolerance * zoneMass[index] / total)
        }
    }

    @Test(
        "zone masses: each zone's terms (p × share in Float, then Double) added in cell order, bit for bit",
        arguments: 0..<20)
    func zoneMassesInCellOrder(seed: Int) throws {
        let grid = try Self.grid()
        let weighing = Case(grid: grid, seed: UInt64(950 + seed))
        let window = weighing.window
        let found = GridKernels.moments(of: weighing.probabilities, window: window, grid: grid)
        // Straight into memory, cell by cell, as the kernel did before it held a zone's sum in a register.
        var zoneMass = [Double](repeating: 0, count: grid.zones.count)
        for row in 0..<window.rows {
            for column in 0..<window.columns {
                let p = weighing.probabilities[row * window.columns + column]
                let cell = (window.row0 + row) * grid.columns + window.column0 + column
                guard p > 0, grid.zoneOfCell[cell] >= 0 else { continue }
                zoneMass[Int(grid.zoneOfCell[cell])] += Double(p * grid.zoneShareOfCell[cell])
                if grid.secondZoneOfCell[cell] >= 0 {
                    zoneMass[Int(grid.secondZoneOfCell[cell])] += Double(p * grid.secondZoneShareOfCell[cell])
                }
            }
        }
        let zones = grid.zones.indices.filter { zoneMass[$0] > 0 }
        #expect(found.zones.map(\.zone) == zones.map { grid.zones[$0] })
        for (probability, index) in zip(found.zones.map(\.probability), zones) {
            #expect(probability == zoneMass[index] * (1 / found.total))
        }
    }

    @Test("compact, append: the box's cells, row by row, as indexing them one by one")
    func windowCopies() {
        var random = SplitMix64(seed: 1000)
        for _ in 0..<200 {
            let window = CellWindow(
                column0: 0, row0: 0, columns: Int.random(in: 1...15, using: &random),
                rows: Int.random(in: 1...15, using: &random))
            let column0 = Int.random(in: 0..<window.columns, using: &random)
            let row0 = Int.random(in: 0..<window.rows, using: &random)
            let box = CellWindow(
                column0: column0, row0: row0, columns: Int.random(in: 1...(window.columns - column0), using: &random),
                rows: Int.random(in: 1...(window.rows - row0), using: &random))
            let values = GridKernelsTests.values(window.count, using: &random)
            var plain: [Float] = []
            for row in box.row0..<box.row0 + box.rows {
                for column in box.column0..<box.column0 + box.columns {
                    plain.append(values[row * window.columns + column])
                }
            }
            var appended: [Float] = [42]
            GridKernels.append(box, of: window, from: values, to: &appended)
            #expect(appended == [42] + plain)
            var compacted = values
            GridKernels.compact(box, of: window, in: &compacted)
            #expect(Array(compacted[0..<box.count]) == plain)
        }
    }

    @Test("fill, scale, copy: the first count values as a plain loop makes them; the rest untouched")
    func elementwise() {
        var random = SplitMix64(seed: 1100)
        for _ in 0..<100 {
            let length = Int.random(in: 0...40, using: &random)
            let count = Int.random(in: 0...length, using: &random)
            let values = GridKernelsTests.values(length, using: &random)
            let factor = Float.random(in: 0.1...10, using: &random)
            var filled = values
            GridKernels.fill(&filled, count: count, with: 7)
            #expect(filled == (0..<length).map { $0 < count ? 7 : values[$0] })
            var grown = values
            GridKernels.fill(&grown, count: length + 3, with: 1)
            #expect(grown == [Float](repeating: 1, count: length + 3))
            var scaled = values
            GridKernels.scale(&scaled, count: count, by: factor)
            #expect(scaled == (0..<length).map { $0 < count ? values[$0] * factor : values[$0] })
            var copied = [Float](repeating: -1, count: length)
            GridKernels.copy(values, count: count, into: &copied)
            #expect(copied == (0..<length).map { $0 < count ? values[$0] : -1 })
        }
    }

    @Test(
        "warm: one value of each cache line of the tables' rows under the window, their bits combined as a plain loop does",
        arguments: 0..<10)
    func warm(seed: Int) throws {
        let grid = try Self.grid()
        let weighing = Case(grid: grid, seed: UInt64(1200 + seed))
        let window = weighing.window
        var plain: UInt32 = 0
        for observation in weighing.observations {
            let table = grid.tables[observation.slot]
            let base = table.start + (window.row0 - table.row0) * table.columns + window.column0 - table.column0
            func planes(_ index: Int) -> UInt32 {
                grid.tableValues[base + index].bitPattern ^ grid.tableValues[base + table.count + index].bitPattern
                    ^ grid.tableValues[base + 2 * table.count + index].bitPattern
            }
            for row in 0..<window.rows {
                let from = row * table.columns
                for index in stride(from: from, to: from + window.columns, by: 16) { plain ^= planes(index) }
                plain ^= planes(from + window.columns - 1)
            }
        }
        #expect(GridKernels.warm(weighing.observations, grid: grid, window: window) == plain)
    }
}
