/// Where each tag is: per-tag RSSI filters, the floor choice, and the position from a ``GridFilter`` (or, with
/// ``LocatorEngine/Configuration/Positioning/trilateration``, from the trilateration fix).
///
/// With the grid filter (the default), each update takes every agent's readings since the last update, averaged
/// per agent, into the tag's posterior over its floor's cells; the estimate is the posterior mean, its accuracy a
/// 68 % radius from the posterior's RMS spread and a model error (``TagEstimator/gridAccuracy(spread:at:floor:ranges:)``),
/// and it carries the posterior mass per zone for the zone decision. The RSSI filters below
/// still give the ranges (nearest agent, CoreLocation proximity) and the floor.
///
/// The trilateration path, kept for comparison and as a fallback, works per tag as follows:
/// 1. Two ``RSSIFilter``s per (tag, agent) smooth readings: a fast one that follows a walking tag, and a slow one
///    that averages a still tag's noise away. Readings older than the age limit stop counting.
/// 2. ``PathLossModel`` turns each smoothed RSSI into a range with a sigma that grows with distance, using the
///    ``RadioConstants`` in force.
/// 3. The floor is chosen from all agents' evidence, with hysteresis.
/// 4. A motion test compares the fast and slow RSSIs across agents. While the tag is still, the position is the
///    ``Trilateration`` fix of the slow RSSIs (long averaging: no wander, and little of the bias that noisy ranges
///    give a fix). While it moves, ``TrackFilter`` follows the fixes of the fast RSSIs.
///
/// Zones are not its business: the estimates it returns have no zone yet.
struct TagTracker: Sendable {
    /// Tags an update gives each worker at least: fewer are not worth a thread.
    static let tagsPerWorker = 64

    private var estimator: TagEstimator
    private(set) var tags: [TagState] = []
    /// When each tag (by index, as `tags`) may be estimated next, apart from its state (``EstimateSchedule``).
    private var schedule: [EstimateSchedule] = []
    /// How many tags it has started holding, ever: the next one's estimates take the next phase.
    private var started = 0
    private(set) var tagIndexes = TagIndexTable()
    /// The tags with readings waiting for an estimate, in the order first heard since their last one, each with
    /// when it may be estimated …
    private var dirtyTags: [DirtyTag] = []
    /// … and the same as a bit per tag, which every reading looks at: 1.25 KB at 10,000 tags, which stays cached
    /// where a flag in each tag's schedule cost a cache miss per reading.
    private var waiting = TagBits()
    /// The tags that readings came for since the last update: a tag past its instant is estimated at the first
    /// update that brings it readings (``estimateHeard(now:radio:zones:)``).
    private var heard = TagBits()
    /// Each worker's buffers, kept from update to update; nil while a worker has them.
    private var scratch: [EstimateScratch?]
    /// Where the tag of each estimate of the last ``estimateHeard(now:radio:zones:)`` is held, in the estimates'
    /// order: what ``setDecisionDue(ofEstimate:_:)`` writes to, without looking each tag up again.
    private var estimatedTags: [Int] = []

    private var configuration: LocatorEngine.Configuration { estimator.configuration }

    /// No tags yet.
    init(map: FloorMap, configuration: LocatorEngine.Configuration) {
        estimator = TagEstimator(map: map, configuration: configuration, radio: RadioConstants(map: map))
        scratch = [EstimateScratch(configuration: configuration.grid)]
    }

    /// Whether positions come from the grid filter.
    var usesGrid: Bool { estimator.usesGrid }

    /// How many tags it holds state for.
    var count: Int { tags.count }

    /// Where it holds the tag's state, if it does; valid until tags are started, evicted or forgotten.
    func index(of tag: TagIdentity) -> Int? { tagIndexes.index(of: tag) { tags[$0].identity == tag } }

    /// Notes when the pending zone change of the tag of the last update's `position`th estimate may be decided
    /// (nil: none is pending), so that its estimates come with its batches from an interval before then
    /// (``estimateHeard(now:radio:zones:)``). Valid until tags are started, evicted or forgotten, which an update
    /// does not do.
    mutating func setDecisionDue(ofEstimate position: Int, _ due: Double?) {
        let index = estimatedTags[position]
        schedule[index].decisionDue = due ?? .infinity
        // The engine sets it right after the tag's estimate, before any reading can make it wait again: a waiting
        // tag's time, worked out when it started waiting (``dirtyTag(_:)``), would not see the change.
        assert(!waiting.contains(index), "a decision due set for a tag already waiting")
    }

    /// Starts holding state for a tag, with the name and measured power the map gives it, if any; returns its index.
    mutating func start(_ tag: TagIdentity, known: KnownTag?) -> Int {
        tagIndexes.insert(tag, at: tags.count)
        tags.append(
            TagState(
                identity: tag, name: known?.name, measuredPowerOverride: known?.measuredPower,
                measuredPowerSigma: known?.measuredPowerSigma))
        schedule.append(EstimateSchedule(phase: EstimateSchedule.phase(started: started)))
        started += 1
        return tags.count - 1
    }

    /// Starts the tag at `index`, which has no floor yet, on `floor`, as established as if it had led there for
    /// ``LocatorEngine/Configuration/floorSwitchUpdatesAwayFromStairs`` updates (``LocatorEngine/expectFloor(_:of:at:)``).
    mutating func expectFloor(_ floor: UInt16, ofTagAt index: Int) {
        guard tags[index].floor == nil else { return }
        tags[index].floor = floor
        tags[index].floorLeadCount = configuration.floorSwitchUpdatesAwayFromStairs
    }

    /// Where the tag is held, and which of its links is the agent's: ``places(of:agentIndex:into:)`` for one tag.
    func place(of tag: TagIdentity, agentIndex: Int) -> TagPlace {
        guard let index = index(of: tag) else { return TagPlace(tagIndex: nil, link: nil) }
        return TagPlace(tagIndex: index, link: tags[index].link(of: agentIndex))
    }

    /// Takes a valid, recent reading of the tag at `tagIndex` (``index(of:)``), heard by the agent at `agentIndex` in
    /// the map. `link` is where its link for the agent was found (``place(of:agentIndex:)``), if it was.
    mutating func take(_ reading: Reading, tagIndex index: Int, link: Int?, agentIndex: Int) {
        if waiting.insert(index) { dirtyTags.append(dirtyTag(index)) }
        heard.set(index)
        tags[index].take(
            reading,
            agentIndex: agentIndex,
            link: link,
            fast: configuration.rssiFilter,
            slow: configuration.stillRSSIFilter,
            summingForGrid: estimator.usesGrid
        )
    }

    /// Estimates every tag heard since the last call, in the order they were heard; tags without enough ranges
    /// give none. Trilateration estimates get their zone probabilities from `zones`.
    ///
    /// With ``LocatorEngine/Configuration/workers`` above 1 and enough tags due, the tags are split into that many
    /// runs, which ``LocatorEngine/Configuration/runner`` runs (on threads of the runtime's); each tag's estimate depends on its own state alone, so the estimates are the same, in the same
    /// order, however many workers made them.
    mutating func estimateHeard(now: Double, radio: RadioConstants, zones: ZoneGeometry) -> [TagEstimate] {
        estimator.refreshGrids(for: radio)
        let dirty = dirtyTags
        dirtyTags.removeAll(keepingCapacity: true)
        var due: [Int] = []
        due.reserveCapacity(dirty.count)
        for tag in dirty {
            let fresh = heard.contains(tag.index)
            heard.remove(tag.index)
            guard waiting.contains(tag.index) else { continue }
            // (A clock stepped back does not hold a tag up.)
            let ready = now >= tag.due || tag.lastEstimated > now
            // Past its instant, a tag is estimated with a batch that brings it readings, not at the first update of
            // any batch: its estimate is then the freshest it can be, and a zone change it decides comes with the
            // batch that completed it (the reading-to-occupancy latency), not up to a batch interval after it.
            // Readings that no batch follows are weighed a wait later all the same.
            let timely = fresh || now >= tag.unheardDue || tag.lastEstimated > now
            guard ready, timely else {
                // Estimated too recently, or nothing new since its instant: its readings wait in the filters.
                dirtyTags.append(tag)
                continue
            }
            waiting.remove(tag.index)
            schedule[tag.index].lastEstimated = now
            due.append(tag.index)
        }
        defer {
            // The estimates may have found a tag starting or stopping to move.
            for index in due { schedule[index].moving = tags[index].moving }
        }
        let workers = min(max(configuration.workers, 1), due.count / Self.tagsPerWorker)
        estimatedTags.removeAll(keepingCapacity: true)
        guard workers > 1 else {
            var estimates: [TagEstimate] = []
            estimates.reserveCapacity(due.count)
            var buffers = scratch[0] ?? EstimateScratch(configuration: configuration.grid)
            scratch[0] = nil
            for index in due {
                if let estimate = estimator.estimate(
                    &tags[index], now: now, radio: radio, zones: zones, scratch: &buffers)
                {
                    estimates.append(estimate)
                    estimatedTags.append(index)
                }
            }
            scratch[0] = buffers
            return estimates
        }
        return estimateInParallel(due, workers: workers, now: now, radio: radio, zones: zones)
    }

    /// A tag that has readings waiting, with when it may be estimated: the first of its instants after its last
    /// estimate (``EstimateSchedule/nextEstimate(wait:offset:)``), or sooner when its zone change is due within the
    /// wait. A tag whose zone change is due within the interval is estimated with every batch that brings it
    /// readings: the change is then decided with the first batch after its dwell, not up to an interval later. Only
    /// tags crossing a boundary pay for that, and only for the last interval of their dwell.
    ///
    /// Worked out once, when the tag starts waiting: its schedule changes only when it is estimated, and an update
    /// then reads the waiting tags' times in a row, where reading each one's schedule was a cache miss per tag and
    /// update (a tenth of a second's readings wait, 50 updates a second).
    private func dirtyTag(_ index: Int) -> DirtyTag {
        let entry = schedule[index]
        let stillInterval = max(configuration.stillEstimateInterval, configuration.estimateInterval)
        // (With the grid filter a moving tag waits as long as a still one: ``LocatorEngine/Configuration/estimateInterval``.)
        let wait = entry.moving ? configuration.movingEstimateInterval : stillInterval
        let instant = entry.nextEstimate(wait: wait, offset: entry.phase * stillInterval)
        // With a zone change pending, not before a still tag's wait past when it falls due: a batch of the tag's
        // should decide it, and a tag that is heard at all is heard once a second.
        let unheard = instant + wait
        let unheardDue = entry.decisionDue.isFinite ? max(unheard, entry.decisionDue + stillInterval) : unheard
        return DirtyTag(
            index: index, due: min(instant, entry.decisionDue - wait), unheardDue: unheardDue,
            lastEstimated: entry.lastEstimated)
    }

    /// Splits the due tags into `workers` runs in order, moves each run's states to a worker, and puts them back.
    private mutating func estimateInParallel(
        _ due: [Int], workers: Int, now: Double, radio: RadioConstants, zones: ZoneGeometry
    ) -> [TagEstimate] {
        if scratch.count < workers { scratch += Array(repeating: nil, count: workers - scratch.count) }
        var shares: [EstimateWork?] = []
        for worker in 0..<workers {
            var states: [TagState] = []
            states.reserveCapacity(due.count / workers + 1)
            for index in Self.run(worker, of: workers, in: due) {
                // Moved out, not copied (see ``EstimateWork/run(_:runner:estimator:now:radio:zones:)``).
                var state = TagState(identity: tags[index].identity, name: nil, measuredPowerOverride: nil)
                swap(&state, &tags[index])
                states.append(consume state)
            }
            let buffers = scratch[worker] ?? EstimateScratch(configuration: configuration.grid)
            scratch[worker] = nil
            shares.append(EstimateWork(states: states, scratch: buffers))
        }
        EstimateWork.run(
            &shares, runner: configuration.runner, estimator: estimator, now: now, radio: radio, zones: zones)
        var estimates: [TagEstimate] = []
        for worker in shares.indices {
            // Every share comes back (EstimateWork.run fills and empties each slot itself); a missing one would
            // leave placeholders where its tags' states belong. Taken out of `shares` so that its arrays are
            // uniquely held: the states are swapped back, not copied (a copy retained every reference in each).
            guard var share = shares[worker] else {
                preconditionFailure("an estimate share did not come back from its worker")
            }
            shares[worker] = nil
            let run = Self.run(worker, of: workers, in: due)
            for (slot, index) in zip(share.states.indices, run) {
                swap(&tags[index], &share.states[slot])
            }
            for slot in share.estimatedSlots { estimatedTags.append(run[run.startIndex + slot]) }
            scratch[worker] = share.scratch
            if estimates.isEmpty {
                swap(&estimates, &share.estimates)
                estimates.reserveCapacity(due.count)
            } else {
                estimates += share.estimates
            }
        }
        return estimates
    }

    /// The `worker`th of `workers` runs of `due`, in order.
    private static func run(_ worker: Int, of workers: Int, in due: [Int]) -> ArraySlice<Int> {
        due[(due.count * worker / workers)..<(due.count * (worker + 1) / workers)]
    }

    /// The tags silent for longer than `threshold` at `now`, in the order first heard: how long, and whether each has
    /// a position.
    ///
    /// A field or two of each tag is read where it lies: mapping over the tags copied each one's state whole (its
    /// arrays retained and released), and at 10,000 tags the once-a-second sweep over every tag, with a zone lookup for
    /// each, was a noticeable share of the engine's work though nearly every tag had just been heard.
    func silent(longerThan threshold: Double, now: Double) -> [(tag: TagIdentity, silence: Double, hasTrack: Bool)] {
        var silent: [(tag: TagIdentity, silence: Double, hasTrack: Bool)] = []
        for index in tags.indices {
            let silence = now - tags[index].lastHeard
            guard silence > threshold else { continue }
            silent.append((tags[index].identity, silence, tags[index].hasPosition))
        }
        return silent
    }

    /// Drops the longest-silent tags the map does not name until at most `count` tags are held (or only named ones
    /// are left); returns them, each with whether it had a position.
    mutating func evictLongestSilent(keeping count: Int) -> [(tag: TagIdentity, hadPosition: Bool)] {
        let excess = tags.count - max(count, 0)
        guard excess > 0 else { return [] }
        var unnamed: [(lastHeard: Double, index: Int)] = []
        unnamed.reserveCapacity(tags.count)
        for (index, tag) in tags.enumerated() where tag.name == nil { unnamed.append((tag.lastHeard, index)) }
        unnamed.sort { ($0.lastHeard, $0.index) < ($1.lastHeard, $1.index) }
        var evicted: [(tag: TagIdentity, hadPosition: Bool)] = []
        var drop = [Bool](repeating: false, count: tags.count)
        for candidate in unnamed.prefix(excess) {
            drop[candidate.index] = true
            evicted.append((tags[candidate.index].identity, tags[candidate.index].hasPosition))
        }
        remove(where: drop)
        return evicted
    }

    /// Drops a timed-out tag's position and floor; its filters stay for when it is heard again.
    mutating func lose(_ tag: TagIdentity) {
        guard let index = index(of: tag) else { return }
        tags[index].trilateration.track = nil
        tags[index].floor = nil
        tags[index].grid.forget()
    }

    /// Drops all state of these tags.
    mutating func forget(_ drop: Set<TagIdentity>) {
        remove(where: tags.map { drop.contains($0.identity) })
    }

    /// Removes the tags whose flag is set, keeping the others in order, and the tags waiting for an estimate.
    private mutating func remove(where drop: [Bool]) {
        var newIndex = [Int](repeating: -1, count: tags.count)
        var kept: [TagState] = []
        var keptSchedule: [EstimateSchedule] = []
        kept.reserveCapacity(tags.count)
        keptSchedule.reserveCapacity(tags.count)
        for index in tags.indices where !drop[index] {
            newIndex[index] = kept.count
            kept.append(tags[index])
            keptSchedule.append(schedule[index])
        }
        tags = kept
        schedule = keptSchedule
        // A new table rather than removals: the indexes after each removed tag have moved, and the table keeps only
        // the room the tags now need.
        tagIndexes = TagIndexTable(tags.lazy.map(\.identity))
        dirtyTags = dirtyTags.compactMap { tag in
            newIndex[tag.index] >= 0
                ? DirtyTag(
                    index: newIndex[tag.index], due: tag.due, unheardDue: tag.unheardDue,
                    lastEstimated: tag.lastEstimated) : nil
        }
        waiting = TagBits()
        heard = TagBits()
        // (Whether each was heard in this update is lost with the old indexes: taken as heard, they are estimated
        // at their instants.)
        for tag in dirtyTags {
            waiting.insert(tag.index)
            heard.set(tag.index)
        }
    }

    /// The motion statistic of a tag now: about 1 for a still tag, growing as it moves.
    func motionStatistic(of tag: TagIdentity, now: Double) -> Double? {
        index(of: tag).flatMap { estimator.motionStatistic(tags[$0], now: now) }
    }

    /// Whether the tag is taken to be moving.
    func isMoving(_ tag: TagIdentity) -> Bool? {
        index(of: tag).map { tags[$0].moving }
    }

    /// A tag's grid posterior, cell by cell.
    func posterior(of tag: TagIdentity) -> TagPosterior? {
        guard let index = index(of: tag), let posterior = tags[index].grid.posterior,
            estimator.grids.indices.contains(posterior.gridIndex)
        else { return nil }
        let grid = estimator.grids[posterior.gridIndex]
        var cells: [TagPosterior.Cell] = []
        for row in 0..<posterior.rows {
            for column in 0..<posterior.columns {
                let probability = posterior.probabilities[row * posterior.columns + column]
                guard probability > 0 else { continue }
                cells.append(
                    TagPosterior.Cell(
                        centre: grid.centre(column: posterior.column0 + column, row: posterior.row0 + row),
                        probability: Double(probability)))
            }
        }
        return TagPosterior(floor: grid.major, cellSize: grid.cellSize, cells: cells)
    }

    /// The agents that hear a tag, nearest first.
    func ranging(_ tag: TagIdentity, now: Double, radio: RadioConstants) -> [AgentRange] {
        guard let index = index(of: tag) else { return [] }
        return estimator.currentRanges(tags[index], now: now, radio: radio)
    }
}
