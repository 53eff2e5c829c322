/// Where each tag is: per-tag RSSI filters, the floor choice, and the position from a ``GridFilter`` (or, with
/// ``LocatorEngine/Configuration/Positioning/trilateration``, from the trilateration fix).
///
/// With the grid filter (the default), each update takes every agent's readings since the last update, averaged
/// per agent, into the tag's posterior over its floor's cells; the estimate is the posterior mean, its accuracy the
/// posterior's RMS spread, and it carries the posterior mass per zone for the zone decision. The RSSI filters below
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
    private let map: FloorMap
    private let configuration: LocatorEngine.Configuration
    private let wallsByFloor: [UInt16: [Wall]]
    private var tags: [TagState] = []
    private var tagIndexByIdentity: [TagIdentity: Int] = [:]
    private var dirtyTags: [Int] = []
    private var grids: [FloorGrid] = []
    private var gridIndexByFloor: [UInt16: Int] = [:]
    private var gridRadio: RadioConstants
    private var filter: GridFilter
    /// The grid filter's input for one tag, reused from tag to tag.
    private var observations: [GridFilter.Observation] = []

    /// No tags yet.
    init(map: FloorMap, configuration: LocatorEngine.Configuration) {
        self.map = map
        self.configuration = configuration
        wallsByFloor = configuration.usesWalls ? Dictionary(grouping: map.walls, by: \.floor) : [:]
        gridRadio = RadioConstants(map: map)
        filter = GridFilter(configuration: configuration.grid)
        if configuration.positioning.resolved(for: map) == .grid {
            for floor in map.floors {
                gridIndexByFloor[floor.major] = grids.count
                grids.append(
                    FloorGrid(
                        floor: floor, map: map, zones: map.zones(onFloor: floor.major),
                        walls: wallsByFloor[floor.major] ?? [],
                        obstacles: map.obstacles.filter { $0.floor == floor.major }.map(\.polygon),
                        barriers: map.walls.filter { $0.floor == floor.major }.flatMap(\.barriers), radio: gridRadio,
                        configuration: configuration.grid))
            }
        }
    }

    /// How many tags it holds state for.
    var count: Int { tags.count }

    /// Whether it holds state for the tag.
    func holds(_ tag: TagIdentity) -> Bool { tagIndexByIdentity[tag] != nil }

    /// Starts holding state for a tag, with the name and measured power the map gives it, if any.
    mutating func start(_ tag: TagIdentity, known: KnownTag?) {
        tagIndexByIdentity[tag] = tags.count
        tags.append(TagState(identity: tag, name: known?.name, measuredPowerOverride: known?.measuredPower))
    }

    /// Takes a valid, recent reading of a tag it holds, heard by the agent at `agentIndex` in the map.
    mutating func take(_ reading: Reading, agentIndex: Int) {
        guard let index = tagIndexByIdentity[reading.tag] else { return }
        if !tags[index].dirty { dirtyTags.append(index) }
        tags[index].take(
            reading,
            agentIndex: agentIndex,
            fast: configuration.rssiFilter,
            slow: configuration.stillRSSIFilter
        )
    }

    /// Estimates every tag heard since the last call, in the order they were heard; tags without enough ranges
    /// give none.
    mutating func estimateHeard(now: Double, radio: RadioConstants) -> [TagEstimate] {
        var estimates: [TagEstimate] = []
        if !grids.isEmpty, radio != gridRadio {
            gridRadio = radio
            for index in grids.indices { grids[index].refresh(radio: radio, map: map) }
        }
        let dirty = dirtyTags
        dirtyTags.removeAll(keepingCapacity: true)
        // A little slack, so that updates on whole multiples of the interval (a replay's ticks) are not put off by
        // rounding.
        let earliest = now - configuration.estimateInterval + 1e-6
        for index in dirty where tags[index].dirty {
            // (A clock stepped back does not hold a tag up.)
            guard tags[index].lastEstimated <= earliest || tags[index].lastEstimated > now else {
                // Estimated too recently: its readings wait in the filters for a later update.
                dirtyTags.append(index)
                continue
            }
            tags[index].dirty = false
            tags[index].lastEstimated = now
            if let estimate = estimate(tagIndex: index, now: now, radio: radio) {
                estimates.append(estimate)
            }
        }
        return estimates
    }

    /// Every tag held, in the order first heard: how long it has been silent, and whether it has a position.
    func silences(now: Double) -> [(tag: TagIdentity, silence: Double, hasTrack: Bool)] {
        tags.map { ($0.identity, now - $0.lastHeard, $0.hasPosition) }
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
        guard let index = tagIndexByIdentity[tag] else { return }
        tags[index].track = nil
        tags[index].floor = nil
        tags[index].posterior = nil
    }

    /// Drops all state of these tags.
    mutating func forget(_ drop: Set<TagIdentity>) {
        remove(where: tags.map { drop.contains($0.identity) })
    }

    /// Removes the tags whose flag is set, keeping the others in order, and the tags waiting for an estimate.
    private mutating func remove(where drop: [Bool]) {
        var newIndex = [Int](repeating: -1, count: tags.count)
        var kept: [TagState] = []
        kept.reserveCapacity(tags.count)
        for index in tags.indices where !drop[index] {
            newIndex[index] = kept.count
            kept.append(tags[index])
        }
        tags = kept
        // A new dictionary rather than removals: a dictionary never gives back the room it once needed.
        tagIndexByIdentity = Dictionary(tags.enumerated().map { ($1.identity, $0) }, uniquingKeysWith: { a, _ in a })
        dirtyTags = dirtyTags.compactMap { newIndex[$0] >= 0 ? newIndex[$0] : nil }
    }

    /// The motion statistic of a tag now: about 1 for a still tag, growing as it moves.
    func motionStatistic(of tag: TagIdentity, now: Double) -> Double? {
        tagIndexByIdentity[tag].flatMap { motionStatistic(tagIndex: $0, now: now) }
    }

    /// Whether the tag is taken to be moving.
    func isMoving(_ tag: TagIdentity) -> Bool? {
        tagIndexByIdentity[tag].map { tags[$0].moving }
    }

    /// The agents that hear a tag, nearest first.
    func ranging(_ tag: TagIdentity, now: Double, radio: RadioConstants) -> [AgentRange] {
        guard let index = tagIndexByIdentity[tag] else { return [] }
        return currentRanges(tagIndex: index, now: now, radio: radio)
    }

    // MARK: - Estimating

    private mutating func estimate(tagIndex: Int, now: Double, radio: RadioConstants) -> TagEstimate? {
        let ranges = currentRanges(tagIndex: tagIndex, now: now, radio: radio, slow: false)
        guard !ranges.isEmpty else { return nil }
        guard let floorMajor = chooseFloor(tagIndex: tagIndex, ranges: ranges, radio: radio),
            let floor = map.floor(major: floorMajor)
        else { return nil }
        updateMotion(tagIndex: tagIndex, now: now)
        if let gridIndex = gridIndexByFloor[floorMajor] {
            return gridEstimate(tagIndex: tagIndex, gridIndex: gridIndex, ranges: ranges, now: now, radio: radio)
        }
        tags[tagIndex].pending.removeAll(keepingCapacity: true)

        var state = tags[tagIndex]
        defer { tags[tagIndex] = state }
        let position: Point
        let accuracy: Double
        let quality: Fix.Quality
        if state.moving || state.trackFloor != floorMajor || state.track == nil {
            // Moving (or starting): follow the fix of the fast RSSIs. A still tag needs no fast fix at all.
            guard let fastFix = fix(ranges, floor: floor, radio: radio) else { return nil }
            if let previous = state.track, state.trackFloor == floorMajor {
                var track = previous
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
            let stillRanges = currentRanges(tagIndex: tagIndex, now: now, radio: radio, slow: true)
            guard let stillFix = fix(stillRanges, floor: floor, radio: radio) ?? fix(ranges, floor: floor, radio: radio)
            else { return nil }
            position = stillFix.position
            accuracy = stillFix.accuracy
            quality = stillFix.quality
            // Keep the track where the still estimate is, so that motion picks up from here.
            state.track = TrackFilter(position: position, accuracy: accuracy, time: now)
            state.trackFloor = floorMajor
        }
        return TagEstimate(
            tag: state.identity,
            name: state.name,
            floor: floorMajor,
            position: position,
            accuracy: accuracy,
            zone: nil,
            ranges: ranges,
            quality: quality,
            time: now
        )
    }

    /// The estimate from the tag's grid posterior, after the readings since the last update.
    private mutating func gridEstimate(
        tagIndex: Int,
        gridIndex: Int,
        ranges: [AgentRange],
        now: Double,
        radio: RadioConstants
    ) -> TagEstimate? {
        // In place on the tag's state: a copy of it would share its buffers and make every write copy them.
        let grid = grids[gridIndex]
        let power = tags[tagIndex].measuredPowerOverride ?? tags[tagIndex].advertisedPower ?? map.model.measuredPower
        observations.removeAll(keepingCapacity: true)
        for pending in tags[tagIndex].pending {
            let slot = grid.slotOfAgent[pending.agentIndex]
            guard slot >= 0 else { continue }
            let rssi = pending.rssiSum / Double(pending.count)
            observations.append(
                GridFilter.Observation(slot: slot, level: rssi + radio.rssiOffsets[pending.agentIndex] - power))
        }
        tags[tagIndex].pending.removeAll(keepingCapacity: true)
        var posterior = tags[tagIndex].posterior
        tags[tagIndex].posterior = nil  // one reference to the probabilities while they change
        let summary = filter.update(
            &posterior, observations: observations, grid: grid, gridIndex: gridIndex, now: now)
        tags[tagIndex].posterior = posterior
        guard let summary else { return nil }
        let agentsUsed = observations.count
        let quality: Fix.Quality = agentsUsed >= 3 ? .converged : agentsUsed == 2 ? .twoAgents : .singleAgent
        return TagEstimate(
            tag: tags[tagIndex].identity,
            name: tags[tagIndex].name,
            floor: grid.major,
            position: summary.mean,
            accuracy: summary.spread,
            zone: nil,
            ranges: ranges,
            quality: quality,
            time: now,
            zoneEvidence: ZoneEvidence(zones: grid.zones, mass: summary.zoneMass)
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
            let agent = map.agents[range.agentIndex]
            measurements.append(
                RangeMeasurement(
                    anchor: agent.position,
                    heightDifference: agent.height - map.model.tagHeight,
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
    private mutating func updateMotion(tagIndex: Int, now: Double) {
        guard let statistic = motionStatistic(tagIndex: tagIndex, now: now) else { return }
        var state = tags[tagIndex]
        defer { tags[tagIndex] = state }
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
            for index in state.links.indices { state.links[index].slow = state.links[index].fast }
            state.slowRestart = now
        }
    }

    private func motionStatistic(tagIndex: Int, now: Double) -> Double? {
        var sum = 0.0
        var count = 0
        for link in tags[tagIndex].links where now - link.fast.time <= map.model.readingMaxAge {
            let fast = link.fast.estimate(at: now, configuration: configuration.rssiFilter)
            let slow = link.slow.estimate(at: now, configuration: configuration.stillRSSIFilter)
            let difference = fast.rssi - slow.rssi
            sum += difference * difference / max(fast.variance + slow.variance, 1e-6)
            count += 1
        }
        return count > 0 ? sum / Double(count) : nil
    }

    /// The tag's current range to each agent that heard it recently, nearest first, from the fast or slow RSSIs.
    private func currentRanges(tagIndex: Int, now: Double, radio: RadioConstants, slow: Bool = false) -> [AgentRange] {
        let state = tags[tagIndex]
        let measuredPower = state.measuredPowerOverride ?? state.advertisedPower ?? map.model.measuredPower
        var ranges: [AgentRange] = []
        ranges.reserveCapacity(state.links.count)
        for link in state.links where now - link.fast.time <= map.model.readingMaxAge {
            let agent = map.agents[link.agentIndex]
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
                    agentID: agent.id,
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
    private mutating func chooseFloor(tagIndex: Int, ranges: [AgentRange], radio: RadioConstants) -> UInt16? {
        var strongest: [UInt16: (Double, Double)] = [:]
        for range in ranges {
            let agent = map.agents[range.agentIndex]
            let corrected = range.rssi + radio.rssiOffsets[range.agentIndex]
            var pair = strongest[agent.floor] ?? (-.infinity, -.infinity)
            if corrected > pair.0 {
                pair = (corrected, pair.0)
            } else if corrected > pair.1 {
                pair.1 = corrected
            }
            strongest[agent.floor] = pair
        }
        let scores = strongest.mapValues { pair in pair.1.isFinite ? (pair.0 + pair.1) / 2 : pair.0 - 3 }
        guard let best = scores.max(by: { ($0.value, $1.key) < ($1.value, $0.key) }) else { return nil }
        var state = tags[tagIndex]
        defer { tags[tagIndex] = state }
        guard let current = state.floor, let currentScore = scores[current] else {
            state.floor = best.key
            state.floorChallengerCount = 0
            return best.key
        }
        if best.key != current, best.value >= currentScore + configuration.floorSwitchMargin {
            state.floorChallengerCount = state.floorChallenger == best.key ? state.floorChallengerCount + 1 : 1
            state.floorChallenger = best.key
            if state.floorChallengerCount >= configuration.floorSwitchUpdates {
                state.floor = best.key
                state.floorChallenger = nil
                state.floorChallengerCount = 0
            }
        } else {
            state.floorChallenger = nil
            state.floorChallengerCount = 0
        }
        return state.floor
    }
}

/// What the tracker keeps per tag.
private struct TagState: Sendable {
    struct Link: Sendable {
        var agentIndex: Int
        var fast: RSSIFilter
        var slow: RSSIFilter
    }

    let identity: TagIdentity
    let name: String?
    let measuredPowerOverride: Double?
    var advertisedPower: Double?
    // A short array beats a dictionary here: a tag is heard by a handful of agents.
    var links: [Link] = []
    var lastHeard = -Double.infinity
    var dirty = false
    /// When it was last estimated (an update's `now`).
    var lastEstimated = -Double.infinity
    var floor: UInt16?
    var floorChallenger: UInt16?
    var floorChallengerCount = 0
    var track: TrackFilter?
    var trackFloor: UInt16?
    var moving = true
    var quietSince: Double?
    var slowRestart = -Double.infinity
    // The grid filter's: readings since the last update, summed per agent, and the posterior.
    var pending: [PendingReading] = []
    var posterior: GridPosterior?

    /// Whether it has a position (a track, or the grid filter's posterior).
    var hasPosition: Bool { track != nil || posterior != nil }

    init(identity: TagIdentity, name: String?, measuredPowerOverride: Double?) {
        self.identity = identity
        self.name = name
        self.measuredPowerOverride = measuredPowerOverride
    }

    mutating func take(
        _ reading: Reading,
        agentIndex: Int,
        fast: RSSIFilter.Configuration,
        slow: RSSIFilter.Configuration
    ) {
        if let power = reading.measuredPower { advertisedPower = power }
        lastHeard = max(lastHeard, reading.time)
        dirty = true
        let weight = Double(reading.count)
        if let slot = pending.firstIndex(where: { $0.agentIndex == agentIndex }) {
            pending[slot].rssiSum += reading.rssi * weight
            pending[slot].count += weight
        } else {
            pending.append(PendingReading(agentIndex: agentIndex, rssiSum: reading.rssi * weight, count: weight))
        }
        for index in links.indices where links[index].agentIndex == agentIndex {
            links[index].fast.update(
                rssi: reading.rssi,
                count: reading.count,
                variance: reading.variance,
                time: reading.time,
                configuration: fast
            )
            links[index].slow.update(
                rssi: reading.rssi,
                count: reading.count,
                variance: reading.variance,
                time: reading.time,
                configuration: slow
            )
            return
        }
        let filter = RSSIFilter(
            rssi: reading.rssi,
            count: reading.count,
            variance: reading.variance,
            time: reading.time,
            configuration: fast
        )
        links.append(Link(agentIndex: agentIndex, fast: filter, slow: filter))
    }
}

/// One agent's readings of a tag since the tracker's last update.
struct PendingReading: Sendable {
    var agentIndex: Int
    /// Sum of RSSI × advert count.
    var rssiSum: Double
    /// Adverts summed.
    var count: Double
}
