/// How one tag's estimate is made from its state (the steps are in ``TagTracker``'s overview): what it reads, which
/// never changes during an update, and the functions that change only the tag's own state.
///
/// Tags are independent of one another here, so an update can split them among workers (``EstimateWork``), each
/// with an estimator of its own that shares the map and the floor grids with the others.
struct TagEstimator: Sendable {
    let map: FloorMap
    let configuration: LocatorEngine.Configuration
    let wallsByFloor: [UInt16: [Wall]]
    /// One per floor with the grid filter; refreshed (between updates) when the radio constants change.
    private(set) var grids: [FloorGrid] = []
    private(set) var gridIndexByFloor: [UInt16: Int] = [:]
    /// The radio constants the grids' gain tables were made with.
    private var gridRadio: RadioConstants

    init(map: FloorMap, configuration: LocatorEngine.Configuration, radio: RadioConstants) {
        self.map = map
        self.configuration = configuration
        gridRadio = radio
        wallsByFloor = configuration.usesWalls ? Dictionary(grouping: map.walls, by: \.floor) : [:]
        if configuration.resolvedPositioning == .grid {
            for floor in map.floors {
                gridIndexByFloor[floor.major] = grids.count
                grids.append(
                    FloorGrid(
                        floor: floor, map: map, zones: map.zones(onFloor: floor.major),
                        walls: wallsByFloor[floor.major] ?? [],
                        obstacles: map.obstacles.filter { $0.floor == floor.major }.map(\.polygon),
                        barriers: map.walls.filter { $0.floor == floor.major }.flatMap(\.barriers), radio: radio,
                        configuration: configuration.grid))
            }
        }
    }

    /// Whether positions come from the grid filter (whose estimates carry the posterior's zone masses).
    var usesGrid: Bool { !grids.isEmpty }

    /// Remakes the grids' gain tables when the radio constants in force are no longer those they were made with.
    mutating func refreshGrids(for radio: RadioConstants) {
        guard usesGrid, radio != gridRadio else { return }
        gridRadio = radio
        for index in grids.indices { grids[index].refresh(radio: radio, map: map) }
    }

    /// A tag's estimate now, or nil when its ranges are too few; updates its floor, motion, track or posterior.
    ///
    /// A trilateration estimate gets its zone probabilities from `zones` here, where the work is split among
    /// workers; the grid filter's come from its posterior.
    func estimate(
        _ state: inout TagState, now: Double, radio: RadioConstants, zones: ZoneGeometry,
        scratch: inout EstimateScratch
    ) -> TagEstimate? {
        state.dropLinks(notHeardWithin: map.model.readingMaxAge, of: now)
        let ranges = currentRanges(state, now: now, radio: radio, slow: false)
        guard !ranges.isEmpty else { return nil }
        guard
            let floorMajor = chooseFloor(
                &state, ranges: ranges, radio: radio, now: now, strongest: &scratch.strongestByFloor),
            let floor = map.floor(major: floorMajor)
        else { return nil }
        updateMotion(&state, now: now)
        let contested = state.floorChallenger != nil
        if let gridIndex = gridIndexByFloor[floorMajor] {
            // A tag that came by the stairs starts on the new floor by them; one moved there by the evidence
            // alone, far from any (a floor chosen wrong, a lift the map lacks), around its loudest agents.
            var entry: Point?
            if let previous = state.posterior?.gridIndex, previous != gridIndex,
                now - state.atStairs <= configuration.stairsMemory
            {
                entry = stairs(from: grids[previous].major, to: floorMajor, near: state.lastPosition)?.position
            }
            var estimate = gridEstimate(
                &state, gridIndex: gridIndex, ranges: ranges, entry: entry, now: now, radio: radio,
                scratch: &scratch)
            estimate?.floorContested = contested
            if let estimate { place(&state, estimate) }
            return estimate
        }

        let position: Point
        let accuracy: Double
        let quality: Fix.Quality
        if state.moving || state.trackFloor != floorMajor || state.track == nil {
            // Moving (or starting): follow the fix of the fast RSSIs. A still tag needs no fast fix at all.
            guard let fastFix = fix(ranges, floor: floor, radio: radio) else { return nil }
            if var track = state.track, state.trackFloor == floorMajor {
                track.update(
                    position: fastFix.position,
                    accuracy: fastFix.accuracy,
                    time: now,
                    configuration: configuration.track
                )
                track.keep(inside: floor.outline)
                state.track = track
            } else {
                state.track = TrackFilter(position: fastFix.position, accuracy: fastFix.accuracy, time: now)
                state.trackFloor = floorMajor
            }
            position = state.track?.position ?? fastFix.position
            accuracy = min(state.track?.accuracy ?? fastFix.accuracy, fastFix.accuracy)
            quality = fastFix.quality
        } else {
            let stillRanges = currentRanges(state, now: now, radio: radio, slow: true)
            guard let stillFix = fix(stillRanges, floor: floor, radio: radio) ?? fix(ranges, floor: floor, radio: radio)
            else { return nil }
            position = stillFix.position
            accuracy = stillFix.accuracy
            quality = stillFix.quality
            // Keep the track where the still estimate is, so that motion picks up from here.
            state.track = TrackFilter(position: position, accuracy: accuracy, time: now)
            state.trackFloor = floorMajor
        }
        let estimate = TagEstimate(
            tag: state.identity,
            name: state.name,
            floor: floorMajor,
            position: position,
            accuracy: accuracy,
            zone: nil,
            ranges: ranges,
            quality: quality,
            time: now,
            zoneEvidence: zones.evidence(floor: floorMajor, position: position, accuracy: accuracy),
            floorContested: contested
        )
        place(&state, estimate)
        return estimate
    }

    /// Notes where an estimate put the tag, and whether by stairs or a lift of its floor: within
    /// ``LocatorEngine/Configuration/stairsReach`` of them, plus the estimate's own accuracy (a tag on the stairs
    /// is heard through the floor by both floors' agents, and its estimate on either is poor).
    private func place(_ state: inout TagState, _ estimate: TagEstimate) {
        state.lastPosition = estimate.position
        let reach = configuration.stairsReach + estimate.accuracy
        if map.stairs.contains(where: {
            $0.floors.contains(estimate.floor) && $0.position.distance(to: estimate.position) <= reach
        }) {
            state.atStairs = estimate.time
        }
    }

    /// The estimate from the tag's grid posterior, after the readings since the last update.
    private func gridEstimate(
        _ state: inout TagState,
        gridIndex: Int,
        ranges: [AgentRange],
        entry: Point?,
        now: Double,
        radio: RadioConstants,
        scratch: inout EstimateScratch
    ) -> TagEstimate? {
        // The one field read here: a copy of the whole grid retains and releases each of its arrays.
        let slotOfAgent = grids[gridIndex].slotOfAgent
        let power = state.measuredPowerOverride ?? state.advertisedPower ?? map.model.measuredPower
        scratch.observations.removeAll(keepingCapacity: true)
        state.takePending { agentIndex, rssi in
            let slot = slotOfAgent[agentIndex]
            guard slot >= 0 else { return }
            scratch.observations.append(
                GridFilter.Observation(slot: slot, level: rssi + radio.rssiOffsets[agentIndex] - power))
        }
        // The loudest agent by the smoothed RSSIs of the last seconds: live, an update may hold only the one or two
        // agents whose batches came since the last (a zone change about to be decided is estimated with every
        // batch), and the loudest of those alone is often a far one. Taken from such updates, three in a row
        // sent 8–9 % of the updates of 10,000 tags back to a fresh window in `whereabouts-bench latency`.
        var loudest: (slot: Int, level: Double)?
        for range in ranges {
            let slot = slotOfAgent[range.agentIndex]
            let level = range.rssi + radio.rssiOffsets[range.agentIndex]
            guard slot >= 0, level > loudest?.level ?? -.infinity else { continue }
            loudest = (slot, level)
        }
        let summary = scratch.filter.update(
            &state.posterior, observations: scratch.observations, loudest: loudest?.slot, entry: entry, grids: grids,
            gridIndex: gridIndex, now: now)
        guard let summary else { return nil }
        let agentsUsed = scratch.observations.count
        let quality: Fix.Quality = agentsUsed >= 3 ? .converged : agentsUsed == 2 ? .twoAgents : .singleAgent
        // With a lag, the summary is of an earlier update, perhaps on the floor the tag was on then.
        return TagEstimate(
            tag: state.identity,
            name: state.name,
            floor: grids[summary.gridIndex].major,
            position: summary.mean,
            accuracy: summary.spread,
            zone: nil,
            ranges: ranges,
            quality: quality,
            time: summary.time,
            zoneEvidence: ZoneEvidence(masses: summary.zoneMasses)
        )
    }

    /// The fix from the floor's nearest ranges.
    private func fix(_ ranges: [AgentRange], floor: Floor, radio: RadioConstants) -> Fix? {
        let limit =
            radio.isCalibrated(floor: floor.major)
            ? configuration.maximumCalibratedAgentsPerFix : configuration.maximumAgentsPerFix
        var measurements: [RangeMeasurement] = []
        measurements.reserveCapacity(limit)
        for range in ranges where map.agents[range.agentIndex].floor == floor.major {
            // Fields read in place: a copy of the whole agent (its id, its radio surface) costs retains.
            measurements.append(
                RangeMeasurement(
                    anchor: map.agents[range.agentIndex].position,
                    heightDifference: map.agents[range.agentIndex].height - map.model.tagHeight,
                    range: range.distance,
                    sigma: max(range.accuracy, 0.05),
                    exponent: radio.pathLossExponent(ofAgent: range.agentIndex)
                )
            )
            if measurements.count == limit { break }
        }
        return Trilateration.solve(measurements, outline: floor.outline, walls: wallsByFloor[floor.major] ?? [])
    }

    /// Decides whether the tag is moving: the fast and slow RSSIs of its agents disagree by more than their noise.
    private func updateMotion(_ state: inout TagState, now: Double) {
        guard let statistic = motionStatistic(state, now: now) else { return }
        guard state.moving else {
            if statistic > configuration.motionThreshold {
                state.moving = true
                state.quietSince = nil
                state.slowRestart = now
                // The still estimate lags by the long average; pick the track up from the fast fix instead.
                state.track = nil
            }
            return
        }
        if statistic < configuration.stillThreshold {
            if state.quietSince == nil { state.quietSince = now }
        } else {
            state.quietSince = nil
        }
        if let quietSince = state.quietSince, now - quietSince >= configuration.stillDuration {
            state.moving = false
            state.quietSince = nil
        } else if now - state.slowRestart >= configuration.slowRestartInterval {
            // While moving, the long average restarts every few seconds from the fast one, so that the motion
            // test compares against where the tag was a moment ago, not where it stood still last.
            state.restartSlowAverages()
            state.slowRestart = now
        }
    }

    /// The motion statistic of a tag now: about 1 for a still tag, growing as it moves.
    func motionStatistic(_ state: TagState, now: Double) -> Double? {
        var sum = 0.0
        var count = 0
        for link in state.links where link.isHeard(within: map.model.readingMaxAge, of: now) {
            let fast = link.fast.estimate(at: now, configuration: configuration.rssiFilter)
            let slow = link.slow.estimate(at: now, configuration: configuration.stillRSSIFilter)
            let difference = fast.rssi - slow.rssi
            sum += difference * difference / max(fast.variance + slow.variance, 1e-6)
            count += 1
        }
        return count > 0 ? sum / Double(count) : nil
    }

    /// The tag's current range to each agent that heard it recently, nearest first, from the fast or slow RSSIs.
    func currentRanges(_ state: TagState, now: Double, radio: RadioConstants, slow: Bool = false) -> [AgentRange] {
        let measuredPower = state.measuredPowerOverride ?? state.advertisedPower ?? map.model.measuredPower
        var ranges: [AgentRange] = []
        ranges.reserveCapacity(state.links.count)
        for link in state.links where link.isHeard(within: map.model.readingMaxAge, of: now) {
            let model = PathLossModel(
                measuredPower: measuredPower,
                exponent: radio.pathLossExponent(ofAgent: link.agentIndex),
                rssiOffset: radio.rssiOffsets[link.agentIndex]
            )
            let estimate =
                slow
                ? link.slow.estimate(at: now, configuration: configuration.stillRSSIFilter)
                : link.fast.estimate(at: now, configuration: configuration.rssiFilter)
            let distance = model.distance(forRSSI: estimate.rssi)
            let growth = radio.pathLossExponents[link.agentIndex] == nil ? configuration.modelSigmaPerMetre : 0
            let modelSigma = configuration.modelSigma + growth * distance
            let sigma = model.rangeSigma(
                atDistance: distance,
                rssiSigma: (estimate.variance + modelSigma * modelSigma).squareRoot()
            )
            ranges.append(
                AgentRange(
                    agentIndex: link.agentIndex,
                    distance: distance,
                    accuracy: sigma,
                    proximity: Proximity(range: distance),
                    rssi: estimate.rssi
                )
            )
        }
        ranges.sort { ($0.distance, $0.agentIndex) < ($1.distance, $1.agentIndex) }
        return ranges
    }

    /// Picks the floor from the agents' evidence: the mean of each floor's two strongest corrected RSSIs, with
    /// hysteresis against the current floor.
    ///
    /// People change floor at stairs and lifts. When the map gives them for the tag's floor, another floor takes
    /// over after ``LocatorEngine/Configuration/floorSwitchUpdatesByStairs`` if the tag was placed within
    /// ``LocatorEngine/Configuration/stairsReach`` of them in the last ``LocatorEngine/Configuration/stairsMemory``
    /// seconds (a climb takes a while, and the estimate on the floor being left grows poor); elsewhere, once its
    /// floor is established, it must win by ``LocatorEngine/Configuration/floorSwitchMarginAwayFromStairs`` on
    /// ``LocatorEngine/Configuration/floorSwitchUpdatesAwayFromStairs`` updates in a row: a car that drove into the
    /// garage and parked under a bedroom's agent stays in the garage, and strong evidence still moves a tag (a lift
    /// the map lacks). A floor is established when it led every other by the switch margin on as many updates in
    /// a row since the tag came onto it: a floor chosen wrong from a tag's first, noisy readings never was, and
    /// holds nothing against the evidence. Where the map gives no stairs on the tag's floor, another floor takes
    /// over after ``LocatorEngine/Configuration/floorSwitchUpdates`` anywhere.
    private func chooseFloor(
        _ state: inout TagState, ranges: [AgentRange], radio: RadioConstants, now: Double,
        strongest: inout [(floor: UInt16, first: Double, second: Double)]
    ) -> UInt16? {
        // Per floor heard, its two strongest corrected RSSIs; a short list, as a tag is heard on a floor or two, in
        // the worker's buffer (made anew, this list and its scores were two of an estimate's half-dozen allocations).
        strongest.removeAll(keepingCapacity: true)
        for range in ranges {
            let agentFloor = map.agents[range.agentIndex].floor
            let corrected = range.rssi + radio.rssiOffsets[range.agentIndex]
            guard let slot = strongest.firstIndex(where: { $0.floor == agentFloor }) else {
                strongest.append((agentFloor, corrected, -.infinity))
                continue
            }
            if corrected > strongest[slot].first {
                strongest[slot].second = strongest[slot].first
                strongest[slot].first = corrected
            } else if corrected > strongest[slot].second {
                strongest[slot].second = corrected
            }
        }
        let scores = strongest.lazy.map { entry in
            (key: entry.floor, value: entry.second.isFinite ? (entry.first + entry.second) / 2 : entry.first - 3)
        }
        guard let best = scores.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }) else { return nil }
        guard let current = state.floor, let currentScore = scores.first(where: { $0.key == current })?.value else {
            state.floor = best.key
            state.floorChallengerCount = 0
            state.floorLeadCount = 0
            return best.key
        }
        if state.floorLeadCount < configuration.floorSwitchUpdatesAwayFromStairs {
            let runnerUp = scores.lazy.filter { $0.key != current }.map(\.value).max() ?? -.infinity
            let leads = currentScore >= runnerUp + configuration.floorSwitchMargin
            state.floorLeadCount = leads ? state.floorLeadCount + 1 : 0
        }
        guard best.key != current, best.value >= currentScore + configuration.floorSwitchMargin else {
            state.floorChallenger = nil
            state.floorChallengerCount = 0
            return current
        }
        if state.floorChallenger != best.key {
            state.floorChallenger = best.key
            state.floorChallengerCount = 0
        }
        let margin: Double
        let needed: Int
        let established = state.floorLeadCount >= configuration.floorSwitchUpdatesAwayFromStairs
        if !map.stairs.contains(where: { $0.floors.contains(current) }) {
            (margin, needed) = (configuration.floorSwitchMargin, configuration.floorSwitchUpdates)
        } else if now - state.atStairs <= configuration.stairsMemory {
            (margin, needed) = (configuration.floorSwitchMargin, configuration.floorSwitchUpdatesByStairs)
        } else if !established {
            // The floor was never the evidence's clear choice (chosen from a tag's first, noisy readings): it
            // holds nothing against the evidence.
            (margin, needed) = (configuration.floorSwitchMargin, configuration.floorSwitchUpdates)
        } else {
            (margin, needed) = (
                configuration.floorSwitchMarginAwayFromStairs, configuration.floorSwitchUpdatesAwayFromStairs
            )
        }
        guard best.value >= currentScore + margin else {
            // Away from stairs and not by the wider margin: the floor stays contested, but the run starts again.
            state.floorChallengerCount = 0
            return current
        }
        state.floorChallengerCount += 1
        if state.floorChallengerCount >= needed {
            state.floor = best.key
            state.floorChallenger = nil
            state.floorChallengerCount = 0
            state.floorLeadCount = 0
        }
        return state.floor
    }

    /// The stairs (or lift) from one floor to another nearest `position` (any of them without one), if the map
    /// gives one.
    func stairs(from floor: UInt16, to other: UInt16, near position: Point?) -> Stairs? {
        let joining = map.stairs.lazy.filter { $0.floors.contains(floor) && $0.floors.contains(other) }
        guard let position else { return joining.first }
        return joining.min { $0.position.distance(to: position) < $1.position.distance(to: position) }
    }
}

/// A worker's working memory for estimates, kept from update to update: the grid filter's buffers and the floor
/// choice's.
struct EstimateScratch: Sendable {
    var filter: GridFilter
    var observations: [GridFilter.Observation] = []
    /// The floor choice's: per floor heard, its two strongest corrected RSSIs.
    var strongestByFloor: [(floor: UInt16, first: Double, second: Double)] = []

    init(configuration: GridFilter.Configuration) {
        filter = GridFilter(configuration: configuration)
    }
}
