/// How one tag's estimate is made from its state (the steps are in ``TagTracker``'s overview): what it reads, which
/// never changes during an update, and the functions that change only the tag's own state.
///
/// Tags are independent of one another here, so an update can split them among workers (``EstimateWork``), each
/// with an estimator of its own that shares the map and the floor grids with the others.
struct TagEstimator: Sendable {
    let map: FloorMap
    let configuration: LocatorEngine.Configuration
    let wallsByFloor: [UInt16: [Wall]]
    /// Whether any agent has a radio map: without one, the published accuracy's model error is never scaled
    /// (``surveyedShare(at:floor:ranges:)``), and the estimate skips looking.
    let hasRadioSurfaces: Bool
    /// One per floor with the grid filter; refreshed (between updates) when the radio constants change.
    private(set) var grids: [FloorGrid] = []
    private(set) var gridIndexByFloor: [UInt16: Int] = [:]
    /// The radio constants the grids' gain tables were made with.
    private var gridRadio: RadioConstants

    init(map: FloorMap, configuration: LocatorEngine.Configuration, radio: RadioConstants) {
        self.map = map
        self.configuration = configuration
        gridRadio = radio
        hasRadioSurfaces = map.agents.contains { $0.radioSurface != nil }
        wallsByFloor = configuration.usesWalls ? Dictionary(grouping: map.walls, by: \.floor) : [:]
        if configuration.positioning == .grid {
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
        if usesGrid {
            updateMotion(&state, now: now)
            let estimate = gridEstimate(&state, ranges: ranges, now: now, radio: radio, scratch: &scratch)
            if let estimate { place(&state, estimate) }
            return estimate
        }
        guard
            let floorMajor = chooseFloor(
                &state, ranges: ranges, radio: radio, now: now, scratch: &scratch),
            let floor = map.floor(major: floorMajor)
        else { return nil }
        updateMotion(&state, now: now)
        let contested = state.trilateration.floorChallenger != nil

        let position: Point
        let accuracy: Double
        let quality: Fix.Quality
        if state.moving || state.trilateration.trackFloor != floorMajor || state.trilateration.track == nil {
            // Moving (or starting): follow the fix of the fast RSSIs. A still tag needs no fast fix at all.
            guard let fastFix = fix(ranges, floor: floor, radio: radio) else { return nil }
            if var track = state.trilateration.track, state.trilateration.trackFloor == floorMajor {
                track.update(
                    position: fastFix.position,
                    accuracy: fastFix.accuracy,
                    time: now,
                    configuration: configuration.track
                )
                track.keep(inside: floor.outline)
                state.trilateration.track = track
            } else {
                state.trilateration.track = TrackFilter(
                    position: fastFix.position, accuracy: fastFix.accuracy, time: now)
                state.trilateration.trackFloor = floorMajor
            }
            position = state.trilateration.track?.position ?? fastFix.position
            accuracy = min(state.trilateration.track?.accuracy ?? fastFix.accuracy, fastFix.accuracy)
            quality = fastFix.quality
        } else {
            let stillRanges = currentRanges(state, now: now, radio: radio, slow: true)
            guard let stillFix = fix(stillRanges, floor: floor, radio: radio) ?? fix(ranges, floor: floor, radio: radio)
            else { return nil }
            position = stillFix.position
            accuracy = stillFix.accuracy
            quality = stillFix.quality
            // Keep the track where the still estimate is, so that motion picks up from here.
            state.trilateration.track = TrackFilter(position: position, accuracy: accuracy, time: now)
            state.trilateration.trackFloor = floorMajor
        }
        let estimate = TagEstimate(
            tag: state.identity,
            name: state.name,
            floor: floorMajor,
            position: position,
            accuracy: accuracy * configuration.trilaterationAccuracyPerRMS,
            zone: nil,
            ranges: ranges,
            quality: quality,
            time: now,
            // (Zone evidence takes the RMS error the track claims.)
            zoneEvidence: zones.evidence(floor: floorMajor, position: position, accuracy: accuracy),
            floorContested: contested,
            spread: accuracy
        )
        place(&state, estimate)
        return estimate
    }

    /// Notes where an estimate put the tag, and whether by stairs or a lift of its floor: within
    /// ``LocatorEngine/Configuration/stairsReach`` of them, plus the estimate's own accuracy (a tag on the stairs
    /// is heard through the floor by both floors' agents, and its estimate on either is poor), as an RMS distance
    /// (``TagEstimate/spread``).
    private func place(_ state: inout TagState, _ estimate: TagEstimate) {
        state.lastPosition = estimate.position
        let reach = configuration.stairsReach + estimate.spread
        if map.stairs.contains(where: {
            $0.floors.contains(estimate.floor) && $0.position.distance(to: estimate.position) <= reach
        }) {
            state.atStairs = estimate.time
        }
    }

    /// The estimate from the tag's grid posteriors, after the readings since the last update: the floor is part of
    /// the state.
    ///
    /// A tag has a posterior on its floor (``FloorBelief/posterior``) and, while another floor could explain its
    /// readings, one on that floor too (``FloorBelief/others``), each with the probability that the tag is there
    /// (``TagState/grid``, a ``FloorBelief``, whose steps these are). An update:
    /// 1. **Opens** a posterior on each floor that might be the tag's and has none: a floor joined to the tag's by
    ///    stairs or a lift it was placed by in the last ``LocatorEngine/Configuration/stairsMemory`` seconds (its
    ///    window starts around them), or one whose agents hear the tag within
    ///    ``GridFilter/Configuration/floorOpeningMargin`` of its floor's (by the mean of each floor's two strongest
    ///    corrected RSSIs, as ``scoreFloors(ranges:radio:scratch:)`` scores them).
    /// 2. **Moves** probability between floors as people do: the share of a floor's posterior within
    ///    ``GridFilter/Configuration/stairsCatchment`` of stairs (or a lift) to another floor leaves for it at
    ///    ``GridFilter/Configuration/floorChangeRateByStairs`` a second, and arrives by the stairs
    ///    (``GridFilter/update(_:observations:loudest:entry:entryShare:powerSigma:grids:gridIndex:now:)``); the rest leaves at
    ///    ``GridFilter/Configuration/floorChangeRateElsewhere`` (a lift the map lacks, a floor chosen wrong).
    /// 3. **Weighs** each floor by how well it explains the update's readings: each posterior's update, its agents
    ///    and those of the next floors (through the slab's loss) weighed at its cells, gives the readings' likelihood
    ///    marginal over where the tag may be on that floor (``GridFilter/floorEvidence(evidence:weighed:readings:)``). Shadowing
    ///    lasts and a slab's loss varies, so one update's readings are never trusted to more than a factor of
    ///    1 / ``GridFilter/Configuration/floorEvidenceFloor`` between floors: each floor's likelihood is a mixture of
    ///    its own and, with that weight, the best floor's.
    /// 4. Makes the most probable floor the tag's (of those this update weighed), and **drops** a floor under
    ///    ``GridFilter/Configuration/floorPruneMass`` that nothing opens any more.
    ///
    /// The estimate is the tag's floor's posterior, and its zone masses are that floor's: how likely each zone is,
    /// were the tag on the floor reported. (Times the floor's probability they would be the joint probabilities, but
    /// then a tag that had just changed floor, its new floor 0.5–0.8 likely, was reported in no zone for a second or
    /// two: over seeds 1–6 of the harness's two floors, 130 zone changes per tag-hour against 113 true, and 117
    /// without.) The floor is contested, and zone changes wait, while another holds more than
    /// ``GridFilter/Configuration/floorContestMass``.
    private func gridEstimate(
        _ state: inout TagState, ranges: [AgentRange], now: Double, radio: RadioConstants,
        scratch: inout EstimateScratch
    ) -> TagEstimate? {
        let tuning = configuration.grid
        scoreFloors(ranges: ranges, radio: radio, scratch: &scratch)
        let scores = scratch.floorScores
        guard let best = scores.max(by: { ($0.score, $1.floor) < ($1.score, $0.floor) }) else { return nil }
        let fresh = state.grid.posterior == nil
        // A floor another locator holds the tag on (``TagTracker/expectFloor(_:ofTagAt:)``): as likely as a floor
        // the tag was long on.
        var expected = false
        if fresh {
            // A tag without a posterior (new, or lost): on the floor it was expected on, or where it is heard best.
            if state.floor.flatMap({ gridIndexByFloor[$0] }) == nil {
                state.floor = best.floor
            } else {
                expected = state.floorLeadCount >= configuration.floorSwitchUpdatesAwayFromStairs
            }
            state.grid.restart(now: now)
        }
        guard let current = state.floor, let currentIndex = gridIndexByFloor[current] else { return nil }
        let byStairs = now - state.atStairs <= configuration.stairsMemory
        let lastPosition = state.lastPosition
        // 1. Floors that might be the tag's, not yet open.
        state.grid.open(
            scores, current: current, margin: tuning.floorOpeningMargin, hasGrid: { gridIndexByFloor[$0] != nil },
            landing: { byStairs ? stairs(from: current, to: $0, near: lastPosition) : nil })
        // 2. Probability moves between floors; a new tag's is shared among those open.
        if fresh {
            state.grid.share(expected: expected)
        } else {
            state.grid.move(
                now: now, current: current, tuning: tuning,
                joining: { stairs(from: current, to: $0, near: lastPosition) },
                massNear: { scratch.filter.mass(of: $0, near: $1, grid: grids[$0.gridIndex]) })
        }
        // 3. Each floor's posterior takes the readings; its likelihood weighs the floor.
        var agents = weighFloors(
            &state, currentIndex: currentIndex, ranges: ranges, now: now, radio: radio, scratch: &scratch)
        guard !state.grid.others.isEmpty else {
            state.grid.mass = 1
            return estimate(of: state, scratch.summaries[0], contested: false, ranges: ranges, agents: agents)
        }
        guard state.grid.weigh(scratch.evidences, keep: tuning.floorEvidenceFloor) else { return nil }
        // 4. The most probable floor is the tag's; a floor nothing holds open any more closes.
        if let chosen = state.grid.choose(now: now, current: current) {
            state.floor = chosen.floor
            scratch.summaries.swapAt(0, chosen.index + 1)
            agents = state.grid.posterior?.weighed ?? 0
        }
        let floor = state.floor ?? current
        let floorScore = scores.first { $0.floor == floor }?.score ?? -.infinity
        let runnerUp = state.grid.close(below: tuning.floorPruneMass) { other in
            let score = scores.first { $0.floor == other }?.score ?? -.infinity
            let landing = byStairs && stairs(from: floor, to: other, near: nil) != nil
            return landing || !(score < floorScore - tuning.floorOpeningMargin)
        }
        return estimate(
            of: state, scratch.summaries[0], contested: runnerUp > tuning.floorContestMass,
            ranges: ranges, agents: agents)
    }

    /// The update's readings (taken from the tag's links) weighed on each floor open, the tag's first
    /// (``weighFloor(_:gridIndex:entry:entryShare:powerSigma:reseeding:ranges:readings:now:radio:scratch:)``): each floor's summary and
    /// evidence in that order, into ``EstimateScratch/summaries`` and ``EstimateScratch/evidences`` (buffers kept
    /// from estimate to estimate: most tags have one floor, and two arrays made for each estimate were two
    /// allocations); returns how many agents weighed in on the tag's floor.
    private func weighFloors(
        _ state: inout TagState, currentIndex: Int, ranges: [AgentRange], now: Double, radio: RadioConstants,
        scratch: inout EstimateScratch
    ) -> Int {
        let power = state.measuredPowerOverride ?? state.advertisedPower ?? map.model.measuredPower
        scratch.pending.removeAll(keepingCapacity: true)
        state.takePending { agentIndex, rssi in
            scratch.pending.append((agentIndex, rssi + radio.rssiOffsets[agentIndex] - power))
        }
        let readings = scratch.pending.count
        // A power the map names is known to its sigma (the map's, or the tuning's); any other is learned online.
        let powerSigma =
            state.measuredPowerOverride == nil
            ? nil : state.measuredPowerSigma ?? configuration.grid.namedPowerSigma
        // One floor open: the filter may re-seed (not with others, whose evidence a re-seed would skew).
        let reseeding = state.grid.others.isEmpty
        let weighed = weighFloor(
            &state.grid.posterior, gridIndex: currentIndex, entry: nil, powerSigma: powerSigma, reseeding: reseeding,
            ranges: ranges, readings: readings, now: now, radio: radio, scratch: &scratch)
        scratch.summaries.removeAll(keepingCapacity: true)
        scratch.evidences.removeAll(keepingCapacity: true)
        scratch.summaries.append(weighed.summary)
        scratch.evidences.append(weighed.evidence)
        for index in state.grid.others.indices {
            let other = state.grid.others[index]
            guard let gridIndex = gridIndexByFloor[other.floor] else {
                // (Only floors with grids are opened.)
                scratch.evidences.append(-.infinity)
                scratch.summaries.append(nil)
                continue
            }
            if other.posterior == nil, let main = state.grid.posterior {
                // Opened now: the tag's learned power carries over.
                state.grid.others[index].posterior = GridPosterior(
                    gridIndex: gridIndex, column0: 0, row0: 0, columns: 0, rows: 0, probabilities: [],
                    offset: main.offset, offsetVariance: main.offsetVariance, time: -.infinity, astray: 0)
            }
            let result = weighFloor(
                &state.grid.others[index].posterior, gridIndex: gridIndex, entry: other.entry,
                entryShare: other.entryShare, powerSigma: powerSigma, reseeding: false, ranges: ranges,
                readings: readings, now: now, radio: radio, scratch: &scratch)
            state.grid.others[index].entry = nil
            state.grid.others[index].entryShare = 1
            scratch.evidences.append(result.evidence)
            scratch.summaries.append(result.summary)
        }
        return weighed.agents
    }

    /// One floor's posterior brought to `now` with the update's readings (``EstimateScratch/pending``): its summary
    /// (nil when no agent could weigh in, or with a lag none is due), the readings' log likelihood on the floor, and
    /// how many agents weighed in.
    private func weighFloor(
        _ posterior: inout GridPosterior?, gridIndex: Int, entry: Point?, entryShare: Double = 1, powerSigma: Double?,
        reseeding: Bool, ranges: [AgentRange], readings: Int, now: Double, radio: RadioConstants,
        scratch: inout EstimateScratch
    ) -> (summary: GridFilter.Summary?, evidence: Double, agents: Int) {
        // The one field read here: a copy of the whole grid retains and releases each of its arrays.
        let slotOfAgent = grids[gridIndex].slotOfAgent
        scratch.observations.removeAll(keepingCapacity: true)
        for (agentIndex, level) in scratch.pending {
            let slot = slotOfAgent[agentIndex]
            guard slot >= 0 else { continue }
            scratch.observations.append(GridFilter.Observation(slot: slot, level: level))
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
            &posterior, observations: scratch.observations, loudest: loudest?.slot, entry: entry,
            entryShare: entryShare, powerSigma: powerSigma, reseeding: reseeding, grids: grids, gridIndex: gridIndex,
            now: now)
        // (A posterior not updated now weighed nothing: every reading counts as an outlier on its floor.)
        let updated = posterior.map { $0.time == now && $0.gridIndex == gridIndex } ?? false
        let weighed = updated ? posterior?.weighed ?? 0 : 0
        let evidence = scratch.filter.floorEvidence(
            evidence: updated ? posterior?.evidence ?? 0 : 0, weighed: weighed, readings: readings)
        return (summary, evidence, weighed)
    }

    /// The tag's estimate from its floor's summary, which `agents` weighed in on.
    private func estimate(
        of state: TagState, _ summary: GridFilter.Summary?, contested: Bool,
        ranges: [AgentRange], agents: Int
    ) -> TagEstimate? {
        guard let summary else { return nil }
        let quality: Fix.Quality = agents >= 3 ? .converged : agents == 2 ? .twoAgents : .singleAgent
        // With a lag, the summary is of an earlier update, perhaps on the floor the tag was on then.
        var estimate = TagEstimate(
            tag: state.identity,
            name: state.name,
            floor: grids[summary.gridIndex].major,
            position: summary.mean,
            accuracy: summary.surprise
                * gridAccuracy(
                    spread: summary.spread, at: summary.mean, floor: grids[summary.gridIndex].major, ranges: ranges),
            zone: nil,
            ranges: ranges,
            quality: quality,
            time: summary.time,
            zoneEvidence: ZoneEvidence(masses: summary.zoneMasses),
            spread: summary.spread
        )
        estimate.floorContested = contested
        return estimate
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
                state.trilateration.track = nil
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
        scratch: inout EstimateScratch
    ) -> UInt16? {
        scoreFloors(ranges: ranges, radio: radio, scratch: &scratch)
        let scores = scratch.floorScores.lazy.map { (key: $0.floor, value: $0.score) }
        guard let best = scores.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }) else { return nil }
        guard let current = state.floor, let currentScore = scores.first(where: { $0.key == current })?.value else {
            state.floor = best.key
            state.trilateration.floorChallengerCount = 0
            state.floorLeadCount = 0
            return best.key
        }
        if state.floorLeadCount < configuration.floorSwitchUpdatesAwayFromStairs {
            let runnerUp = scores.lazy.filter { $0.key != current }.map(\.value).max() ?? -.infinity
            let leads = currentScore >= runnerUp + configuration.floorSwitchMargin
            state.floorLeadCount = leads ? state.floorLeadCount + 1 : 0
        }
        guard best.key != current, best.value >= currentScore + configuration.floorSwitchMargin else {
            state.trilateration.floorChallenger = nil
            state.trilateration.floorChallengerCount = 0
            return current
        }
        if state.trilateration.floorChallenger != best.key {
            state.trilateration.floorChallenger = best.key
            state.trilateration.floorChallengerCount = 0
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
            state.trilateration.floorChallengerCount = 0
            return current
        }
        state.trilateration.floorChallengerCount += 1
        if state.trilateration.floorChallengerCount >= needed {
            state.floor = best.key
            state.trilateration.floorChallenger = nil
            state.trilateration.floorChallengerCount = 0
            state.floorLeadCount = 0
        }
        return state.floor
    }

    /// Scores each floor the tag is heard on into ``EstimateScratch/floorScores``: the mean of its two strongest
    /// corrected RSSIs, or its strongest less 3 dB when only one of its agents hears the tag.
    private func scoreFloors(ranges: [AgentRange], radio: RadioConstants, scratch: inout EstimateScratch) {
        // Per floor heard, its two strongest corrected RSSIs; a short list, as a tag is heard on a floor or two, in
        // the worker's buffer (made anew, this list and its scores were two of an estimate's half-dozen allocations).
        scratch.strongestByFloor.removeAll(keepingCapacity: true)
        for range in ranges {
            let agentFloor = map.agents[range.agentIndex].floor
            let corrected = range.rssi + radio.rssiOffsets[range.agentIndex]
            guard let slot = scratch.strongestByFloor.firstIndex(where: { $0.floor == agentFloor }) else {
                scratch.strongestByFloor.append((agentFloor, corrected, -.infinity))
                continue
            }
            if corrected > scratch.strongestByFloor[slot].first {
                scratch.strongestByFloor[slot].second = scratch.strongestByFloor[slot].first
                scratch.strongestByFloor[slot].first = corrected
            } else if corrected > scratch.strongestByFloor[slot].second {
                scratch.strongestByFloor[slot].second = corrected
            }
        }
        scratch.floorScores.removeAll(keepingCapacity: true)
        for entry in scratch.strongestByFloor {
            let score = entry.second.isFinite ? (entry.first + entry.second) / 2 : entry.first - 3
            scratch.floorScores.append((entry.floor, score))
        }
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
    /// The floor choice's: per floor heard, its two strongest corrected RSSIs, and its score.
    var strongestByFloor: [(floor: UInt16, first: Double, second: Double)] = []
    var floorScores: [(floor: UInt16, score: Double)] = []
    /// The grid filter's: each agent's mean reading since the tag's last update, corrected, less the tag's power.
    var pending: [(agentIndex: Int, level: Double)] = []
    /// Each open floor's summary and evidence in an update, the tag's floor first (``FloorBelief/weigh(_:keep:)``).
    var summaries: [GridFilter.Summary?] = []
    var evidences: [Double] = []

    init(configuration: GridFilter.Configuration) {
        filter = GridFilter(configuration: configuration)
    }
}
