extension GridKernels {
    /// Per cell of `window` (row by row, into the first cells of `deltas`, `weights` and `logs`): the tag's power
    /// offset its readings imply (`observations`' levels less `offset`, against their agents' tables on `grid`),
    /// their precision plus the prior's (`priorPrecision`), and their robust log likelihood around that offset, each
    /// reading's term no lower than `floor`, less `penalty` × offset². Returns the largest log likelihood among the
    /// cells whose `probabilities` are above 0 (−∞ when none is).
    static func logLikelihoods(
        of observations: [GridFilter.Observation], grid: FloorGrid, window: CellWindow, offset: Double,
        priorPrecision: Float, penalty: Float, floor: Float, probabilities: [Float],
        deltas: inout [Float], weights: inout [Float], logs: inout [Float]
    ) -> Float {
        let count = window.count
        var maximum = -Float.infinity
        withTableRows(of: observations, grid: grid, window: window, offset: offset) { tables in
            deltas.withUnsafeMutableBufferPointer { deltas in
                weights.withUnsafeMutableBufferPointer { weights in
                    logs.withUnsafeMutableBufferPointer { logs in
                        probabilities.withUnsafeBufferPointer { p in
                            // (Never nil: the buffers hold the window's cells, and a window has one at least.)
                            guard let deltaCells = deltas.baseAddress, let weightCells = weights.baseAddress,
                                let logCells = logs.baseAddress, let probabilityCells = p.baseAddress,
                                p.count >= count
                            else { return }
                            let cells = WeighedCells(
                                tables: tables, priorPrecision: priorPrecision, penalty: penalty, floor: floor,
                                probabilities: probabilityCells, deltas: deltaCells, weights: weightCells,
                                logs: logCells)
                            var lanes = SIMD4<Float>(repeating: -.infinity)
                            for row in 0..<window.rows {
                                cells.weighRow(row, columns: window.columns, at: row * window.columns, largest: &lanes)
                            }
                            maximum = lanes.max()
                        }
                    }
                }
            }
        }
        return maximum
    }

    /// Per cell of the first `count`: multiplies the probability by its likelihood, e^(log − `maximum`) (at most
    /// 1); makes the offset estimate `delta` × weight / (readings' precision + `correlation` × `priorPrecision`), the
    /// offset learned as if the readings were fewer; and makes the weight the readings' precision alone. Returns
    /// Σp, Σp·δ, Σp·δ², Σp·precision over the cells (``weightedMoments(_:_:_:)``), and the largest p.
    static func multiplyLikelihoods(
        into probabilities: inout [Float], deltas: inout [Float], weights: inout [Float], logs: [Float], count: Int,
        maximum: Float, priorPrecision: Float, correlation: Float
    ) -> (moments: SIMD4<Float>, largest: Float) {
        probabilities.withUnsafeMutableBufferPointer { p in
            deltas.withUnsafeMutableBufferPointer { sums in
                weights.withUnsafeMutableBufferPointer { weights in
                    logs.withUnsafeBufferPointer { logs in
                        // Element by element (vectorised): the new probabilities, and each cell's offset estimate.
                        for index in 0..<count {
                            p[index] *= exponential(min(logs[index] - maximum, 0))
                            let readings = weights[index] - priorPrecision
                            sums[index] = sums[index] * weights[index] / (readings + correlation * priorPrecision)
                            weights[index] = readings
                        }
                    }
                    return weightedMoments(
                        UnsafeBufferPointer(rebasing: p[0..<count]), UnsafeBufferPointer(rebasing: sums[0..<count]),
                        UnsafeBufferPointer(rebasing: weights[0..<count]))
                }
            }
        }
    }

    /// The likelihood of each of the first `count` cells, e^(log − `maximum`) (at most 1), into `likelihoods`.
    static func likelihoods(_ logs: [Float], count: Int, maximum: Float, into likelihoods: inout [Float]) {
        logs.withUnsafeBufferPointer { l in
            likelihoods.withUnsafeMutableBufferPointer { target in
                for index in 0..<count { target[index] = exponential(min(l[index] - maximum, 0)) }
            }
        }
    }

    /// Reads a float of every cache line of the table rows of `observations` under `window`, and returns their bits
    /// combined (kept by the caller, so that the loads are not optimised away).
    ///
    /// Combined by exclusive or, not summed: a float sum chained every load's add on the one before (four cycles
    /// each), and that chain, not the loads, was most of this pass.
    static func warm(_ observations: [GridFilter.Observation], grid: FloorGrid, window: CellWindow) -> UInt32 {
        let columns = window.columns
        guard columns > 0 else { return 0 }
        var bits: UInt32 = 0
        withTableRows(of: observations, grid: grid, window: window, offset: 0) { tables in
            for table in tables {
                for row in 0..<window.rows {
                    let from = row * table.stride
                    // 16 floats to a 64-byte line; the row's last float, for the line it may end on.
                    for index in Swift.stride(from: from, to: from + columns, by: 16) {
                        bits ^=
                            table.gains[index].bitPattern ^ table.inverseSigmas[index].bitPattern
                            ^ table.logSigmas[index].bitPattern
                    }
                    let last = from + columns - 1
                    bits ^=
                        table.gains[last].bitPattern ^ table.inverseSigmas[last].bitPattern
                        ^ table.logSigmas[last].bitPattern
                }
            }
        }
        return bits
    }
}

/// One agent's table under the work window, for the weighing: its three planes from the window's first cell, the
/// table's row stride, and the reading's level less the tag's learned offset.
private struct TableRows {
    let gains: UnsafePointer<Float>
    let inverseSigmas: UnsafePointer<Float>
    let logSigmas: UnsafePointer<Float>
    let stride: Int
    let level: Float
}

/// Calls `body` with the tables of `observations` under `window`, every pointer valid for the call; each table must
/// cover the window.
private func withTableRows(
    of observations: [GridFilter.Observation],
    grid: FloorGrid,
    window: CellWindow,
    offset: Double,
    _ body: (UnsafeBufferPointer<TableRows>) -> Void
) {
    grid.tables.withUnsafeBufferPointer { tables in
        grid.tableValues.withUnsafeBufferPointer { values in
            // (Never nil: a floor with agents has tables, and a table a cell at least.)
            guard let base = values.baseAddress else { return }
            withUnsafeTemporaryAllocation(of: TableRows.self, capacity: observations.count) { rows in
                for (index, observation) in observations.enumerated() {
                    let table = tables[observation.slot]
                    assert(
                        table.covers(
                            column0: window.column0, row0: window.row0, columns: window.columns, rows: window.rows),
                        "a table read under a window it does not cover")
                    let gains =
                        base + table.start + (window.row0 - table.row0) * table.columns + window.column0
                        - table.column0
                    rows.initializeElement(
                        at: index,
                        to: TableRows(
                            gains: gains, inverseSigmas: gains + table.count, logSigmas: gains + 2 * table.count,
                            stride: table.columns, level: Float(observation.level - offset)))
                }
                body(UnsafeBufferPointer(rows))
            }
        }
    }
}

/// The weighing of the work window's cells (``GridKernels/logLikelihoods(of:grid:window:offset:priorPrecision:penalty:floor:probabilities:deltas:weights:logs:)``), a row at a time: per cell, the offset
/// its readings imply, their precision plus the prior's, and their robust log likelihood around that offset.
///
/// A group of cells takes every reading in turn, twice, while its accumulators stay in registers and its table
/// rows in the cache: the precision-weighted residuals first, for the offset, then each reading's likelihood. (Two
/// passes over the whole window, reading by reading, wrote and read every cell's sums back once per reading.) The
/// arithmetic per cell is the same, in the same order, as one cell at a time.
private struct WeighedCells {
    let tables: UnsafeBufferPointer<TableRows>
    let priorPrecision: Float
    let penalty: Float
    let floor: Float
    /// The cells' probabilities: the largest log likelihood is taken among the cells above 0 as they are weighed
    /// (a pass of its own read every log again).
    let probabilities: UnsafePointer<Float>
    let deltas: UnsafeMutablePointer<Float>
    let weights: UnsafeMutablePointer<Float>
    let logs: UnsafeMutablePointer<Float>

    /// Row `row` of the window, `columns` cells, its results from index `output` on, eight cells at a time while
    /// eight are left, then four; a row's last four overlap the four before rather than run past the row (a cell is
    /// computed from the tables alone, so one done twice comes out the same). `largest` takes, lane by lane, the
    /// largest log likelihood of the cells whose probability is above 0.
    @inline(__always)
    func weighRow(_ row: Int, columns: Int, at output: Int, largest: inout SIMD4<Float>) {
        guard columns >= 4 else {
            weigh(FirstLanes(count: columns), row: row, column: 0, at: output, largest: &largest)
            return
        }
        var column = 0
        while columns - column >= 8 {
            weighEight(row: row, column: column, at: output + column, largest: &largest)
            column += 8
        }
        while column < columns {
            let start = min(column, columns - 4)
            weigh(AllLanes(), row: row, column: start, at: output + start, largest: &largest)
            column += 4
        }
    }

    /// Four cells of row `row` from `column` (those `lanes` reaches).
    @inline(__always)
    private func weigh<Lanes: CellLanes>(
        _ lanes: Lanes, row: Int, column: Int, at output: Int, largest: inout SIMD4<Float>
    ) {
        var sums = SIMD4<Float>.zero
        var weights = SIMD4<Float>(repeating: priorPrecision)
        for table in tables {
            let at = row &* table.stride &+ column
            let inverse = lanes.load(table.inverseSigmas + at)
            let precision = inverse * inverse
            sums += precision * (SIMD4(repeating: table.level) - lanes.load(table.gains + at))
            weights += precision
        }
        let deltas = sums / weights
        var logs = SIMD4(repeating: -penalty) * deltas * deltas
        let floor = SIMD4(repeating: self.floor)
        for table in tables {
            let at = row &* table.stride &+ column
            let z =
                (SIMD4(repeating: table.level) - lanes.load(table.gains + at) - deltas)
                * lanes.load(table.inverseSigmas + at)
            let log = SIMD4(repeating: -0.5) * z * z - lanes.load(table.logSigmas + at)
            logs += log.replacing(with: floor, where: log .< floor)
        }
        store(deltas, weights, logs, lanes, at: output, largest: &largest)
    }
}

extension WeighedCells {
    /// Eight cells of row `row` from `column`, as two groups of four (``weigh(_:row:column:at:largest:)``, each
    /// cell's arithmetic the same) that share each table's pointers, row offset and level: these, not the
    /// arithmetic, were a fifth of a group's instructions. (Written out for two `SIMD4`s: generic over the vector,
    /// the code was not vectorised, and a `SIMD8` is two registers on this target anyway.)
    @inline(__always)
    fileprivate func weighEight(row: Int, column: Int, at output: Int, largest: inout SIMD4<Float>) {
        let lanes = AllLanes()
        var sums = (SIMD4<Float>.zero, SIMD4<Float>.zero)
        var weights = (SIMD4<Float>(repeating: priorPrecision), SIMD4<Float>(repeating: priorPrecision))
        for table in tables {
            let at = row &* table.stride &+ column
            let level = SIMD4(repeating: table.level)
            let inverse = (lanes.load(table.inverseSigmas + at), lanes.load(table.inverseSigmas + (at &+ 4)))
            let precision = (inverse.0 * inverse.0, inverse.1 * inverse.1)
            sums.0 += precision.0 * (level - lanes.load(table.gains + at))
            sums.1 += precision.1 * (level - lanes.load(table.gains + (at &+ 4)))
            weights.0 += precision.0
            weights.1 += precision.1
        }
        let deltas = (sums.0 / weights.0, sums.1 / weights.1)
        let penalty = SIMD4(repeating: -self.penalty)
        var logs = (penalty * deltas.0 * deltas.0, penalty * deltas.1 * deltas.1)
        let floor = SIMD4(repeating: self.floor)
        let half = SIMD4<Float>(repeating: -0.5)
        for table in tables {
            let at = row &* table.stride &+ column
            let level = SIMD4(repeating: table.level)
            let z0 = (level - lanes.load(table.gains + at) - deltas.0) * lanes.load(table.inverseSigmas + at)
            let z1 =
                (level - lanes.load(table.gains + (at &+ 4)) - deltas.1) * lanes.load(table.inverseSigmas + (at &+ 4))
            let log0 = half * z0 * z0 - lanes.load(table.logSigmas + at)
            let log1 = half * z1 * z1 - lanes.load(table.logSigmas + (at &+ 4))
            logs.0 += log0.replacing(with: floor, where: log0 .< floor)
            logs.1 += log1.replacing(with: floor, where: log1 .< floor)
        }
        store(deltas.0, weights.0, logs.0, lanes, at: output, largest: &largest)
        store(deltas.1, weights.1, logs.1, lanes, at: output &+ 4, largest: &largest)
    }

    /// Stores four cells' results at `output` (those `lanes` reaches), and takes their log likelihoods into
    /// `largest` where the cells have mass. (Lanes past a narrow window read probability 0: they never count.)
    @inline(__always)
    fileprivate func store<Lanes: CellLanes>(
        _ deltas: SIMD4<Float>, _ weights: SIMD4<Float>, _ logs: SIMD4<Float>, _ lanes: Lanes, at output: Int,
        largest: inout SIMD4<Float>
    ) {
        lanes.store(deltas, to: self.deltas + output)
        lanes.store(weights, to: self.weights + output)
        lanes.store(logs, to: self.logs + output)
        let candidate = SIMD4<Float>(repeating: -.infinity).replacing(
            with: logs, where: lanes.load(probabilities + output) .> 0)
        largest.replace(with: candidate, where: candidate .> largest)
    }
}

/// How ``WeighedCells`` reads and writes a group of four cells.
private protocol CellLanes {
    func load(_ pointer: UnsafePointer<Float>) -> SIMD4<Float>
    func store(_ value: SIMD4<Float>, to pointer: UnsafeMutablePointer<Float>)
}

/// Four cells, all in the window.
private struct AllLanes: CellLanes {
    @inline(__always)
    func load(_ pointer: UnsafePointer<Float>) -> SIMD4<Float> {
        UnsafeRawPointer(pointer).loadUnaligned(as: SIMD4<Float>.self)
    }

    @inline(__always)
    func store(_ value: SIMD4<Float>, to pointer: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: value, as: SIMD4<Float>.self)
    }
}

/// The first `count` of four cells (a window under four cells wide); the other lanes read 0 and are not written.
private struct FirstLanes: CellLanes {
    let count: Int

    func load(_ pointer: UnsafePointer<Float>) -> SIMD4<Float> {
        var value = SIMD4<Float>.zero
        for lane in 0..<count { value[lane] = pointer[lane] }
        return value
    }

    func store(_ value: SIMD4<Float>, to pointer: UnsafeMutablePointer<Float>) {
        for lane in 0..<count { pointer[lane] = value[lane] }
    }
}
