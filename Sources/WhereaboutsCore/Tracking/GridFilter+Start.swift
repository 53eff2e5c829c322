extension GridFilter {
    /// A window around the loudest agents, uniform over its free cells, into the work buffer; the tag's learned
    /// power offset carries over unless `keepOffset` is false (a young window in the wrong place learned it there).
    /// `heard` is how many agents the update brought.
    /// With `entry` (the stairs by which the tag came onto the floor), the window reaches around them too, and the
    /// cells are weighed by how near them they are (``weight(around:grid:)``).
    mutating func start(
        grid: FloorGrid,
        gridIndex: Int,
        previous: GridPosterior?,
        around entry: Point? = nil,
        keepOffset: Bool = true,
        heard: Int,
        now: Double
    ) -> GridPosterior {
        let radius = configuration.initialRadius
        var low = Point(x: Double.infinity, y: Double.infinity)
        var high = Point(x: -Double.infinity, y: -Double.infinity)
        let loudest = chosen.max { $0.level < $1.level }?.level ?? 0
        for observation in chosen.sorted(by: { $0.level > $1.level }).prefix(3)
        where observation.level >= loudest - 6 {
            let position = grid.tables[observation.slot].agentPosition
            low = Point(x: min(low.x, position.x - radius), y: min(low.y, position.y - radius))
            high = Point(x: max(high.x, position.x + radius), y: max(high.y, position.y + radius))
        }
        if let entry {
            let reach = 2 * configuration.stairsRadius
            low = Point(x: min(low.x, entry.x - reach), y: min(low.y, entry.y - reach))
            high = Point(x: max(high.x, entry.x + reach), y: max(high.y, entry.y + reach))
        }
        var window = Window(column0: 0, row0: 0, columns: grid.columns, rows: grid.rows)
        if low.x.isFinite {
            let first = grid.cell(of: low)
            let last = grid.cell(of: high)
            window = Window(
                column0: first.column, row0: first.row, columns: last.column + 1 - first.column,
                rows: last.row + 1 - first.row)
        }
        var freeCount = fillUniform(window, grid: grid)
        if let entry, freeCount > 0 { weight(around: entry, grid: grid) }
        if freeCount == 0, window.count < grid.columns * grid.rows {
            // Only walls and obstacles around the agents: take the whole floor.
            freeCount = fillUniform(Window(column0: 0, row0: 0, columns: grid.columns, rows: grid.rows), grid: grid)
        }
        if freeCount == 0 {
            // No free cell at all (FloorGrid makes every cell free then, so this is only a guard): uniform.
            for index in 0..<work.count { workProbabilities[index] = 1 / Float(work.count) }
        }
        var probabilities = previous?.probabilities ?? []
        probabilities.removeAll(keepingCapacity: true)
        let full = max(priorVariance, 1e-6)
        let learned = keepOffset ? previous : nil
        return GridPosterior(
            gridIndex: gridIndex, column0: work.column0, row0: work.row0, columns: work.columns, rows: work.rows,
            probabilities: probabilities, offset: learned?.offset ?? 0,
            offsetVariance: learned.map { min($0.offsetVariance + 4, full) } ?? full,
            time: now, astray: 0, startAgents: heard,
            // Updates not reported yet stay, to be reported as they fall due, unless the tag was silent past the
            // restart's limit: then they are old news.
            steps: (previous?.steps ?? []).filter { now - $0.time <= configuration.lag + configuration.resetAfter })
    }

    /// Makes `window` the work window, uniform over its free cells; returns how many there are.
    mutating func fillUniform(_ window: Window, grid: FloorGrid) -> Int {
        setWork(window)
        var freeCount = 0
        let gridColumns = grid.columns
        for row in 0..<window.rows {
            let gridBase = (window.row0 + row) * gridColumns + window.column0
            for column in 0..<window.columns where grid.free[gridBase + column] {
                workProbabilities[row * window.columns + column] = 1
                freeCount += 1
            }
        }
        if freeCount > 0 { GridKernels.scale(&workProbabilities, count: window.count, by: 1 / Float(freeCount)) }
        return freeCount
    }

    /// Weighs the work window's probabilities by a Gaussian of ``Configuration/stairsRadius`` around `entry`, and
    /// normalises them: where the tag came onto the floor is likely, not certain (the floor change is decided a
    /// few seconds after the climb, and the estimate that placed the tag by the stairs may have been poor).
    mutating func weight(around entry: Point, grid: FloorGrid) {
        let window = work
        let scale = -0.5 / (configuration.stairsRadius * configuration.stairsRadius)
        var total: Float = 0
        for row in 0..<window.rows {
            let dy = grid.origin.y + (Double(window.row0 + row) + 0.5) * grid.cellSize - entry.y
            for column in 0..<window.columns {
                let index = row * window.columns + column
                guard workProbabilities[index] > 0 else { continue }
                let dx = grid.origin.x + (Double(window.column0 + column) + 0.5) * grid.cellSize - entry.x
                workProbabilities[index] *= Float(exponential(scale * (dx * dx + dy * dy)))
                total += workProbabilities[index]
            }
        }
        guard total > 0 else { return }
        GridKernels.scale(&workProbabilities, count: window.count, by: 1 / total)
    }

    /// The share of a posterior's mass within ``Configuration/stairsCatchment`` of `point` (stairs or a lift).
    func mass(of posterior: GridPosterior, near point: Point, grid: FloorGrid) -> Double {
        let radius = configuration.stairsCatchment
        let first = grid.cell(of: Point(x: point.x - radius, y: point.y - radius))
        let last = grid.cell(of: Point(x: point.x + radius, y: point.y + radius))
        let column0 = max(first.column, posterior.column0)
        let column1 = min(last.column, posterior.column0 + posterior.columns - 1)
        let row0 = max(first.row, posterior.row0)
        let row1 = min(last.row, posterior.row0 + posterior.rows - 1)
        guard column0 <= column1, row0 <= row1 else { return 0 }
        var total: Float = 0
        for row in row0...row1 {
            for column in column0...column1 where grid.centre(column: column, row: row).distance(to: point) <= radius {
                total +=
                    posterior.probabilities[(row - posterior.row0) * posterior.columns + column - posterior.column0]
            }
        }
        return min(Double(total), 1)
    }

    /// Mixes into the prediction what arrives besides walking: the share `entryShare` coming by the stairs at
    /// `entry`, or else, for a re-seed, ``Configuration/reseedShare`` around the agent whose table is at slot
    /// `reseedAround` (the one heard loudest over the tag's recent readings). Returns whether it mixed.
    mutating func mixArrivals(entry: Point?, entryShare: Double, reseedAround slot: Int?, grid: FloorGrid) -> Bool {
        if let entry, entryShare > 0 { return mixIn(entry, share: min(entryShare, 1), grid: grid) }
        guard let slot else { return false }
        return mixIn(
            grid.tables[slot].agentPosition, share: configuration.reseedShare, grid: grid,
            reach: configuration.reseedRadius)
    }

    /// Mixes into the work window (a prediction, its mass 1) the mass that arrives by stairs or a lift at `entry`,
    /// `share` of the whole: a Gaussian of ``Configuration/stairsRadius`` around it over the free cells within twice
    /// that, as a window started by the stairs has (``fillUniform(_:grid:)``, ``weight(around:grid:)``), the
    /// prediction's mass scaled by 1 − `share`. The window grows to hold both. Returns whether it mixed (not where no
    /// free cell is near `entry`, nor where both would span more than an agent's table reaches).
    ///
    /// With `reach`, the mass spreads uniformly over the free cells within `reach` of `entry` instead: a re-seed
    /// (``Configuration/reseedMisfit``).
    mutating func mixIn(_ entry: Point, share: Double, grid: FloorGrid, reach uniform: Double? = nil) -> Bool {
        let reach = uniform ?? 2 * configuration.stairsRadius
        let first = grid.cell(of: Point(x: entry.x - reach, y: entry.y - reach))
        let last = grid.cell(of: Point(x: entry.x + reach, y: entry.y + reach))
        let around = Window(
            column0: first.column, row0: first.row, columns: last.column + 1 - first.column,
            rows: last.row + 1 - first.row)
        let old = work
        let column0 = min(old.column0, around.column0)
        let row0 = min(old.row0, around.row0)
        let union = Window(
            column0: column0, row0: row0,
            columns: max(old.column0 + old.columns, around.column0 + around.columns) - column0,
            rows: max(old.row0 + old.rows, around.row0 + around.rows) - row0)
        // Wider than an agent's table reaches (the window far from the stairs): agents would be set aside for it.
        let widest = 2 * configuration.gainRadius / grid.cellSize
        guard Double(max(union.columns, union.rows)) <= widest else { return false }
        // Both parts set aside (a tag whose floor is contested: rare enough to allocate for), then added up.
        let predicted = Array(workProbabilities[0..<old.count])
        guard fillUniform(around, grid: grid) > 0 else {
            setWork(old)
            workProbabilities.replaceSubrange(0..<old.count, with: predicted)
            return false
        }
        if uniform == nil { weight(around: entry, grid: grid) }
        let arriving = Array(workProbabilities[0..<around.count])
        setWork(union)
        add(arriving, of: around, times: Float(share), into: union)
        add(predicted, of: old, times: Float(1 - share), into: union)
        return true
    }

    /// Adds `values`, a window's cells, times `factor`, to the work window's cells, which `union` holds.
    mutating func add(_ values: [Float], of window: Window, times factor: Float, into union: Window) {
        for row in 0..<window.rows {
            let base = (window.row0 - union.row0 + row) * union.columns + window.column0 - union.column0
            for column in 0..<window.columns {
                workProbabilities[base + column] += factor * values[row * window.columns + column]
            }
        }
    }
}
