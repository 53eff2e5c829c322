/// A Bayes filter over a floor's cells: the engine's per-tag position estimate.
///
/// Each tag has a ``GridPosterior``: a probability per cell of a window of its floor's ``FloorGrid``. Every update
/// does three things:
/// 1. **Predict.** People walk: the posterior spreads by a Gaussian blur of ``Configuration/walkingSpread``·√dt
///    metres, one pass along rows and one along columns with a sampled Gaussian kernel. Each pass moves mass only
///    along a run of joined cells (free, and no barrier between) and reflects it at the run's ends, so mass never
///    enters an obstacle or crosses a wall except through a door, and none is lost at a wall. The window grows by
///    the kernel's reach (about 3σ), not by the floor.
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
/// ``Configuration/resetAfter`` seconds or keeps being heard loudest far from where it is thought to be. A tag
/// that changed floor starts again around the stairs it took, when the map gives them.
public struct GridFilter: Sendable {
    /// Tuning of the filter.
    public struct Configuration: Sendable, Hashable {
        /// The side of a cell, in metres; nil (the default) chooses it per floor from the floor's zones
        /// (``FloorGrid/automaticCellSize(zones:)``): 0.5 m for rooms a few metres across, up to 1 m for larger ones.
        public var cellSize: Double? = nil
        /// Spread of a reading around the path-loss model, in dB (shadowing, body, orientation).
        public var rssiSigma: Double = 5
        /// How much that spread grows with distance, in dB per metre: a far link crosses more furniture and
        /// people, and the model's error there is larger (added in quadrature).
        public var rssiSigmaPerMetre: Double = 0.3
        /// How uncertain a floor slab's loss (``RadioModel/floorLoss``) is, in dB: added in quadrature to the spread
        /// of readings by agents on the next floors.
        public var floorLossSigma: Double = 5
        /// A floor whose agents hear a tag within this many dB of its own floor's (by the mean of each floor's two
        /// strongest) is one the tag may be on: it gets a posterior of its own (``TagEstimator``'s floor state).
        public var floorOpeningMargin: Double = 6
        /// How often, per second, a person within ``stairsCatchment`` of stairs or a lift changes floor by them.
        public var floorChangeRateByStairs: Double = 0.2
        /// How often, per second, a tag changes floor anywhere else (a lift the map lacks, a floor chosen wrong).
        public var floorChangeRateElsewhere: Double = 0.002
        /// One update's readings never favour a floor by more than 1 / this: each floor's likelihood is mixed with
        /// this weight of the best floor's (shadowing lasts, and a slab's loss varies).
        public var floorEvidenceFloor: Double = 0.2
        /// A floor less likely than this closes, unless its agents or stairs still open it.
        public var floorPruneMass: Double = 1e-3
        /// While another floor is more likely than this, the tag's floor is contested: no zone change is decided.
        public var floorContestMass: Double = 0.2
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
        public var maximumAgentsPerUpdate: Int = 16
        /// The prediction's kernel reaches this many of its sigmas each way (mass beyond is folded back in).
        public var kernelReach: Double = 2.5
        /// Prior spread of a tag's power around what it advertises (or the map's default), in dB.
        public var offsetSigma: Double = 10
        /// The learned power offset is never trusted to better than this, in dB.
        public var minimumOffsetSigma: Double = 1.5
        /// How fast a tag's power offset may drift, in dB² per second.
        public var offsetDrift: Double = 0.05
        /// Readings in a row that count as one independent reading when learning a tag's power: shadowing lasts.
        public var readingCorrelation: Double = 4
        /// Cells below this share of the most probable cell are pruned.
        public var pruneRatio: Double = 1e-2
        /// Kept around the cells that survive pruning, in metres.
        public var margin: Double = 0.5
        /// A (re)started window spans this far (metres) around the loudest agents.
        public var initialRadius: Double = 10
        /// A tag that changes floor by stairs or a lift the map gives arrives on the new floor about this far
        /// (metres, 1σ) from them.
        public var stairsRadius: Double = 2.5
        /// A tag within this many metres of stairs or a lift may take them (``floorChangeRateByStairs``).
        public var stairsCatchment: Double = 3
        /// Each agent's path gains are tabled this far around it (metres); it weighs in only on windows inside.
        public var gainRadius: Double = 30
        /// After this many updates in a row loudest at an agent farther than 1.5 × ``initialRadius`` from the
        /// estimate, the window restarts.
        public var astrayUpdates: Int = 3
        /// Fixed lag, in seconds: 0 (the default) reports each update's filtered posterior; above 0, each update
        /// reports the posterior of the newest earlier update at least this old, smoothed with the readings that
        /// came since (a fixed-lag smoother), so positions are that much later and more accurate.
        public var lag: Double = 0

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
        /// The time the posterior is for: the update's, or with a lag an earlier update's.
        var time: Double
        /// Its floor grid (index in the tracker's grids).
        var gridIndex: Int
        /// Posterior mean position.
        var mean: Point
        /// Root-mean-square distance of the posterior from its mean, in metres.
        var spread: Double
        /// The zones of the floor that hold posterior mass, in the grid's order, with the mass in each.
        var zoneMasses: [ZoneProbability]
    }

    /// A box of cells on a grid: first column and row, and size.
    fileprivate struct Window {
        var column0: Int
        var row0: Int
        var columns: Int
        var rows: Int
        var count: Int { columns * rows }
    }

    let configuration: Configuration
    /// The outlier term's log density, relative to the Gaussian's peak at σ = 1 dB.
    private let outlierLog: Float
    // Buffers reused from update to update, so that a steady update allocates nothing but its summary.
    /// The window being worked on (predicted, then weighed), and its probabilities.
    private var work = Window(column0: 0, row0: 0, columns: 0, rows: 0)
    private var workProbabilities: [Float] = []
    /// The prediction's first pass (along rows).
    private var rowPass: [Float] = []
    private var sums: [Float] = []
    private var logs: [Float] = []
    private var weights: [Float] = []
    private var chosen: [Observation] = []
    /// With a lag: the update's likelihood per cell of the work window, and the smoother's backward factor.
    private var likelihoods: [Float] = []
    private var backward: [Float] = []
    /// The prediction kernel in force: taps from −reach to +reach, and the variance (cells²) it was made for.
    private var kernel: [Float] = [1]
    private var kernelVariance: Double = 0
    /// What ``warmTables(grid:)`` read, kept so that its loads are not optimised away.
    private var warmed: Float = 0

    init(configuration: Configuration) {
        var configuration = configuration
        // A lag that never falls due would keep every update's posterior: at most a minute.
        configuration.lag = configuration.lag.isFinite ? min(max(configuration.lag, 0), 60) : 0
        self.configuration = configuration
        // The robust mixture's log density, up to a constant, is close to max(−z²/2 − log σ, log of the outlier
        // term relative to the Gaussian's peak): the larger of the two terms, which is what matters, and it is
        // cheap enough for every cell and reading. It is off by at most log 2 where the two are equal.
        outlierLog = Float(
            naturalLog(
                configuration.outlierShare / configuration.outlierRange * 2.506_628_274_631
                    / (1 - configuration.outlierShare)))
    }

    // MARK: - Update

    /// Brings a tag's posterior to `now` with the readings of one update; nil when no agent could weigh in.
    ///
    /// `loudest` is the slot of the agent that hears the tag loudest over its recent readings (the tracker's
    /// smoothed RSSIs, not this update's alone), if it has a table on this floor: an estimate far from it for
    /// ``Configuration/astrayUpdates`` updates in a row restarts the window around the loudest agents.
    ///
    /// `entry` is where the tag may come onto this floor from another, by stairs or a lift the map gives, and
    /// `entryShare` the share of its probability on this floor that comes that way now. A window that (re)starts,
    /// or where that share is half or more, starts around them too, its cells weighed by how near them they are
    /// (``Configuration/stairsRadius``); a window that goes on takes that share of its mass there after the
    /// prediction (``mixIn(_:share:grid:)``).
    ///
    /// With ``Configuration/lag`` above 0 the summary is that of an earlier update, smoothed (see
    /// ``smooth(_:now:grids:)``), or nil when no update is old enough yet.
    mutating func update(
        _ state: inout GridPosterior?,
        observations allObservations: [Observation],
        loudest: Int?,
        entry: Point? = nil,
        entryShare: Double = 1,
        grids: [FloorGrid],
        gridIndex: Int,
        now: Double
    ) -> Summary? {
        guard !allObservations.isEmpty else { return nil }
        // The floor's grid borrowed through a buffer pointer: a copy (`let grid = grids[gridIndex]`) retained and
        // released each of its arrays, every update.
        return grids.withUnsafeBufferPointer { buffer in
            update(
                &state, observations: allObservations, loudest: loudest, entry: entry, entryShare: entryShare,
                grid: buffer[gridIndex], grids: grids, gridIndex: gridIndex, now: now)
        }
    }

    /// ``update(_:observations:loudest:entry:entryShare:grids:gridIndex:now:)`` on `grid`, the grid at `gridIndex`
    /// in `grids`.
    private mutating func update(
        _ state: inout GridPosterior?,
        observations allObservations: [Observation],
        loudest: Int?,
        entry: Point?,
        entryShare: Double,
        grid: FloorGrid,
        grids: [FloorGrid],
        gridIndex: Int,
        now: Double
    ) -> Summary? {
        let lagged = configuration.lag > 0
        /// Seconds walked since the posterior's last update; nil when the window (re)starts.
        var elapsed: Double?
        choose(from: allObservations)
        // The agents this update brings (up to the cap), before those whose tables miss the window are set aside.
        let heard = chosen.count
        var posterior: GridPosterior
        // Moved out, not copied: one reference to the probabilities, so that they are rewritten in place.
        var taken = state.take()
        var mixed = false
        let continuing = taken.map { $0.gridIndex == gridIndex && now - $0.time <= configuration.resetAfter } ?? false
        let misplaced = continuing && isMisplaced(taken, heard: heard, loudest: loudest, grid: grid)
        // Most of the floor's mass arriving by the stairs now: the window starts again around them.
        let arriving = entry != nil && entryShare >= 0.5
        if continuing, !arriving, let previous = taken, previous.astray < configuration.astrayUpdates, !misplaced,
            var previous = taken.take()
        {
            elapsed = now - previous.time
            predict(&previous, elapsed: now - previous.time, grid: grid)
            if let entry, entryShare > 0 { mixed = mixIn(entry, share: min(entryShare, 1), grid: grid) }
            posterior = previous
        } else {
            posterior = start(
                grid: grid, gridIndex: gridIndex, previous: taken, around: entry, keepOffset: !misplaced,
                heard: heard, now: now)
        }
        posterior.time = now
        posterior.evidence = 0
        posterior.weighed = 0
        // (Not a window with mass just arrived by the stairs: spread thin there, it is far below the peak.)
        if !mixed { trimWork() }
        setAsideTablesMissingWork(grid: grid)
        if lagged { clearLikelihoods() }
        warmTables(grid: grid)
        var peak: Float?
        if !chosen.isEmpty {
            peak = weigh(&posterior, grid: grid)
            if peak == nil {
                // Nothing in the window fits at all: start again around the loudest agents, weighed by the agents
                // whose tables cover the new window (the weighing reads every chosen table under the whole window).
                posterior = start(grid: grid, gridIndex: gridIndex, previous: posterior, heard: heard, now: now)
                elapsed = nil
                if lagged { clearLikelihoods() }
                choose(from: allObservations)
                setAsideTablesMissingWork(grid: grid)
                if !chosen.isEmpty { peak = weigh(&posterior, grid: grid) }
            }
        }
        let kept = keep(&posterior, grid: grid, peak: peak)
        let summary = summarise(posterior, grid: grid, gridIndex: gridIndex)
        posterior.mean = summary.mean
        posterior.updates += 1
        // Even when its table misses the window: an agent heard loudest far from a window it cannot weigh in on is
        // what says the window is in the wrong place.
        if let loudest {
            posterior.astray = isFar(summary.mean, from: loudest, grid: grid) ? posterior.astray + 1 : 0
        }
        guard lagged else {
            state = posterior
            return summary
        }
        posterior.steps.append(step(of: posterior, kept: kept, elapsed: elapsed))
        let smoothed = smooth(&posterior, now: now, grids: grids)
        state = posterior
        return smoothed
    }

    /// Makes ``chosen`` the observations, at most ``Configuration/maximumAgentsPerUpdate``, the loudest, in the
    /// order of their tables: the weighing adds the agents' terms in that order, and floating-point sums depend on
    /// it, so readings that arrive in another order (agents' batches race each other) give the same bits.
    private mutating func choose(from observations: [Observation]) {
        chosen.removeAll(keepingCapacity: true)
        chosen.append(contentsOf: observations)
        if chosen.count > configuration.maximumAgentsPerUpdate {
            chosen.sort { ($0.level, $1.slot) > ($1.level, $0.slot) }
            chosen.removeLast(chosen.count - configuration.maximumAgentsPerUpdate)
        }
        chosen.sort { $0.slot < $1.slot }
    }

    /// Sets aside the chosen observations whose agent's table does not cover the work window: it cannot weigh in
    /// there, and the weighing reads each chosen table under the whole window.
    private mutating func setAsideTablesMissingWork(grid: FloorGrid) {
        let window = work
        chosen.removeAll { observation in
            !grid.tables[observation.slot].covers(
                column0: window.column0, row0: window.row0, columns: window.columns, rows: window.rows)
        }
    }

    /// Whether a young window (fewer than ``Configuration/astrayUpdates`` updates since it started), started from
    /// fewer agents than the `heard` this update brings, is far from the agent heard loudest over the tag's recent
    /// readings (`loudest`): then it restarts at once, not after ``Configuration/astrayUpdates`` updates astray.
    ///
    /// Live, a new tag is estimated on the first batch that names it, often a far agent's alone, and its window
    /// starts around that agent; the next update brings the agents that hear it well. Left to the astray count, the
    /// window took three more updates (three seconds, one estimate a second) to go where they say, and a tag
    /// heard for four seconds was never placed in its room (`LocatorLifecycleTests`, SIGHUP).
    private func isMisplaced(_ posterior: GridPosterior?, heard: Int, loudest: Int?, grid: FloorGrid) -> Bool {
        guard let posterior, posterior.updates < configuration.astrayUpdates, heard > posterior.startAgents,
            let loudest, let mean = posterior.mean
        else { return false }
        return isFar(mean, from: loudest, grid: grid)
    }

    /// Whether `point` is farther than 1.5 × ``Configuration/initialRadius`` from the agent whose table is at
    /// `slot`: farther than a window started around that agent reaches.
    private func isFar(_ point: Point, from slot: Int, grid: FloorGrid) -> Bool {
        grid.tables[slot].agentPosition.distance(to: point) > 1.5 * configuration.initialRadius
    }

    /// The log likelihood of an update's `readings` (how many it brought, up to
    /// ``Configuration/maximumAgentsPerUpdate``) with the tag on a posterior's floor, up to a constant that is the
    /// same on every floor: `evidence` for the `weighed` ones (``GridPosterior/evidence``: marginal over the window
    /// before the update, its prediction); the rest, whose agents have no table reaching the window, at the outlier
    /// term, the least a weighed reading's term can be.
    func floorEvidence(evidence: Double, weighed: Int, readings: Int) -> Double {
        let unweighed = max(min(readings, configuration.maximumAgentsPerUpdate) - weighed, 0)
        return evidence + Double(unweighed) * Double(outlierLog)
    }

    // MARK: - Fixed lag

    /// The update just made, for the smoother: its filtered posterior and its likelihood on the same cells.
    private func step(of posterior: GridPosterior, kept: Window, elapsed: Double?) -> GridStep {
        var likelihood: [Float] = []
        likelihood.reserveCapacity(kept.count)
        let columns = work.columns
        likelihoods.withUnsafeBufferPointer { l in
            for row in kept.row0..<kept.row0 + kept.rows {
                let base = row * columns
                likelihood.append(contentsOf: l[base + kept.column0..<base + kept.column0 + kept.columns])
            }
        }
        return GridStep(
            gridIndex: posterior.gridIndex, column0: posterior.column0, row0: posterior.row0,
            columns: posterior.columns, rows: posterior.rows, time: posterior.time,
            filtered: posterior.probabilities, likelihood: likelihood, elapsed: elapsed)
    }

    /// Sets the likelihood of every cell of the work window to 1 (no reading weighed yet).
    private mutating func clearLikelihoods() {
        let count = work.count
        if likelihoods.count < count {
            likelihoods = [Float](repeating: 1, count: count)
        } else {
            likelihoods.withUnsafeMutableBufferPointer { l in
                for index in 0..<count { l[index] = 1 }
            }
        }
    }

    /// The fixed-lag smoother: the newest kept step at least ``Configuration/lag`` old (and not reported yet),
    /// given every reading since, summarised; nil when there is none. The steps up to it are then dropped.
    ///
    /// Backward from the newest step n, with β_n = 1: β_k(x) = Σ_x' T(x, x') · ℓ_k+1(x') · β_k+1(x'), where T is the
    /// prediction's walk and ℓ the step's likelihood; the smoothed posterior of step m is filtered_m · β_m,
    /// normalised. T is the same blur the prediction runs, applied to ℓ·β (the blur along rows then columns is
    /// symmetric away from walls; beside them, the order of its two passes makes it slightly less so). A step
    /// that restarted the window breaks the chain: β is 1 again before it.
    private mutating func smooth(_ posterior: inout GridPosterior, now: Double, grids: [FloorGrid]) -> Summary? {
        let due = now - configuration.lag + 1e-6
        guard let target = posterior.steps.lastIndex(where: { $0.time <= due }) else { return nil }
        var index = posterior.steps.count - 1
        setBackward(count: posterior.steps[index].filtered.count)
        while index > target {
            let step = posterior.steps[index]
            let before = posterior.steps[index - 1]
            guard let elapsed = step.elapsed, step.gridIndex == before.gridIndex else {
                setBackward(count: before.filtered.count)
                index -= 1
                continue
            }
            var carried = GridPosterior(
                gridIndex: step.gridIndex, column0: step.column0, row0: step.row0, columns: step.columns,
                rows: step.rows, probabilities: step.likelihood, offset: 0, offsetVariance: 0, time: step.time,
                astray: 0)
            // Only where the step's posterior has mass: the other cells (walls, obstacles, pruned away) are no
            // place the tag could have been, and the walk never leaves from them.
            carried.probabilities.withUnsafeMutableBufferPointer { g in
                backward.withUnsafeBufferPointer { b in
                    step.filtered.withUnsafeBufferPointer { f in
                        for cell in 0..<g.count { g[cell] = f[cell] > 0 ? g[cell] * b[cell] : 0 }
                    }
                }
            }
            predict(&carried, elapsed: elapsed, grid: grids[step.gridIndex])
            readBackward(onto: before)
            index -= 1
        }
        let step = posterior.steps[target]
        var smoothed = GridPosterior(
            gridIndex: step.gridIndex, column0: step.column0, row0: step.row0, columns: step.columns,
            rows: step.rows, probabilities: step.filtered, offset: 0, offsetVariance: 0, time: step.time,
            astray: 0)
        var total: Float = 0
        smoothed.probabilities.withUnsafeMutableBufferPointer { p in
            backward.withUnsafeBufferPointer { b in
                for cell in 0..<p.count {
                    p[cell] *= b[cell]
                    total += p[cell]
                }
            }
        }
        // Nothing left (only rounding could do it): the filtered posterior stands. Otherwise scaled so that its
        // largest cell is 1: the product can be tiny, and summarise adds in Float.
        if !(total > 0) || !total.isFinite {
            smoothed.probabilities = step.filtered
        } else {
            smoothed.probabilities.withUnsafeMutableBufferPointer { p in
                let peak = largest(UnsafeBufferPointer(p))
                guard peak > 0, peak.isFinite else { return }
                let inverse = 1 / peak
                for cell in 0..<p.count { p[cell] *= inverse }
            }
        }
        posterior.steps.removeFirst(target + 1)
        return summarise(smoothed, grid: grids[step.gridIndex], gridIndex: step.gridIndex)
    }

    /// The backward factor: 1 on each of `count` cells.
    private mutating func setBackward(count: Int) {
        backward.removeAll(keepingCapacity: true)
        backward.reserveCapacity(count)
        for _ in 0..<count { backward.append(1) }
    }

    /// The backward factor on `step`'s cells, from the blur in the work window, scaled so that its largest is 1.
    private mutating func readBackward(onto step: GridStep) {
        backward.removeAll(keepingCapacity: true)
        backward.reserveCapacity(step.columns * step.rows)
        let window = work
        var peak: Float = 0
        workProbabilities.withUnsafeBufferPointer { w in
            for row in step.row0..<step.row0 + step.rows {
                let workRow = row - window.row0
                for column in step.column0..<step.column0 + step.columns {
                    let workColumn = column - window.column0
                    let inside = workRow >= 0 && workRow < window.rows && workColumn >= 0 && workColumn < window.columns
                    let value = inside ? w[workRow * window.columns + workColumn] : 0
                    backward.append(value)
                    peak = max(peak, value)
                }
            }
        }
        guard peak > 0, peak.isFinite else {
            // No cell of the earlier step leads anywhere kept: no information, not none at all.
            setBackward(count: step.columns * step.rows)
            return
        }
        let inverse = 1 / peak
        backward.withUnsafeMutableBufferPointer { b in
            for cell in 0..<b.count { b[cell] *= inverse }
        }
    }

    /// A window around the loudest agents, uniform over its free cells, into the work buffer; the tag's learned
    /// power offset carries over unless `keepOffset` is false (a young window in the wrong place learned it there).
    /// `heard` is how many agents the update brought.
    /// With `entry` (the stairs by which the tag came onto the floor), the window reaches around them too, and the
    /// cells are weighed by how near them they are (``weight(around:grid:)``).
    private mutating func start(
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
        let full = configuration.offsetSigma * configuration.offsetSigma
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
    private mutating func fillUniform(_ window: Window, grid: FloorGrid) -> Int {
        setWork(window)
        var freeCount = 0
        let gridColumns = grid.columns
        grid.free.withUnsafeBufferPointer { free in
            workProbabilities.withUnsafeMutableBufferPointer { p in
                for row in 0..<window.rows {
                    let gridBase = (window.row0 + row) * gridColumns + window.column0
                    for column in 0..<window.columns where free[gridBase + column] {
                        p[row * window.columns + column] = 1
                        freeCount += 1
                    }
                }
                if freeCount > 0 {
                    let share = 1 / Float(freeCount)
                    for index in 0..<window.count { p[index] *= share }
                }
            }
        }
        return freeCount
    }

    /// Weighs the work window's probabilities by a Gaussian of ``Configuration/stairsRadius`` around `entry`, and
    /// normalises them: where the tag came onto the floor is likely, not certain (the floor change is decided a
    /// few seconds after the climb, and the estimate that placed the tag by the stairs may have been poor).
    private mutating func weight(around entry: Point, grid: FloorGrid) {
        let window = work
        let scale = -0.5 / (configuration.stairsRadius * configuration.stairsRadius)
        var total: Float = 0
        workProbabilities.withUnsafeMutableBufferPointer { p in
            for row in 0..<window.rows {
                let dy = grid.origin.y + (Double(window.row0 + row) + 0.5) * grid.cellSize - entry.y
                for column in 0..<window.columns {
                    let index = row * window.columns + column
                    guard p[index] > 0 else { continue }
                    let dx = grid.origin.x + (Double(window.column0 + column) + 0.5) * grid.cellSize - entry.x
                    p[index] *= Float(exponential(scale * (dx * dx + dy * dy)))
                    total += p[index]
                }
            }
            guard total > 0 else { return }
            let inverse = 1 / total
            for index in 0..<window.count { p[index] *= inverse }
        }
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

    /// Mixes into the work window (a prediction, its mass 1) the mass that arrives by stairs or a lift at `entry`,
    /// `share` of the whole: a Gaussian of ``Configuration/stairsRadius`` around it over the free cells within twice
    /// that, as a window started by the stairs has (``fillUniform(_:grid:)``, ``weight(around:grid:)``), the
    /// prediction's mass scaled by 1 − `share`. The window grows to hold both. Returns whether it mixed (not where no
    /// free cell is near `entry`, nor where both would span more than an agent's table reaches).
    private mutating func mixIn(_ entry: Point, share: Double, grid: FloorGrid) -> Bool {
        let reach = 2 * configuration.stairsRadius
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
        weight(around: entry, grid: grid)
        let arriving = Array(workProbabilities[0..<around.count])
        setWork(union)
        add(arriving, of: around, times: Float(share), into: union)
        add(predicted, of: old, times: Float(1 - share), into: union)
        return true
    }

    /// Adds `values`, a window's cells, times `factor`, to the work window's cells, which `union` holds.
    private mutating func add(_ values: [Float], of window: Window, times factor: Float, into union: Window) {
        workProbabilities.withUnsafeMutableBufferPointer { p in
            for row in 0..<window.rows {
                let base = (window.row0 - union.row0 + row) * union.columns + window.column0 - union.column0
                for column in 0..<window.columns { p[base + column] += factor * values[row * window.columns + column] }
            }
        }
    }

    /// Makes `window` the work window, all zero.
    private mutating func setWork(_ window: Window) {
        work = window
        if workProbabilities.count < window.count {
            workProbabilities = [Float](repeating: 0, count: window.count)
        } else {
            workProbabilities.withUnsafeMutableBufferPointer { p in
                for index in 0..<window.count { p[index] = 0 }
            }
        }
    }

    /// The sampled Gaussian of `variance` cells², taps from −reach to +reach; three exact taps when it is narrow.
    private mutating func prepareKernel(variance: Double) {
        guard variance != kernelVariance else { return }
        kernelVariance = variance
        if variance < 0.5 {
            // Too narrow to sample: a three-tap kernel of exactly this variance.
            let side = Float(variance / 2)
            kernel = [side, 1 - 2 * side, side]
            return
        }
        let sigma = variance.squareRoot()
        let reach = max(Int((configuration.kernelReach * sigma).rounded(.up)), 1)
        var taps = [Float](repeating: 0, count: 2 * reach + 1)
        var total = 0.0
        for offset in -reach...reach {
            let value = exponential(-Double(offset * offset) / (2 * variance))
            taps[offset + reach] = Float(value)
            total += value
        }
        for index in taps.indices { taps[index] /= Float(total) }
        kernel = taps
    }

    /// Spreads the posterior as people walk in `elapsed` seconds, within runs of joined cells, into the work
    /// window, which is the posterior's window grown by the kernel's reach.
    private mutating func predict(_ posterior: inout GridPosterior, elapsed: Double, grid: FloorGrid) {
        posterior.offsetVariance += configuration.offsetDrift * max(elapsed, 0)
        let spread = configuration.walkingSpread / grid.cellSize
        let variance = spread * spread * min(max(elapsed, 0), configuration.resetAfter)
        if variance < 1e-4 {
            // No time to walk: the prior is the posterior.
            setWork(
                Window(
                    column0: posterior.column0, row0: posterior.row0, columns: posterior.columns,
                    rows: posterior.rows))
            posterior.probabilities.withUnsafeBufferPointer { source in
                workProbabilities.withUnsafeMutableBufferPointer { target in
                    for index in 0..<source.count { target[index] = source[index] }
                }
            }
            return
        }
        prepareKernel(variance: variance)
        let reach = kernel.count / 2
        let target = Window(
            column0: max(posterior.column0 - reach, 0),
            row0: max(posterior.row0 - reach, 0),
            columns: min(posterior.column0 + posterior.columns + reach, grid.columns)
                - max(posterior.column0 - reach, 0),
            rows: min(posterior.row0 + posterior.rows + reach, grid.rows) - max(posterior.row0 - reach, 0))
        setWork(target)
        // First pass, along rows: the posterior's rows, the target's columns.
        let sourceColumns = posterior.columns
        let sourceRows = posterior.rows
        let width = target.columns
        let rowPassCount = width * sourceRows
        if rowPass.count < rowPassCount {
            rowPass = [Float](repeating: 0, count: rowPassCount)
        } else {
            rowPass.withUnsafeMutableBufferPointer { buffer in
                for index in 0..<rowPassCount { buffer[index] = 0 }
            }
        }
        let gridColumns = grid.columns
        let sourceColumn0 = posterior.column0
        let sourceRow0 = posterior.row0
        kernel.withUnsafeBufferPointer { taps in
            grid.eastRunFirst.withUnsafeBufferPointer { runFirst in
                grid.eastRunLast.withUnsafeBufferPointer { runLast in
                    posterior.probabilities.withUnsafeBufferPointer { source in
                        rowPass.withUnsafeMutableBufferPointer { pass in
                            for row in 0..<sourceRows {
                                let gridBase = (sourceRow0 + row) * gridColumns
                                let passBase = row * width - target.column0
                                let sourceBase = row * sourceColumns
                                // A row whose every cell with mass reaches the whole kernel within its run is spread
                                // as one shifted copy of the row per tap.
                                // Whole shifted copies of the row only when they stay inside the target: a window
                                // at the grid's edge is clipped there, though its mass may be far from the edge.
                                var open =
                                    sourceColumn0 - reach >= target.column0
                                    && sourceColumn0 + sourceColumns + reach <= target.column0 + width
                                var empty = true
                                for column in 0..<sourceColumns where source[sourceBase + column] > 0 {
                                    empty = false
                                    let gridColumn = sourceColumn0 + column
                                    if Int(runFirst[gridBase + gridColumn]) > gridColumn - reach
                                        || Int(runLast[gridBase + gridColumn]) < gridColumn + reach
                                    {
                                        open = false
                                        break
                                    }
                                }
                                // A row without mass moves nothing (and may lie within reach of the grid's edge).
                                if empty { continue }
                                if open {
                                    let sourceRow = UnsafeBufferPointer(
                                        rebasing: source[sourceBase..<sourceBase + sourceColumns])
                                    for tap in 0..<taps.count {
                                        let base = passBase + sourceColumn0 - reach + tap
                                        addScaled(
                                            taps[tap], sourceRow,
                                            to: UnsafeMutableBufferPointer(rebasing: pass[base..<base + sourceColumns]))
                                    }
                                    continue
                                }
                                for column in 0..<sourceColumns {
                                    let mass = source[row * sourceColumns + column]
                                    guard mass > 0 else { continue }
                                    let gridColumn = sourceColumn0 + column
                                    let first = Int(runFirst[gridBase + gridColumn])
                                    let last = Int(runLast[gridBase + gridColumn])
                                    let low = gridColumn - reach
                                    if low >= first, gridColumn + reach <= last {
                                        let base = passBase + low
                                        addScaled(
                                            mass, taps,
                                            to: UnsafeMutableBufferPointer(rebasing: pass[base..<base + taps.count]))
                                    } else {
                                        for tap in 0..<taps.count {
                                            pass[passBase + fold(low + tap, first, last)] += mass * taps[tap]
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        // Second pass, along columns: into the target window. A row whose every cell with mass can reach the whole
        // kernel within its column's run is spread as whole rows.
        kernel.withUnsafeBufferPointer { taps in
            grid.northRunFirst.withUnsafeBufferPointer { runFirst in
                grid.northRunLast.withUnsafeBufferPointer { runLast in
                    rowPass.withUnsafeBufferPointer { pass in
                        workProbabilities.withUnsafeMutableBufferPointer { next in
                            for row in 0..<sourceRows {
                                let gridRow = sourceRow0 + row
                                let gridBase = gridRow * gridColumns + target.column0
                                let passBase = row * width
                                var open = true
                                var empty = true
                                for column in 0..<width where pass[passBase + column] > 0 {
                                    empty = false
                                    if Int(runFirst[gridBase + column]) > gridRow - reach
                                        || Int(runLast[gridBase + column]) < gridRow + reach
                                    {
                                        open = false
                                        break
                                    }
                                }
                                if empty { continue }
                                if open {
                                    let source = UnsafeBufferPointer(rebasing: pass[passBase..<passBase + width])
                                    for tap in 0..<taps.count {
                                        let nextBase = (gridRow - reach + tap - target.row0) * width
                                        addScaled(
                                            taps[tap], source,
                                            to: UnsafeMutableBufferPointer(rebasing: next[nextBase..<nextBase + width]))
                                    }
                                    continue
                                }
                                for column in 0..<width {
                                    let mass = pass[passBase + column]
                                    guard mass > 0 else { continue }
                                    let first = Int(runFirst[gridBase + column])
                                    let last = Int(runLast[gridBase + column])
                                    for tap in 0..<taps.count {
                                        let targetRow = fold(gridRow - reach + tap, first, last) - target.row0
                                        next[targetRow * width + column] += mass * taps[tap]
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Shrinks the work window to the cells whose probability is at least ``Configuration/pruneRatio`` of the peak:
    /// the prediction spreads a posterior's far tail too, and weighing cells that cannot matter is most of the cost.
    private mutating func trimWork() {
        guard let box = boundingBox(ratio: Float(configuration.pruneRatio), margin: 0) else { return }
        let window = work
        guard box.column0 > 0 || box.row0 > 0 || box.columns < window.columns || box.rows < window.rows else { return }
        workProbabilities.withUnsafeMutableBufferPointer { p in
            // Row by row towards the front: a cell never moves to a later index, so nothing is overwritten unread.
            for row in 0..<box.rows {
                let from = (box.row0 + row) * window.columns + box.column0
                let to = row * box.columns
                for column in 0..<box.columns { p[to + column] = p[from + column] }
            }
        }
        work = Window(
            column0: window.column0 + box.column0, row0: window.row0 + box.row0, columns: box.columns, rows: box.rows)
    }

    /// The box, in the work window's cells, of the cells at least `ratio` of the peak, grown by `margin` cells within
    /// the window; nil when every cell is 0. `peak` is the largest cell, when the caller knows it.
    private func boundingBox(ratio: Float, margin: Int, peak knownPeak: Float? = nil) -> Window? {
        let window = work
        let columns = window.columns
        let rows = window.rows
        // The first and last rows with a cell at the threshold are found by whole rows from each end; the rows
        // between them can only widen the box, so each is read only outside the columns the box already spans
        // (most of the window is inside it: this was a scan of every cell, 5 % of the engine).
        let box: (left: Int, right: Int, top: Int, bottom: Int)? = workProbabilities.withUnsafeBufferPointer { p in
            let peak = knownPeak ?? largest(UnsafeBufferPointer(rebasing: p[0..<window.count]))
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
        guard let box else { return nil }
        let column0 = max(box.left - margin, 0)
        let row0 = max(box.top - margin, 0)
        return Window(
            column0: column0, row0: row0, columns: min(box.right + margin + 1, columns) - column0,
            rows: min(box.bottom + margin + 1, rows) - row0)
    }

    /// Reads a float of every cache line of the table rows that ``weigh(_:grid:)`` will read, before it does.
    ///
    /// Live, each update of the engine estimates tags all over the site, so an agent's table rows under a tag's
    /// window are rarely in the cache (200 agents' tables are 8.6 MB on the bench's 200-room floor), and the
    /// weighing waited on them: 70 % of its samples in `perf annotate` fell on the instructions after its three
    /// table loads. The weighing's loads come a row at a time with arithmetic between them; loads alone, independent
    /// of each other, are many at once in flight, so the misses overlap.
    private mutating func warmTables(grid: FloorGrid) {
        let window = work
        let columns = window.columns
        guard columns > 0 else { return }
        var sum: Float = 0
        withTableRows(of: chosen, grid: grid, window: window, offset: 0) { tables in
            for table in tables {
                for row in 0..<window.rows {
                    let from = row * table.stride
                    // 16 floats to a 64-byte line; the row's last float, for the line it may end on.
                    for index in stride(from: from, to: from + columns, by: 16) {
                        sum += table.gains[index] + table.inverseSigmas[index] + table.logSigmas[index]
                    }
                    let last = from + columns - 1
                    sum += table.gains[last] + table.inverseSigmas[last] + table.logSigmas[last]
                }
            }
        }
        warmed = sum
    }

    /// Multiplies in the readings' likelihood over the work window, the tag's power offset marginalised per cell,
    /// and learns the offset. Returns the largest probability left in the window (not normalised), or nil when no
    /// cell has any.
    ///
    /// At a cell, reading i differs from the model by e_i with variance σ_i²; the offset δ, a priori N(0, V) around
    /// the learned one, is taken at its most likely value there, δ = Σ(e_i/σ_i²) / (Σ 1/σ_i² + 1/V), and each reading
    /// is weighed by the robust mixture at (e_i − δ)/σ_i. For Gaussian readings that is the exact marginal.
    private mutating func weigh(_ posterior: inout GridPosterior, grid: FloorGrid) -> Float? {
        let window = work
        let columns = window.columns
        let rows = window.rows
        let count = window.count
        if sums.count < count {
            sums = [Float](repeating: 0, count: count)
            logs = [Float](repeating: 0, count: count)
            weights = [Float](repeating: 0, count: count)
        }
        let variance = max(posterior.offsetVariance, 1e-6)
        let priorPrecision = Float(1 / variance)
        let penalty = Float(1 / (2 * variance))
        let offset = posterior.offset
        let outlierLog = self.outlierLog
        var maximum = -Float.infinity
        withTableRows(of: chosen, grid: grid, window: window, offset: offset) { tables in
            sums.withUnsafeMutableBufferPointer { sums in
                weights.withUnsafeMutableBufferPointer { weights in
                    logs.withUnsafeMutableBufferPointer { logs in
                        // (Never nil: the buffers hold the window's cells, and a window has one at least.)
                        guard let sumCells = sums.baseAddress, let weightCells = weights.baseAddress,
                            let logCells = logs.baseAddress
                        else { return }
                        let cells = WeighedCells(
                            tables: tables, priorPrecision: priorPrecision, penalty: penalty, floor: outlierLog,
                            deltas: sumCells, weights: weightCells, logs: logCells)
                        for row in 0..<rows {
                            cells.weighRow(row, columns: columns, at: row * columns)
                        }
                        workProbabilities.withUnsafeBufferPointer { p in
                            maximum = largest(
                                UnsafeBufferPointer(rebasing: logs[0..<count]),
                                whereAbove0: UnsafeBufferPointer(rebasing: p[0..<count]))
                        }
                    }
                }
            }
        }
        guard maximum.isFinite else { return nil }
        // Learn the offset as if the readings were fewer: shadowing makes consecutive ones agree more than chance.
        let correlation = Float(configuration.readingCorrelation)
        var totals = SIMD4<Float>.zero  // probability, × offset, × offset², × readings' precision
        var peak: Float = 0
        workProbabilities.withUnsafeMutableBufferPointer { p in
            sums.withUnsafeMutableBufferPointer { sums in
                weights.withUnsafeMutableBufferPointer { weights in
                    logs.withUnsafeBufferPointer { logs in
                        // Element by element (vectorised): the new probabilities, and each cell's offset estimate.
                        for index in 0..<count {
                            p[index] *= fastExponential(min(logs[index] - maximum, 0))
                            let readings = weights[index] - priorPrecision
                            sums[index] = sums[index] * weights[index] / (readings + correlation * priorPrecision)
                            weights[index] = readings
                        }
                    }
                    (totals, peak) = weightedMoments(
                        UnsafeBufferPointer(rebasing: p[0..<count]), UnsafeBufferPointer(rebasing: sums[0..<count]),
                        UnsafeBufferPointer(rebasing: weights[0..<count]))
                }
            }
        }
        // Not normalised here: ``keep(_:grid:)`` normalises the cells it keeps, and nothing reads the others.
        if configuration.lag > 0 {
            // The smoother's copy of the likelihood, made only with a lag (the loop above is the filter's hot path).
            logs.withUnsafeBufferPointer { l in
                likelihoods.withUnsafeMutableBufferPointer { target in
                    for index in 0..<count { target[index] = fastExponential(min(l[index] - maximum, 0)) }
                }
            }
        }
        let total = totals[0]
        let deltaMean = totals[1]
        let deltaSquare = totals[2]
        let precisionMean = totals[3]
        guard total > 0, total.isFinite else { return nil }
        posterior.evidence = naturalLog(Double(total)) + Double(maximum)
        posterior.weighed = chosen.count
        let mean = Double(deltaMean / total)
        let spread = max(Double(deltaSquare / total) - mean * mean, 0)
        posterior.offset += mean
        let minimum = configuration.minimumOffsetSigma * configuration.minimumOffsetSigma
        posterior.offsetVariance = max(
            1 / (1 / variance + Double(precisionMean / total) / Double(correlation)) + spread, minimum)
        return peak
    }

    /// Makes the work window the tag's posterior, without the cells far below the peak (a margin kept around the
    /// rest), normalised. `peak` is the window's largest cell, when the weighing found it.
    @discardableResult
    private func keep(_ posterior: inout GridPosterior, grid: FloorGrid, peak: Float?) -> Window {
        let window = work
        let columns = window.columns
        let margin = Int((configuration.margin / grid.cellSize).rounded(.up))
        // Nothing above the threshold (an all-zero window): keep it all.
        let box =
            boundingBox(ratio: Float(configuration.pruneRatio), margin: margin, peak: peak)
            ?? Window(column0: 0, row0: 0, columns: columns, rows: window.rows)
        let column0 = box.column0
        let row0 = box.row0
        let column1 = box.column0 + box.columns
        let row1 = box.row0 + box.rows
        posterior.column0 = window.column0 + column0
        posterior.row0 = window.row0 + row0
        posterior.columns = column1 - column0
        posterior.rows = row1 - row0
        let keptCount = posterior.columns * posterior.rows
        if posterior.probabilities.capacity > 2 * keptCount + 256 {
            // Much larger than needed (a restart's wide window, long since narrowed): at 10,000 tags, buffers kept
            // at their widest hold most of the locator's memory.
            posterior.probabilities = []
        } else {
            posterior.probabilities.removeAll(keepingCapacity: true)
        }
        posterior.probabilities.reserveCapacity(keptCount)
        workProbabilities.withUnsafeBufferPointer { p in
            for row in row0..<row1 {
                let base = row * columns
                posterior.probabilities.append(
                    contentsOf: UnsafeBufferPointer(rebasing: p[base + column0..<base + column1]))
            }
        }
        let total = posterior.probabilities.withUnsafeBufferPointer { sum($0) }
        if total > 0 {
            let inverse = 1 / total
            posterior.probabilities.withUnsafeMutableBufferPointer { p in
                for index in 0..<keptCount { p[index] *= inverse }
            }
        }
        return box
    }

    /// The posterior's mean, spread and mass per zone.
    func summarise(_ posterior: GridPosterior, grid: FloorGrid, gridIndex: Int) -> Summary {
        // Summed per zone of the floor in a temporary buffer (on the stack, for a floor of up to 128 zones at least),
        // then only the zones with mass kept.
        withUnsafeTemporaryAllocation(of: Double.self, capacity: grid.zones.count) { zoneMass in
            zoneMass.initialize(repeating: 0)
            return summarise(posterior, grid: grid, gridIndex: gridIndex, zoneMass: zoneMass)
        }
    }

    /// ``summarise(_:grid:gridIndex:)``, summing the mass per zone in `zoneMass` (zeroed, one per zone).
    private func summarise(
        _ posterior: GridPosterior, grid: FloorGrid, gridIndex: Int, zoneMass: UnsafeMutableBufferPointer<Double>
    ) -> Summary {
        var sx = 0.0
        var sy = 0.0
        var sxx = 0.0
        var syy = 0.0
        var total = 0.0
        posterior.probabilities.withUnsafeBufferPointer { probabilities in
            grid.zoneOfCell.withUnsafeBufferPointer { zoneOfCell in
                for row in 0..<posterior.rows {
                    let y = Double(row)
                    let gridBase = (posterior.row0 + row) * grid.columns + posterior.column0
                    var rowTotal: Float = 0
                    var rowX: Float = 0
                    var rowXX: Float = 0
                    for column in 0..<posterior.columns {
                        let p = probabilities[row * posterior.columns + column]
                        guard p > 0 else { continue }
                        let x = Float(column)
                        rowTotal += p
                        rowX += p * x
                        rowXX += p * x * x
                        let cell = gridBase + column
                        let zone = zoneOfCell[cell]
                        guard zone >= 0 else { continue }
                        zoneMass[Int(zone)] += Double(p * grid.zoneShareOfCell[cell])
                        let second = grid.secondZoneOfCell[cell]
                        if second >= 0 { zoneMass[Int(second)] += Double(p * grid.secondZoneShareOfCell[cell]) }
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
        guard total > 0 else {
            return Summary(
                time: posterior.time, gridIndex: gridIndex,
                mean: grid.centre(column: posterior.column0, row: posterior.row0), spread: .infinity,
                zoneMasses: [])
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
        let inverse = 1 / total
        var zoneMasses: [ZoneProbability] = []
        zoneMasses.reserveCapacity(zoneMass.count { $0 > 0 })
        for index in zoneMass.indices where zoneMass[index] > 0 {
            zoneMasses.append(ZoneProbability(zone: grid.zones[index], probability: zoneMass[index] * inverse))
        }
        return Summary(
            time: posterior.time, gridIndex: gridIndex, mean: mean, spread: spread, zoneMasses: zoneMasses)
    }
}

/// y += a·x, elementwise.
@inline(__always)
private func addScaled(_ a: Float, _ x: UnsafeBufferPointer<Float>, to y: UnsafeMutableBufferPointer<Float>) {
    for index in 0..<y.count { y[index] += a * x[index] }
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
    window: GridFilter.Window,
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

/// The weighing of the work window's cells (``GridFilter/weigh(_:grid:)``), a row at a time: per cell, the offset
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
    let deltas: UnsafeMutablePointer<Float>
    let weights: UnsafeMutablePointer<Float>
    let logs: UnsafeMutablePointer<Float>

    /// Row `row` of the window, `columns` cells, its results from index `output` on, four cells at a time; a row's
    /// last four overlap the four before rather than run past the row (a cell is computed from the tables alone,
    /// so one done twice comes out the same).
    @inline(__always)
    func weighRow(_ row: Int, columns: Int, at output: Int) {
        guard columns >= 4 else {
            weigh(FirstLanes(count: columns), row: row, column: 0, at: output)
            return
        }
        var column = 0
        while column < columns {
            let start = min(column, columns - 4)
            weigh(AllLanes(), row: row, column: start, at: output + start)
            column += 4
        }
    }

    /// Four cells of row `row` from `column` (those `lanes` reaches).
    @inline(__always)
    private func weigh<Lanes: CellLanes>(_ lanes: Lanes, row: Int, column: Int, at output: Int) {
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
        lanes.store(deltas, to: self.deltas + output)
        lanes.store(weights, to: self.weights + output)
        lanes.store(logs, to: self.logs + output)
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

/// Σp, Σp·d, Σp·d², Σp·r over the cells, and the largest p, four lanes at a time (a plain loop would add one cell
/// at a time: floating point sums are not reordered for us).
@inline(__always)
private func weightedMoments(
    _ p: UnsafeBufferPointer<Float>,
    _ d: UnsafeBufferPointer<Float>,
    _ r: UnsafeBufferPointer<Float>
) -> (moments: SIMD4<Float>, largest: Float) {
    var largest = SIMD4<Float>.zero
    var total = SIMD4<Float>.zero
    var first = SIMD4<Float>.zero
    var second = SIMD4<Float>.zero
    var precision = SIMD4<Float>.zero
    let whole = p.count & ~3
    var index = 0
    while index < whole {
        let mass = SIMD4(p[index], p[index &+ 1], p[index &+ 2], p[index &+ 3])
        let delta = SIMD4(d[index], d[index &+ 1], d[index &+ 2], d[index &+ 3])
        let readings = SIMD4(r[index], r[index &+ 1], r[index &+ 2], r[index &+ 3])
        let weighted = mass * delta
        largest.replace(with: mass, where: mass .> largest)
        total += mass
        first += weighted
        second += weighted * delta
        precision += mass * readings
        index &+= 4
    }
    var result = SIMD4(total.sum(), first.sum(), second.sum(), precision.sum())
    var peak = largest.max()
    while index < p.count {
        result += SIMD4(p[index], p[index] * d[index], p[index] * d[index] * d[index], p[index] * r[index])
        peak = max(peak, p[index])
        index &+= 1
    }
    return (result, peak)
}

/// The sum of `values`, four lanes at a time.
@inline(__always)
private func sum(_ values: UnsafeBufferPointer<Float>) -> Float {
    var lanes = SIMD4<Float>.zero
    let whole = values.count & ~3
    var index = 0
    while index < whole {
        lanes += SIMD4(values[index], values[index &+ 1], values[index &+ 2], values[index &+ 3])
        index &+= 4
    }
    var result = lanes.sum()
    while index < values.count {
        result += values[index]
        index &+= 1
    }
    return result
}

/// The largest of `values` (0 when there are none: they are probabilities).
@inline(__always)
private func largest(_ values: UnsafeBufferPointer<Float>) -> Float {
    var lanes = SIMD4<Float>.zero
    let whole = values.count & ~3
    var index = 0
    while index < whole {
        let value = SIMD4(values[index], values[index &+ 1], values[index &+ 2], values[index &+ 3])
        lanes.replace(with: value, where: value .> lanes)
        index &+= 4
    }
    var result = lanes.max()
    while index < values.count {
        result = max(result, values[index])
        index &+= 1
    }
    return result
}

/// The largest of `values` among the cells whose `mass` is above 0; −∞ when there is none.
@inline(__always)
private func largest(_ values: UnsafeBufferPointer<Float>, whereAbove0 mass: UnsafeBufferPointer<Float>) -> Float {
    var lanes = SIMD4<Float>(repeating: -.infinity)
    let whole = values.count & ~3
    let none = SIMD4<Float>(repeating: -.infinity)
    var index = 0
    while index < whole {
        let value = SIMD4(values[index], values[index &+ 1], values[index &+ 2], values[index &+ 3])
        let weight = SIMD4(mass[index], mass[index &+ 1], mass[index &+ 2], mass[index &+ 3])
        let candidate = none.replacing(with: value, where: weight .> 0)
        lanes.replace(with: candidate, where: candidate .> lanes)
        index &+= 4
    }
    var result = lanes.max()
    while index < values.count {
        if mass[index] > 0 { result = max(result, values[index]) }
        index &+= 1
    }
    return result
}

/// `index` folded into `first...last` by reflection at the ends, as often as it takes.
@inline(__always)
private func fold(_ index: Int, _ first: Int, _ last: Int) -> Int {
    if index >= first, index <= last { return index }
    let length = last - first + 1
    var offset = (index - first) % (2 * length)
    if offset < 0 { offset += 2 * length }
    if offset >= length { offset = 2 * length - 1 - offset }
    return first + offset
}

/// e to the power `x` for x ≤ 0, to about 1e-7 relative; e^−87 below −87 (2^n stays a normal float). Inlined, unlike `expf`, which matters once per
/// cell per update.
@inline(__always)
private func fastExponential(_ x: Float) -> Float {
    // e^x = 2^(x·log2 e) = 2^n · 2^f, n an integer, f in [−0.5, 0.5]. Adding 1.5 × 2^23 rounds t to an integer and
    // leaves it in the low bits, so that no conversion (which checks its range, and stops vectorisation) is needed.
    let t = max(x, -87) * 1.442_695_04
    let shifted = t + 12_582_912
    let f = t - (shifted - 12_582_912)
    // 2^f by its Taylor series in f·ln 2, to the sixth power.
    let u = f * 0.693_147_18
    let p = 1 + u * (1 + u * (0.5 + u * (0.166_666_67 + u * (0.041_666_668 + u * (0.008_333_334 + u * 0.001_388_889)))))
    return p * Float(bitPattern: (shifted.bitPattern &- 0x4B40_0000 &+ 127) &<< 23)
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
    /// How many agents the update that started the window brought (up to the update's cap, whether or not their
    /// tables reached the window), and how many updates the window has had since.
    var startAgents = 0
    var updates = 0
    /// The last update's log likelihood of the readings it weighed, marginal over its prediction (up to a constant),
    /// and how many it weighed: ``GridFilter/floorEvidence(evidence:weighed:readings:)``.
    var evidence = 0.0
    var weighed = 0
    /// The posterior mean after its last update.
    var mean: Point?
    /// With a fixed lag: the updates not reported yet, oldest first (the newest is this posterior).
    var steps: [GridStep] = []
}

/// One update of a tag's posterior, kept for the fixed-lag smoother until it is reported.
struct GridStep: Sendable {
    /// Its floor grid, and its window of cells on it.
    var gridIndex: Int
    var column0: Int
    var row0: Int
    var columns: Int
    var rows: Int
    /// When the update was made (seconds).
    var time: Double
    /// The filtered posterior then, per cell of the window.
    var filtered: [Float]
    /// The update's likelihood per cell of the window, scaled so that its largest over the weighed cells is 1.
    var likelihood: [Float]
    /// Seconds walked since the step before; nil when the window (re)started here.
    var elapsed: Double?
}
