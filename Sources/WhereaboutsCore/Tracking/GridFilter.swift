/// A Bayes filter over a floor's cells: the engine's per-tag position estimate.
///
/// Each tag has a ``GridPosterior``: a probability per cell of a window of its floor's ``FloorGrid``. Every update
/// does three things:
/// 1. **Predict.** People walk: the posterior spreads by a Gaussian blur of ``Configuration/walkingSpread``·√dt
///    metres, as repeated steps of mass between neighbouring cells that are joined (free, and no barrier between),
///    so mass never enters an obstacle or crosses a wall except through a door.
/// 2. **Weigh.** Each agent's reading (its readings since the last update, averaged) is weighed in the RSSI domain
///    against the path-loss model at each cell, as a robust mixture: `(1 − ε)·N(rssi; μ, σ²) + ε·uniform`, so that
///    one wild reading cannot carry the tag off. The tag's own power (its true RSSI at 1 m) is unknown, and on real
///    hardware often 10 dB or more from what it advertises: a per-tag offset is learned as a Gaussian state and, at
///    every cell, marginalised out of that update's readings. Positions then rest on how the agents' readings
///    differ from each other more than on their absolute level.
/// 3. **Prune.** Cells whose probability is far below the peak leave the window, so the cost of a tag grows with the
///    area it could be in, not with the floor.
///
/// The whole window restarts around the strongest agents when the tag was silent for
/// ``Configuration/resetAfter`` seconds, changed floor, or keeps being heard loudest far from where it is thought
/// to be.
public struct GridFilter: Sendable {
    /// Tuning of the filter.
    public struct Configuration: Sendable, Hashable {
        /// The side of a cell, in metres.
        public var cellSize: Double = 0.5
        /// Spread of a reading around the path-loss model, in dB (shadowing, body, orientation).
        public var rssiSigma: Double = 5
        /// How much that spread grows with distance, in dB per metre: a far link crosses more furniture and
        /// people, and the model's error there is larger (added in quadrature).
        public var rssiSigmaPerMetre: Double = 0.3
        /// Share of readings that are outliers, weighed as uniform over ``outlierRange``.
        public var outlierShare: Double = 0.02
        /// The span of RSSIs, in dB, over which an outlier may fall.
        public var outlierRange: Double = 100
        /// How far a person may have gone, 1 sigma, after one second (metres; it grows with √dt). Larger than
        /// the half metre that suits a slow robot: people walk at 1–1.4 m/s between pauses.
        public var walkingSpread: Double = 1.2
        /// A tag silent for this long (seconds) starts again from its readings alone.
        public var resetAfter: Double = 5
        /// At most this many agents, the loudest, weigh in on one update.
        public var maximumAgentsPerUpdate: Int = 10
        /// Prior spread of a tag's power around what it advertises (or the map's default), in dB.
        public var offsetSigma: Double = 10
        /// The learned power offset is never trusted to better than this, in dB.
        public var minimumOffsetSigma: Double = 1.5
        /// How fast a tag's power offset may drift, in dB² per second.
        public var offsetDrift: Double = 0.05
        /// Readings in a row that count as one independent reading when learning a tag's power: shadowing lasts.
        public var readingCorrelation: Double = 4
        /// Cells below this share of the most probable cell are pruned.
        public var pruneRatio: Double = 1e-3
        /// Kept around the cells that survive pruning, in metres.
        public var margin: Double = 0.5
        /// A (re)started window spans this far (metres) around the loudest agents.
        public var initialRadius: Double = 10
        /// Each agent's path gains are tabled this far around it (metres); it weighs in only on windows inside.
        public var gainRadius: Double = 30
        /// After this many updates in a row loudest at an agent farther than 1.5 × ``initialRadius`` from the
        /// estimate, the window restarts.
        public var astrayUpdates: Int = 3

        public init() {}
    }

    /// One agent's say in an update.
    struct Observation: Sendable {
        /// The agent's slot in the floor grid's tables.
        var slot: Int
        /// Corrected RSSI (raw + the agent's offset) minus the tag's nominal power at 1 m, in dB.
        var level: Double
    }

    /// What an update says about a tag.
    struct Summary: Sendable {
        /// Posterior mean position.
        var mean: Point
        /// Root-mean-square distance of the posterior from its mean, in metres.
        var spread: Double
        /// Per zone of the floor (in the grid's order): the posterior mass in it.
        var zoneMass: [Double]
    }

    let configuration: Configuration
    private let logLikelihood: [Float]
    private let tableLow: Float
    private let tableScale: Float
    private var sums: [Float] = []
    private var logs: [Float] = []
    private var weights: [Float] = []
    private var scratch: [Float] = []

    init(configuration: Configuration) {
        self.configuration = configuration
        // Log of the mixture density by standardised residual z, from −12 to +12 in 0.01 steps, for a reading of
        // σ = rssiSigma (farther links, with larger σ, change the outlier term's share a little; that is ignored).
        let uniform = configuration.outlierShare / configuration.outlierRange * configuration.rssiSigma
        let peak = (1 - configuration.outlierShare) / 2.506_628_274_631
        let step = 0.01
        let count = Int(24 / step) + 1
        var table = [Float](repeating: 0, count: count)
        for index in 0..<count {
            let z = -12 + Double(index) * step
            table[index] = Float(naturalLog(peak * exponential(-z * z / 2) + uniform) - naturalLog(peak + uniform))
        }
        logLikelihood = table
        tableLow = -12
        tableScale = Float(1 / step)
    }

    // MARK: - Update

    /// Brings a tag's posterior to `now` with the readings of one update; nil when no agent could weigh in.
    mutating func update(
        _ state: inout GridPosterior?,
        observations allObservations: [Observation],
        grid: FloorGrid,
        gridIndex: Int,
        now: Double
    ) -> Summary? {
        guard !allObservations.isEmpty else { return nil }
        var observations = allObservations
        if observations.count > configuration.maximumAgentsPerUpdate {
            observations.sort { $0.level > $1.level }
            observations.removeLast(observations.count - configuration.maximumAgentsPerUpdate)
        }
        var posterior: GridPosterior
        if let previous = state, previous.gridIndex == gridIndex, now - previous.time <= configuration.resetAfter,
            previous.astray < configuration.astrayUpdates
        {
            posterior = previous
            state = nil  // no second reference to the probabilities while they change
            predict(&posterior, elapsed: now - posterior.time, grid: grid)
        } else {
            posterior = start(grid: grid, gridIndex: gridIndex, observations: observations, previous: state, now: now)
            state = nil
        }
        posterior.time = now
        observations.removeAll { observation in
            !grid.tables[observation.slot].covers(
                column0: posterior.column0, row0: posterior.row0, columns: posterior.columns, rows: posterior.rows)
        }
        if !observations.isEmpty, !weigh(&posterior, observations: observations, grid: grid) {
            // Nothing in the window fits at all: start again around the loudest agents.
            posterior = start(
                grid: grid, gridIndex: gridIndex, observations: observations, previous: posterior, now: now)
            _ = weigh(&posterior, observations: observations, grid: grid)
        }
        prune(&posterior)
        let summary = summarise(posterior, grid: grid)
        if let loudest = observations.max(by: { $0.level < $1.level }) {
            let agent = grid.tables[loudest.slot].agentPosition
            let far = agent.distance(to: summary.mean) > 1.5 * configuration.initialRadius
            posterior.astray = far ? posterior.astray + 1 : 0
        }
        state = posterior
        return summary
    }

    /// A window around the loudest agents, uniform over its free cells; the tag's learned power offset carries over.
    private func start(
        grid: FloorGrid,
        gridIndex: Int,
        observations: [Observation],
        previous: GridPosterior?,
        now: Double
    ) -> GridPosterior {
        let loudest = observations.max { $0.level < $1.level }?.level ?? 0
        var low = Point(x: Double.infinity, y: Double.infinity)
        var high = Point(x: -Double.infinity, y: -Double.infinity)
        for observation in observations.sorted(by: { $0.level > $1.level }).prefix(3)
        where observation.level >= loudest - 6 {
            let position = grid.tables[observation.slot].agentPosition
            low = Point(x: min(low.x, position.x), y: min(low.y, position.y))
            high = Point(x: max(high.x, position.x), y: max(high.y, position.y))
        }
        let radius = configuration.initialRadius
        var column0 = 0
        var row0 = 0
        var column1 = grid.columns
        var row1 = grid.rows
        if low.x.isFinite {
            let first = grid.cell(of: Point(x: low.x - radius, y: low.y - radius))
            let last = grid.cell(of: Point(x: high.x + radius, y: high.y + radius))
            column0 = first.column
            row0 = first.row
            column1 = last.column + 1
            row1 = last.row + 1
        }
        var posterior = GridPosterior(
            gridIndex: gridIndex, column0: column0, row0: row0, columns: column1 - column0, rows: row1 - row0,
            probabilities: [], offset: previous?.offset ?? 0,
            offsetVariance: previous.map {
                min($0.offsetVariance + 4, configuration.offsetSigma * configuration.offsetSigma)
            }
                ?? configuration.offsetSigma * configuration.offsetSigma,
            time: now, astray: 0)
        var probabilities = [Float](repeating: 0, count: posterior.columns * posterior.rows)
        var freeCount = 0
        for row in 0..<posterior.rows {
            for column in 0..<posterior.columns where grid.free[(row0 + row) * grid.columns + column0 + column] {
                probabilities[row * posterior.columns + column] = 1
                freeCount += 1
            }
        }
        if freeCount == 0, posterior.columns * posterior.rows < grid.columns * grid.rows {
            // Only walls and obstacles around the agents: take the whole floor.
            var whole = posterior
            whole.column0 = 0
            whole.row0 = 0
            whole.columns = grid.columns
            whole.rows = grid.rows
            probabilities = grid.free.map { $0 ? 1 : 0 }
            freeCount = probabilities.reduce(0) { $0 + Int($1) }
            posterior = whole
        }
        let share = 1 / Float(max(freeCount, 1))
        for index in probabilities.indices { probabilities[index] *= share }
        posterior.probabilities = probabilities
        return posterior
    }

    /// Spreads the posterior as people walk in `elapsed` seconds, within joined cells; grows the window to hold it.
    private mutating func predict(_ posterior: inout GridPosterior, elapsed: Double, grid: FloorGrid) {
        posterior.offsetVariance += configuration.offsetDrift * max(elapsed, 0)
        let spread = configuration.walkingSpread / configuration.cellSize
        // Variance per axis in cells², spread in steps of at most 0.5 cell² each (weights up to 0.25 per side).
        let variance = spread * spread * min(max(elapsed, 0), configuration.resetAfter)
        guard variance > 0 else { return }
        let steps = max(Int((variance / 0.5).rounded(.up)), 1)
        let weight = Float(variance / (2 * Double(steps)))
        grow(&posterior, by: steps, grid: grid)
        let columns = posterior.columns
        let rows = posterior.rows
        let count = columns * rows
        if scratch.count < count { scratch = [Float](repeating: 0, count: count) }
        let gridColumns = grid.columns
        let column0 = posterior.column0
        let row0 = posterior.row0
        for _ in 0..<steps {
            posterior.probabilities.withUnsafeMutableBufferPointer { p in
                scratch.withUnsafeMutableBufferPointer { next in
                    grid.openEast.withUnsafeBufferPointer { east in
                        grid.openNorth.withUnsafeBufferPointer { north in
                            // East–west.
                            for row in 0..<rows {
                                let base = row * columns
                                let gridBase = (row0 + row) * gridColumns + column0
                                for column in 0..<columns {
                                    let index = base + column
                                    let here = p[index]
                                    var flow: Float = 0
                                    if column > 0 { flow += east[gridBase + column - 1] * (p[index - 1] - here) }
                                    if column + 1 < columns { flow += east[gridBase + column] * (p[index + 1] - here) }
                                    next[index] = here + weight * flow
                                }
                            }
                            // North–south.
                            for row in 0..<rows {
                                let base = row * columns
                                let gridBase = (row0 + row) * gridColumns + column0
                                for column in 0..<columns {
                                    let index = base + column
                                    let here = next[index]
                                    var flow: Float = 0
                                    if row > 0 {
                                        flow += north[gridBase + column - gridColumns] * (next[index - columns] - here)
                                    }
                                    if row + 1 < rows {
                                        flow += north[gridBase + column] * (next[index + columns] - here)
                                    }
                                    p[index] = here + weight * flow
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Widens the window by `cells` on every side, within the grid.
    private func grow(_ posterior: inout GridPosterior, by cells: Int, grid: FloorGrid) {
        let column0 = max(posterior.column0 - cells, 0)
        let row0 = max(posterior.row0 - cells, 0)
        let column1 = min(posterior.column0 + posterior.columns + cells, grid.columns)
        let row1 = min(posterior.row0 + posterior.rows + cells, grid.rows)
        reshape(&posterior, column0: column0, row0: row0, columns: column1 - column0, rows: row1 - row0)
    }

    private func reshape(_ posterior: inout GridPosterior, column0: Int, row0: Int, columns: Int, rows: Int) {
        guard
            column0 != posterior.column0 || row0 != posterior.row0 || columns != posterior.columns
                || rows != posterior.rows
        else { return }
        var probabilities = [Float](repeating: 0, count: columns * rows)
        let old = posterior.probabilities
        let firstRow = max(row0, posterior.row0)
        let lastRow = min(row0 + rows, posterior.row0 + posterior.rows)
        let firstColumn = max(column0, posterior.column0)
        let lastColumn = min(column0 + columns, posterior.column0 + posterior.columns)
        if firstRow < lastRow, firstColumn < lastColumn {
            for row in firstRow..<lastRow {
                let from = (row - posterior.row0) * posterior.columns - posterior.column0
                let to = (row - row0) * columns - column0
                for column in firstColumn..<lastColumn { probabilities[to + column] = old[from + column] }
            }
        }
        posterior.column0 = column0
        posterior.row0 = row0
        posterior.columns = columns
        posterior.rows = rows
        posterior.probabilities = probabilities
    }

    /// Multiplies in the readings' likelihood, the tag's power offset marginalised per cell, and learns the offset.
    /// Returns false when no cell of the window has any probability left.
    ///
    /// At a cell, reading i differs from the model by e_i with variance σ_i²; the offset δ, a priori N(0, V) around
    /// the learned one, is taken at its most likely value there, δ = Σ(e_i/σ_i²) / (Σ 1/σ_i² + 1/V), and each reading
    /// is weighed by the robust mixture at (e_i − δ)/σ_i. For Gaussian readings that is the exact marginal.
    private mutating func weigh(
        _ posterior: inout GridPosterior,
        observations: [Observation],
        grid: FloorGrid
    ) -> Bool {
        let columns = posterior.columns
        let rows = posterior.rows
        let count = columns * rows
        if sums.count < count {
            sums = [Float](repeating: 0, count: count)
            logs = [Float](repeating: 0, count: count)
            weights = [Float](repeating: 0, count: count)
        }
        let variance = max(posterior.offsetVariance, 1e-6)
        let priorPrecision = Float(1 / variance)
        let penalty = Float(1 / (2 * variance))
        let offset = posterior.offset
        let low = tableLow
        let scale = tableScale
        let top = logLikelihood.count - 1
        let column0 = posterior.column0
        let row0 = posterior.row0
        var maximum = -Float.infinity
        sums.withUnsafeMutableBufferPointer { sums in
            weights.withUnsafeMutableBufferPointer { weights in
                logs.withUnsafeMutableBufferPointer { logs in
                    for index in 0..<count {
                        sums[index] = 0
                        weights[index] = priorPrecision
                    }
                    // First pass: the precision-weighted residuals at each cell, for the offset's estimate there.
                    for observation in observations {
                        let table = grid.tables[observation.slot]
                        let level = Float(observation.level - offset)
                        table.gains.withUnsafeBufferPointer { gains in
                            table.inverseSigmas.withUnsafeBufferPointer { inverse in
                                for row in 0..<rows {
                                    let from = (row0 + row - table.row0) * table.columns + column0 - table.column0
                                    let to = row * columns
                                    for column in 0..<columns {
                                        let precision = inverse[from + column] * inverse[from + column]
                                        sums[to + column] += precision * (level - gains[from + column])
                                        weights[to + column] += precision
                                    }
                                }
                            }
                        }
                    }
                    for index in 0..<count {
                        let delta = sums[index] / weights[index]
                        sums[index] = delta
                        logs[index] = -penalty * delta * delta
                    }
                    // Second pass: each reading's robust likelihood, around the cell's offset.
                    logLikelihood.withUnsafeBufferPointer { curve in
                        for observation in observations {
                            let table = grid.tables[observation.slot]
                            let level = Float(observation.level - offset)
                            table.gains.withUnsafeBufferPointer { gains in
                                table.inverseSigmas.withUnsafeBufferPointer { inverse in
                                    table.logSigmas.withUnsafeBufferPointer { logSigmas in
                                        for row in 0..<rows {
                                            let from =
                                                (row0 + row - table.row0) * table.columns + column0 - table.column0
                                            let to = row * columns
                                            for column in 0..<columns {
                                                let z =
                                                    (level - gains[from + column] - sums[to + column])
                                                    * inverse[from + column]
                                                let position = (z - low) * scale
                                                let slot = position <= 0 ? 0 : min(Int(position), top)
                                                logs[to + column] += curve[slot] - logSigmas[from + column]
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                    posterior.probabilities.withUnsafeBufferPointer { p in
                        for index in 0..<count where p[index] > 0 { maximum = max(maximum, logs[index]) }
                    }
                }
            }
        }
        guard maximum.isFinite else { return false }
        // Learn the offset as if the readings were fewer: shadowing makes consecutive ones agree more than chance.
        let correlation = Float(configuration.readingCorrelation)
        var total: Float = 0
        var deltaMean = 0.0
        var deltaSquare = 0.0
        var precisionMean = 0.0
        posterior.probabilities.withUnsafeMutableBufferPointer { p in
            for index in 0..<count where p[index] > 0 {
                let value = p[index] * exponential(logs[index] - maximum)
                p[index] = value
                total += value
                let readings = weights[index] - priorPrecision
                let delta = Double(sums[index] * weights[index] / (readings + correlation * priorPrecision))
                deltaMean += Double(value) * delta
                deltaSquare += Double(value) * delta * delta
                precisionMean += Double(value) * Double(readings)
            }
            if total > 0 {
                let inverse = 1 / total
                for index in 0..<count { p[index] *= inverse }
            }
        }
        guard total > 0, total.isFinite else { return false }
        deltaMean /= Double(total)
        deltaSquare /= Double(total)
        precisionMean /= Double(total)
        let spread = max(deltaSquare - deltaMean * deltaMean, 0)
        posterior.offset += deltaMean
        let minimum = configuration.minimumOffsetSigma * configuration.minimumOffsetSigma
        posterior.offsetVariance = max(
            1 / (1 / variance + precisionMean / Double(correlation)) + spread, minimum)
        return true
    }

    /// Drops the cells far below the peak, keeping a margin around the rest.
    private func prune(_ posterior: inout GridPosterior) {
        let columns = posterior.columns
        let rows = posterior.rows
        guard let peak = posterior.probabilities.max(), peak > 0 else { return }
        let threshold = peak * Float(configuration.pruneRatio)
        var first = (column: columns, row: rows)
        var last = (column: -1, row: -1)
        for row in 0..<rows {
            for column in 0..<columns where posterior.probabilities[row * columns + column] >= threshold {
                first = (min(first.column, column), min(first.row, row))
                last = (max(last.column, column), max(last.row, row))
            }
        }
        guard last.column >= 0 else { return }
        let margin = Int((configuration.margin / configuration.cellSize).rounded(.up))
        let column0 = max(first.column - margin, 0)
        let row0 = max(first.row - margin, 0)
        let column1 = min(last.column + margin + 1, columns)
        let row1 = min(last.row + margin + 1, rows)
        guard column0 > 0 || row0 > 0 || column1 < columns || row1 < rows else { return }
        reshape(
            &posterior, column0: posterior.column0 + column0, row0: posterior.row0 + row0,
            columns: column1 - column0, rows: row1 - row0)
        let total = posterior.probabilities.reduce(0, +)
        if total > 0 {
            let inverse = 1 / total
            for index in posterior.probabilities.indices { posterior.probabilities[index] *= inverse }
        }
    }

    /// The posterior's mean, spread and mass per zone.
    func summarise(_ posterior: GridPosterior, grid: FloorGrid) -> Summary {
        var zoneMass = [Double](repeating: 0, count: grid.zones.count)
        var sx = 0.0
        var sy = 0.0
        var sxx = 0.0
        var syy = 0.0
        var total = 0.0
        for row in 0..<posterior.rows {
            let y = Double(row)
            let gridBase = (posterior.row0 + row) * grid.columns + posterior.column0
            for column in 0..<posterior.columns {
                let p = Double(posterior.probabilities[row * posterior.columns + column])
                guard p > 0 else { continue }
                let x = Double(column)
                sx += p * x
                sy += p * y
                sxx += p * x * x
                syy += p * y * y
                total += p
                let zone = grid.zoneOfCell[gridBase + column]
                if zone >= 0 { zoneMass[Int(zone)] += p }
            }
        }
        guard total > 0 else {
            return Summary(
                mean: grid.centre(column: posterior.column0, row: posterior.row0), spread: .infinity,
                zoneMass: zoneMass)
        }
        let mx = sx / total
        let my = sy / total
        let variance = max(sxx / total - mx * mx, 0) + max(syy / total - my * my, 0)
        let size = grid.cellSize
        let mean = Point(
            x: grid.origin.x + (Double(posterior.column0) + mx + 0.5) * size,
            y: grid.origin.y + (Double(posterior.row0) + my + 0.5) * size)
        // A single cell still leaves the tag anywhere in it: add the cell's own spread.
        let spread = (variance * size * size + size * size / 6).squareRoot()
        return Summary(mean: mean, spread: spread, zoneMass: zoneMass.map { $0 / total })
    }
}

/// One tag's posterior: a window of its floor's grid with a probability per cell, and its learned power offset.
struct GridPosterior: Sendable {
    /// Which floor grid (index in the tracker's grids).
    var gridIndex: Int
    /// The window: first column and row on the grid, and its size in cells.
    var column0: Int
    var row0: Int
    var columns: Int
    var rows: Int
    /// Probability per cell of the window, row by row; they sum to 1.
    var probabilities: [Float]
    /// The tag's power at 1 m minus its nominal power, in dB, and the variance of that estimate.
    var offset: Double
    var offsetVariance: Double
    /// When it was last updated (seconds).
    var time: Double
    /// Updates in a row loudest at an agent far from the estimate.
    var astray: Int
}
