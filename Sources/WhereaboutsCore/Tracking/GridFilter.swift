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
        /// The side of a cell, in metres; nil (the default) takes the map's `model.cell_size`, or else chooses it
        /// per floor from the free space (``GridResolution``): fine enough that the narrowest walkable passage is
        /// two cells wide, from 0.25 m to 1 m for an open floor.
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
        /// Prior spread of a tag's power around what it advertises (or the map's default), in dB, for a tag whose
        /// power the map does not name: it is learned online, as readings come.
        public var offsetSigma: Double = 10
        /// Prior spread of the power of a tag the map names (``KnownTag/measuredPower``) when the map does not say how
        /// sure it is (``KnownTag/measuredPowerSigma``), in dB: a surveyed power is kept within a few dB, so that the
        /// absolute level of the readings counts (issue 45: 1.07 / 2.39 → 1.02 / 2.26 m on an office at 3 dB).
        public var namedPowerSigma: Double = 3
        /// The learned power offset is never trusted to better than this, in dB.
        public var minimumOffsetSigma: Double = 1.5
        /// How fast a tag's power offset may drift, in dB² per second.
        public var offsetDrift: Double = 0.05
        /// Readings in a row that count as one independent reading when learning a tag's power: shadowing lasts.
        public var readingCorrelation: Double = 4
        /// Cells below this share of the most probable cell are pruned. Issue 45 measured a gain at 1e-4 on an
        /// office (p90 2.39 → 2.31 m: a mode pruned at 1e-2 later proved right), but at 1e-4 the windows hold about
        /// twice the cells and the engine bench fell from 1.02 M to 0.69 M readings per CPU second (1,000 tags,
        /// grid), under the 1 M floor; a tag whose readings its posterior cannot explain restarts instead
        /// (``lostMisfit``), which is what brings a wrong mode back.
        public var pruneRatio: Double = 1e-2
        /// An update whose readings misfit its prediction this much (``GridFilter/misfit(of:grid:)``), with
        /// ``lostAgents`` or more, re-seeds the next prediction: ``reseedShare`` of its mass goes uniformly over the
        /// free cells within ``reseedRadius`` metres of the loudest agent, so that a place pruned too early can win
        /// again if the readings point there (cheaper than a lower ``pruneRatio``: only such updates pay for it).
        public var reseedMisfit: Double = 2
        public var reseedShare: Double = 0.05
        public var reseedRadius: Double = 5
        /// The published accuracy (``TagEstimate/accuracy``, the radius that holds the true position about 68 % of
        /// the time) is this times the posterior's RMS spread (widened by the misfit), in quadrature with a model
        /// error of ``modelErrorPerMetre`` (TagEstimator+Accuracy.swift; docs/tracker.md has the fit).
        public var accuracyPerSpread: Double = 1.0
        /// The model error the posterior cannot see (shadowing that lasts, furniture, a biased estimate), in metres
        /// per metre from the estimate to the third-nearest agent that heard the tag: a level off by a few dB puts
        /// a range off by a share of its length, and a fix rests on its three nearest ranges.
        public var modelErrorPerMetre: Double = 0.22
        /// An update whose readings fit the prediction this badly (``GridFilter/misfit(of:grid:)``: the mean
        /// squared standardised residual, about 1 when the model holds) is surprising: see ``lostAgents``.
        public var lostMisfit: Double = 4
        /// Surprising updates count only with at least this many agents weighed (with fewer, the learned power
        /// offset absorbs most of any misfit, and one link's lasting shadow is no evidence of being lost).
        public var lostAgents: Int = 3
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
        /// How far the published accuracy widens beyond the spread and the model's error: √ of the update's misfit
        /// when its readings were surprising (``note(_:in:summary:)``), else 1. A lost estimate's posterior is often
        /// narrow (pinned against a wall), so widening the spread alone leaves the accuracy near its settled value.
        var surprise: Double = 1
    }

    /// A box of cells on a grid.
    typealias Window = CellWindow

    let configuration: Configuration
    /// The outlier term's log density, relative to the Gaussian's peak at σ = 1 dB.
    let outlierLog: Float
    // Buffers reused from update to update, so that a steady update allocates nothing but its summary.
    /// The window being worked on (predicted, then weighed), and its probabilities.
    var work = Window(column0: 0, row0: 0, columns: 0, rows: 0)
    var workProbabilities: [Float] = []
    /// The prediction's first pass (along rows).
    var rowPass: [Float] = []
    var sums: [Float] = []
    var logs: [Float] = []
    var weights: [Float] = []
    var chosen: [Observation] = []
    /// With a lag: the update's likelihood per cell of the work window, and the smoother's backward factor.
    var likelihoods: [Float] = []
    var backward: [Float] = []
    /// The prior variance of the power offset of the tag being updated, in dB² (``Configuration/offsetSigma`` or
    /// the named power's): a (re)started window starts from it, and the learned variance never exceeds it.
    var priorVariance: Double
    /// Whether the update being made may re-seed (its caller's `reseeding`).
    var reseeding = true
    /// The prediction kernel in force: taps from −reach to +reach, and the variance (cells²) it was made for.
    var kernel: [Float] = [1]
    var kernelVariance: Double = 0
    /// What ``warmTables(grid:)`` read, kept so that its loads are not optimised away.
    var warmed: UInt32 = 0

    init(configuration: Configuration) {
        var configuration = configuration
        // A lag that never falls due would keep every update's posterior: at most a minute.
        configuration.lag = configuration.lag.isFinite ? min(max(configuration.lag, 0), 60) : 0
        self.configuration = configuration
        priorVariance = configuration.offsetSigma * configuration.offsetSigma
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
    /// `powerSigma` is how sure the tag's nominal power is (1σ, dB): the map's for a tag it names, nil for
    /// ``Configuration/offsetSigma``.
    ///
    /// `reseeding` false keeps the re-seed (``Configuration/reseedMisfit``) off: the tag has another floor open, and
    /// a re-seed, which rescues a posterior its readings contradict, would raise this floor's evidence against it.
    ///
    /// With ``Configuration/lag`` above 0 the summary is that of an earlier update, smoothed (see
    /// ``smooth(_:now:grids:)``), or nil when no update is old enough yet.
    mutating func update(
        _ state: inout GridPosterior?,
        observations allObservations: [Observation],
        loudest: Int?,
        entry: Point? = nil,
        entryShare: Double = 1,
        powerSigma: Double? = nil,
        reseeding: Bool = true,
        grids: [FloorGrid],
        gridIndex: Int,
        now: Double
    ) -> Summary? {
        guard !allObservations.isEmpty else { return nil }
        let sigma = powerSigma ?? configuration.offsetSigma
        priorVariance = sigma * sigma
        self.reseeding = reseeding
        // The floor's grid borrowed through a buffer pointer: a copy (`let grid = grids[gridIndex]`) retained and
        // released each of its arrays, every update.
        return GridKernels.borrow(gridIndex, of: grids) { grid in
            update(
                &state, observations: allObservations, loudest: loudest, entry: entry, entryShare: entryShare,
                grid: grid, grids: grids, gridIndex: gridIndex, now: now)
        }
    }

    /// ``update(_:observations:loudest:entry:entryShare:powerSigma:reseeding:grids:gridIndex:now:)`` on `grid`, the
    /// grid at `gridIndex` in `grids`, with ``priorVariance`` and ``reseeding`` set.
    mutating func update(
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
            mixed = mixArrivals(
                entry: entry, entryShare: entryShare, reseedAround: previous.reseed && reseeding ? loudest : nil,
                grid: grid)
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
        let misfit = peak == nil || elapsed == nil ? nil : self.misfit(of: posterior, grid: grid)
        let kept = keep(&posterior, grid: grid, peak: peak)
        var summary = summarise(posterior, grid: grid, gridIndex: gridIndex)
        note(misfit, in: &posterior, summary: &summary)
        posterior.mean = summary.mean
        posterior.updates += 1
        countAstray(&posterior, mean: summary.mean, loudest: loudest, grid: grid)
        guard lagged else {
            state = posterior
            return summary
        }
        posterior.steps.append(step(of: posterior, kept: kept, elapsed: elapsed))
        var smoothed = smooth(&posterior, now: now, grids: grids)
        // The smoothed spread widened by the misfit as the filtered one is (``note(_:in:summary:)``).
        if posterior.misfit > 1 { smoothed?.spread *= posterior.misfit.squareRoot() }
        state = posterior
        return smoothed
    }

    /// Makes ``chosen`` the observations, at most ``Configuration/maximumAgentsPerUpdate``, the loudest, in the
    /// order of their tables: the weighing adds the agents' terms in that order, and floating-point sums depend on
    /// it, so readings that arrive in another order (agents' batches race each other) give the same bits.
    mutating func choose(from observations: [Observation]) {
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
    mutating func setAsideTablesMissingWork(grid: FloorGrid) {
        let window = work
        // The tables alone in the closure: capturing the grid copied it, retaining each of its arrays.
        let tables = grid.tables
        chosen.removeAll { observation in
            !tables[observation.slot].covers(
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
    func isMisplaced(_ posterior: GridPosterior?, heard: Int, loudest: Int?, grid: FloorGrid) -> Bool {
        guard let posterior, posterior.updates < configuration.astrayUpdates, heard > posterior.startAgents,
            let loudest, let mean = posterior.mean
        else { return false }
        return isFar(mean, from: loudest, grid: grid)
    }

    /// Whether `point` is farther than 1.5 × ``Configuration/initialRadius`` from the agent whose table is at
    /// `slot`: farther than a window started around that agent reaches.
    func isFar(_ point: Point, from slot: Int, grid: FloorGrid) -> Bool {
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

    /// Makes `window` the work window, all zero.
    mutating func setWork(_ window: Window) {
        work = window
        GridKernels.fill(&workProbabilities, count: window.count, with: 0)
    }

    /// The sampled Gaussian of `variance` cells², taps from −reach to +reach; three exact taps when it is narrow.
    mutating func prepareKernel(variance: Double) {
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
    /// window, which is the posterior's window grown by the kernel's reach: the walk's Gaussian blur, one pass along
    /// rows (east–west) into ``rowPass``, then one along columns (north–south) into the work window.
    mutating func predict(_ posterior: inout GridPosterior, elapsed: Double, grid: FloorGrid) {
        posterior.offsetVariance = min(
            posterior.offsetVariance + configuration.offsetDrift * max(elapsed, 0), max(priorVariance, 1e-6))
        let spread = configuration.walkingSpread / grid.cellSize
        let variance = spread * spread * min(max(elapsed, 0), configuration.resetAfter)
        let source = posterior.window
        if variance < 1e-4 {
            // No time to walk: the prior is the posterior.
            setWork(source)
            GridKernels.copy(posterior.probabilities, count: source.count, into: &workProbabilities)
            return
        }
        prepareKernel(variance: variance)
        let reach = kernel.count / 2
        let column0 = max(source.column0 - reach, 0)
        let row0 = max(source.row0 - reach, 0)
        let target = Window(
            column0: column0, row0: row0,
            columns: min(source.column0 + source.columns + reach, grid.columns) - column0,
            rows: min(source.row0 + source.rows + reach, grid.rows) - row0)
        setWork(target)
        // The first pass's cells: the posterior's rows, the target's columns.
        let across = Window(column0: target.column0, row0: source.row0, columns: target.columns, rows: source.rows)
        GridKernels.fill(&rowPass, count: across.count, with: 0)
        GridKernels.blur(
            along: AlongRows.self, posterior.probabilities, over: source, into: &rowPass, over: across,
            runFirst: grid.eastRunFirst, runLast: grid.eastRunLast, gridColumns: grid.columns, taps: kernel)
        GridKernels.blur(
            along: AlongColumns.self, rowPass, over: across, into: &workProbabilities, over: target,
            runFirst: grid.northRunFirst, runLast: grid.northRunLast, gridColumns: grid.columns, taps: kernel)
    }

    /// Shrinks the work window to the cells whose probability is at least ``Configuration/pruneRatio`` of the peak:
    /// the prediction spreads a posterior's far tail too, and weighing cells that cannot matter is most of the cost.
    mutating func trimWork() {
        guard let box = boundingBox(ratio: Float(configuration.pruneRatio), margin: 0) else { return }
        let window = work
        guard box.column0 > 0 || box.row0 > 0 || box.columns < window.columns || box.rows < window.rows else { return }
        GridKernels.compact(box, of: window, in: &workProbabilities)
        work = Window(
            column0: window.column0 + box.column0, row0: window.row0 + box.row0, columns: box.columns, rows: box.rows)
    }

    /// The box, in the work window's cells, of the cells at least `ratio` of the peak, grown by `margin` cells within
    /// the window; nil when every cell is 0. `peak` is the largest cell, when the caller knows it.
    func boundingBox(ratio: Float, margin: Int, peak: Float? = nil) -> Window? {
        let window = work
        guard
            let box = GridKernels.box(
                of: workProbabilities, columns: window.columns, rows: window.rows, ratio: ratio, peak: peak)
        else { return nil }
        let column0 = max(box.left - margin, 0)
        let row0 = max(box.top - margin, 0)
        return Window(
            column0: column0, row0: row0, columns: min(box.right + margin + 1, window.columns) - column0,
            rows: min(box.bottom + margin + 1, window.rows) - row0)
    }

    /// Reads a float of every cache line of the table rows that ``weigh(_:grid:)`` will read, before it does.
    ///
    /// Live, each update of the engine estimates tags all over the site, so an agent's table rows under a tag's
    /// window are rarely in the cache (200 agents' tables are 8.6 MB on the bench's 200-room floor), and the
    /// weighing waited on them: 70 % of its samples in `perf annotate` fell on the instructions after its three
    /// table loads. The weighing's loads come a row at a time with arithmetic between them; loads alone, independent
    /// of each other, are many at once in flight, so the misses overlap.
    mutating func warmTables(grid: FloorGrid) {
        warmed = GridKernels.warm(chosen, grid: grid, window: work)
    }

    /// Multiplies in the readings' likelihood over the work window, the tag's power offset marginalised per cell,
    /// and learns the offset. Returns the largest probability left in the window (not normalised), or nil when no
    /// cell has any.
    ///
    /// At a cell, reading i differs from the model by e_i with variance σ_i²; the offset δ, a priori N(0, V) around
    /// the learned one, is taken at its most likely value there, δ = Σ(e_i/σ_i²) / (Σ 1/σ_i² + 1/V), and each reading
    /// is weighed by the robust mixture at (e_i − δ)/σ_i. For Gaussian readings that is the exact marginal.
    mutating func weigh(_ posterior: inout GridPosterior, grid: FloorGrid) -> Float? {
        let count = work.count
        if sums.count < count {
            sums = [Float](repeating: 0, count: count)
            logs = [Float](repeating: 0, count: count)
            weights = [Float](repeating: 0, count: count)
        }
        let variance = max(posterior.offsetVariance, 1e-6)
        let priorPrecision = Float(1 / variance)
        let maximum = GridKernels.logLikelihoods(
            of: chosen, grid: grid, window: work, offset: posterior.offset, priorPrecision: priorPrecision,
            penalty: Float(1 / (2 * variance)), floor: outlierLog, probabilities: workProbabilities,
            deltas: &sums, weights: &weights, logs: &logs)
        guard maximum.isFinite else { return nil }
        // Learn the offset as if the readings were fewer: shadowing makes consecutive ones agree more than chance.
        let correlation = Float(configuration.readingCorrelation)
        // Σ probability, × offset, × offset², × readings' precision.
        let (totals, peak) = GridKernels.multiplyLikelihoods(
            into: &workProbabilities, deltas: &sums, weights: &weights, logs: logs, count: count, maximum: maximum,
            priorPrecision: priorPrecision, correlation: correlation)
        // Not normalised here: ``keep(_:grid:peak:)`` normalises the cells it keeps, and nothing reads the others.
        if configuration.lag > 0 {
            // The smoother's copy of the likelihood, made only with a lag (the loop above is the filter's hot path).
            GridKernels.likelihoods(logs, count: count, maximum: maximum, into: &likelihoods)
        }
        let total = totals[0]
        guard total > 0, total.isFinite else { return nil }
        posterior.evidence = naturalLog(Double(total)) + Double(maximum)
        posterior.weighed = chosen.count
        let mean = Double(totals[1] / total)
        let spread = max(Double(totals[2] / total) - mean * mean, 0)
        posterior.offset += mean
        let minimum = configuration.minimumOffsetSigma * configuration.minimumOffsetSigma
        posterior.offsetVariance = max(
            min(1 / (1 / variance + Double(totals[3] / total) / Double(correlation)) + spread, priorVariance), minimum)
        return peak
    }

    /// Makes the work window the tag's posterior, without the cells far below the peak (a margin kept around the
    /// rest), normalised. `peak` is the window's largest cell, when the weighing found it.
    @discardableResult
    func keep(_ posterior: inout GridPosterior, grid: FloorGrid, peak: Float?) -> Window {
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
        GridKernels.append(box, of: window, from: workProbabilities, to: &posterior.probabilities)
        let total = GridKernels.sum(posterior.probabilities, count: keptCount)
        if total > 0 { GridKernels.scale(&posterior.probabilities, count: keptCount, by: 1 / total) }
        return box
    }

    /// The posterior's mean, spread and mass per zone.
    func summarise(_ posterior: GridPosterior, grid: FloorGrid, gridIndex: Int) -> Summary {
        let moments = GridKernels.moments(of: posterior.probabilities, window: posterior.window, grid: grid)
        let total = moments.total
        guard total > 0 else {
            return Summary(
                time: posterior.time, gridIndex: gridIndex,
                mean: grid.centre(column: posterior.column0, row: posterior.row0), spread: .infinity,
                zoneMasses: [])
        }
        let mx = moments.x / total
        let my = moments.y / total
        let variance = max(moments.xx / total - mx * mx, 0) + max(moments.yy / total - my * my, 0)
        let size = grid.cellSize
        let mean = Point(
            x: grid.origin.x + (Double(posterior.column0) + mx + 0.5) * size,
            y: grid.origin.y + (Double(posterior.row0) + my + 0.5) * size)
        // A single cell still leaves the tag anywhere in it: add the cell's own spread.
        let spread = (variance * size * size + size * size / 6).squareRoot()
        return Summary(
            time: posterior.time, gridIndex: gridIndex, mean: mean, spread: spread, zoneMasses: moments.zones)
    }
}
