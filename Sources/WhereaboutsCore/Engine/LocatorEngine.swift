/// The positioning engine: readings in; positions, zone events and occupancy out.
///
/// Pure and deterministic: no clock, no I/O, no randomness. Time comes in as `now:` and readings carry their own
/// times, so the live locator, offline replay and the simulator run this same code and get the same answers.
///
/// The pipeline for each tag:
/// 1. Two ``RSSIFilter``s per (tag, agent) smooth readings: a fast one that follows a walking tag, and a slow one
///    that averages a still tag's noise away. Readings older than the age limit stop counting.
/// 2. ``PathLossModel`` turns each smoothed RSSI into a range with a sigma that grows with distance.
/// 3. The floor is chosen from all agents' evidence, with hysteresis.
/// 4. A motion test compares the fast and slow RSSIs across agents. While the tag is still, the position is the
///    ``Trilateration`` fix of the slow RSSIs (long averaging: no wander, and little of the bias that noisy ranges
///    give a fix). While it moves, ``TrackFilter`` follows the fixes of the fast RSSIs.
/// 5. ``ZoneTracker`` decides the zone with hysteresis; occupancy and enter/exit events follow.
///
/// Units: metres, dBm, seconds.
public struct LocatorEngine: Sendable {
    /// Tuning of the whole pipeline.
    public struct Configuration: Sendable, Hashable {
        /// Fast RSSI smoothing per (tag, agent): follows a walking tag within a second or two.
        public var rssiFilter: RSSIFilter.Configuration = {
            var configuration = RSSIFilter.Configuration()
            configuration.processNoise = 8
            return configuration
        }()
        /// Slow RSSI smoothing per (tag, agent), used while the tag is still.
        public var stillRSSIFilter: RSSIFilter.Configuration = {
            var configuration = RSSIFilter.Configuration()
            configuration.processNoise = 0.01
            return configuration
        }()
        /// Mean normalised squared difference between fast and slow RSSIs above which the tag is moving …
        public var motionThreshold: Double = 1.5
        /// … and below which, for ``stillDuration`` seconds, it is still again.
        public var stillThreshold: Double = 0.7
        /// Seconds under ``stillThreshold`` before a moving tag counts as still.
        public var stillDuration: Double = 3
        /// While a tag moves, its long RSSI averages restart from the fast ones this often (seconds).
        public var slowRestartInterval: Double = 10
        /// Position smoothing per tag.
        public var track = TrackFilter.Configuration()
        /// Zone hysteresis.
        public var zones = ZoneTracker.Configuration()
        /// Error of the path-loss model itself (shadowing, body, orientation), in dB; it does not average away.
        public var modelSigma: Double = 3
        /// How much the model's error grows with distance, in dB per metre, for an agent whose constants are not
        /// calibrated: a far link crosses more furniture and people and picks up more multipath than the dB noise
        /// of a near one, and default constants get its range wrong by more, so it deserves less weight.
        public var modelSigmaPerMetre: Double = 0.5
        /// Whether the map's walls explain part of the loss on the paths they cross.
        public var usesWalls = true
        /// At most this many of the nearest agents on the floor go into a fix …
        public var maximumAgentsPerFix: Int = 4
        /// … or this many when every agent on the floor is calibrated (the map gives its path-loss exponent, as
        /// `whereabouts calibrate` writes it): calibrated far ranges are worth using.
        public var maximumCalibratedAgentsPerFix: Int = 8
        /// Another floor must beat the current one by this many dB …
        public var floorSwitchMargin: Double = 3
        /// … on this many updates in a row, before the tag changes floor.
        public var floorSwitchUpdates: Int = 3
        /// Which tags are tracked besides those the map names; empty means the site UUID.
        public var constraints: [BeaconIdentityConstraint] = []
        /// Whether an agent that has not been heard from for the map's agent timeout counts as offline. Live
        /// locators want this; a replay of a readings file, which has no heartbeats, does not.
        public var agentsTimeOut = true
        /// A tag silent for this long (seconds) is forgotten entirely, so that memory stays bounded.
        public var forgetAfter: Double = 3600

        public init() {}
    }

    /// The map, with the radio constants in force (see ``setAgentConstants(_:rssiOffset:pathLossExponent:)``).
    public private(set) var map: FloorMap
    /// The configuration.
    public let configuration: Configuration

    private let constraints: [BeaconIdentityConstraint]
    private let zonesByFloor: [UInt16: [Zone]]
    private let zoneIndexByKey: [ZoneKey: Int]
    private let coverage: [[Int]]
    private let agentBeacons: [TagIdentity: Int]
    private let wallsByFloor: [UInt16: [Wall]]
    private var calibratedFloors: Set<UInt16>

    private var tags: [TagState] = []
    private var tagIndexByIdentity: [TagIdentity: Int] = [:]
    private var agentLastHeard: [Double?]
    private var agentReportedOnline: [Bool?]
    private var zoneMembers: [Set<TagIdentity>]
    private var zoneStates: [ZoneState]
    private var changedZones: Set<Int> = []
    private var everSeen: Set<TagIdentity> = []
    private var dirtyTags: [Int] = []
    private var nextSweep = -Double.infinity

    /// Makes an engine for a map.
    public init(map: FloorMap, configuration: Configuration = Configuration()) {
        self.map = map
        self.configuration = configuration
        constraints = configuration.constraints.isEmpty ? [map.defaultConstraint] : configuration.constraints
        zonesByFloor = Dictionary(grouping: map.zones, by: \.floor)
        wallsByFloor = configuration.usesWalls ? Dictionary(grouping: map.walls, by: \.floor) : [:]
        zoneIndexByKey = Dictionary(map.zones.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { a, _ in a })
        coverage = map.zones.map { zone in
            map.agents.indices.filter { index in
                let agent = map.agents[index]
                return agent.floor == zone.floor
                    && (zone.polygon.contains(agent.position)
                        || zone.polygon.distanceToBoundary(agent.position) <= map.model.coverageRadius)
            }
        }
        agentBeacons = Dictionary(
            map.agents.enumerated().map { index, agent in
                (AgentBeacon.identity(site: map.site.uuid, floor: agent.floor, agentID: agent.id), index)
            },
            uniquingKeysWith: { first, _ in first }
        )
        calibratedFloors = Self.calibratedFloors(map)
        agentLastHeard = Array(repeating: nil, count: map.agents.count)
        agentReportedOnline = Array(repeating: nil, count: map.agents.count)
        zoneMembers = Array(repeating: [], count: map.zones.count)
        zoneStates = Array(repeating: .unknown, count: map.zones.count)
    }

    // MARK: - Input

    /// Whether the engine tracks this tag: the map names it, or an identity constraint selects it, and it is not
    /// an agent's own beacon.
    public func tracks(_ tag: TagIdentity) -> Bool {
        guard agentBeacons[tag] == nil else { return false }
        return map.knownTag(tag) != nil || constraints.contains { $0.matches(tag) }
    }

    /// The index of the agent whose beacon this is (agents advertise ``AgentBeacon`` identities), or nil.
    public func agentIndex(ofBeacon tag: TagIdentity) -> Int? { agentBeacons[tag] }

    /// Replaces an agent's radio constants (calibration); the next estimates use them.
    public mutating func setAgentConstants(_ agentIndex: Int, rssiOffset: Double, pathLossExponent: Double?) {
        guard map.agents.indices.contains(agentIndex), rssiOffset.isFinite,
            pathLossExponent.map({ $0.isFinite && $0 > 0 }) ?? true
        else { return }
        map.agents[agentIndex].rssiOffset = rssiOffset
        map.agents[agentIndex].pathLossExponent = pathLossExponent
        calibratedFloors = Self.calibratedFloors(map)
    }

    /// The floors whose every agent has its own path-loss exponent (calibrated).
    private static func calibratedFloors(_ map: FloorMap) -> Set<UInt16> {
        Set(
            map.floors.map(\.major).filter { major in
                let agents = map.agents.filter { $0.floor == major }
                return !agents.isEmpty && agents.allSatisfy { $0.pathLossExponent != nil }
            })
    }

    /// Takes one reading heard by the agent at `agentIndex` in the map.
    ///
    /// - Returns: nil when taken, or why not.
    @discardableResult
    public mutating func ingest(_ reading: Reading, agentIndex: Int, now: Double) -> ReadingRejection? {
        guard map.agents.indices.contains(agentIndex) else { return .unknownAgent }
        guard reading.rssi.isFinite, reading.rssi >= -127, reading.rssi <= 20, reading.time.isFinite,
            reading.count >= 1, reading.variance.map({ $0.isFinite && $0 >= 0 }) ?? true,
            reading.measuredPower.map({ $0.isFinite && $0 >= -127 && $0 <= 20 }) ?? true
        else { return .invalidValue }
        guard now - reading.time <= map.model.readingMaxAge else { return .stale }
        if agentBeacons[reading.tag] != nil {
            agentHeard(agentIndex, at: reading.time)
            return .agentBeacon
        }
        let index: Int
        if let existing = tagIndexByIdentity[reading.tag] {
            index = existing
        } else {
            guard tracks(reading.tag) else { return .untrackedTag }
            index = tags.count
            let known = map.knownTag(reading.tag)
            tags.append(TagState(identity: reading.tag, name: known?.name, measuredPowerOverride: known?.measuredPower))
            tagIndexByIdentity[reading.tag] = index
            everSeen.insert(reading.tag)
        }
        if !tags[index].dirty { dirtyTags.append(index) }
        tags[index].take(
            reading,
            agentIndex: agentIndex,
            fast: configuration.rssiFilter,
            slow: configuration.stillRSSIFilter
        )
        agentHeard(agentIndex, at: reading.time)
        return nil
    }

    /// Notes that an agent was heard from (a batch arrived, even an empty one).
    public mutating func agentHeard(_ agentIndex: Int, at time: Double) {
        guard agentLastHeard.indices.contains(agentIndex) else { return }
        if let last = agentLastHeard[agentIndex], last >= time { return }
        agentLastHeard[agentIndex] = time
    }

    /// Records what an agent said of itself on its status topic (online, or offline through its last will).
    public mutating func setAgentStatus(_ agentIndex: Int, online: Bool) {
        guard agentReportedOnline.indices.contains(agentIndex) else { return }
        agentReportedOnline[agentIndex] = online
    }

    // MARK: - Update

    /// How often, in seconds, ``update(now:)`` sweeps every tag for timeouts (tags heard since the last update are
    /// recomputed on every call).
    public static let sweepInterval = 1.0

    /// Recomputes every tag heard since the last update, applies timeouts and coverage, and reports the changes.
    ///
    /// Cost is proportional to the tags heard since the last call, plus a sweep of all tags once a second, so it
    /// can be called after every batch of messages.
    public mutating func update(now: Double) -> EngineUpdate {
        var result = EngineUpdate()
        refreshZoneStates(now: now)
        let dirty = dirtyTags
        dirtyTags.removeAll(keepingCapacity: true)
        for index in dirty where tags[index].dirty {
            tags[index].dirty = false
            if let estimate = estimate(tagIndex: index, now: now, events: &result.events) {
                result.estimates.append(estimate)
            }
        }
        if now >= nextSweep {
            nextSweep = now + Self.sweepInterval
            sweep(now: now, result: &result)
        }
        for zoneIndex in changedZones.sorted() {
            result.occupancyChanges.append(occupancy(zoneIndex))
        }
        changedZones.removeAll(keepingCapacity: true)
        result.events.sort { ($0.time, $0.kind == .enter ? 1 : 0) < ($1.time, $1.kind == .enter ? 1 : 0) }
        return result
    }

    /// Applies timeouts to silent tags and forgets long-silent ones.
    private mutating func sweep(now: Double, result: inout EngineUpdate) {
        var forgotten: [Int] = []
        for index in tags.indices {
            let silence = now - tags[index].lastHeard
            if silence > configuration.forgetAfter, tags[index].zone.current == nil { forgotten.append(index) }
            guard silence > map.model.tagTimeout, tags[index].track != nil || tags[index].zone.current != nil else {
                continue
            }
            if let zone = tags[index].zone.current, let zoneIndex = zoneIndexByKey[zone],
                zoneStates[zoneIndex] == .unknown
            {
                // Its agents are down: the tag may still be there. Say unknown, do not invent an exit.
                continue
            }
            if let left = tags[index].zone.leave() {
                moveTag(tags[index].identity, from: left, to: nil, time: now, events: &result.events)
            }
            tags[index].track = nil
            tags[index].floor = nil
            result.lostTags.append(tags[index].identity)
        }
        if !forgotten.isEmpty { forget(forgotten) }
    }

    private mutating func estimate(tagIndex: Int, now: Double, events: inout [ZoneEvent]) -> TagEstimate? {
        let ranges = currentRanges(tagIndex: tagIndex, now: now, slow: false)
        guard !ranges.isEmpty else { return nil }
        guard let floorMajor = chooseFloor(tagIndex: tagIndex, ranges: ranges), let floor = map.floor(major: floorMajor)
        else { return nil }
        updateMotion(tagIndex: tagIndex, now: now)

        var state = tags[tagIndex]
        let position: Point
        let accuracy: Double
        let quality: Fix.Quality
        if state.moving || state.trackFloor != floorMajor || state.track == nil {
            // Moving (or starting): follow the fix of the fast RSSIs. A still tag needs no fast fix at all.
            guard let fastFix = fix(ranges, floor: floor) else { return nil }
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
            let stillRanges = currentRanges(tagIndex: tagIndex, now: now, slow: true)
            guard let stillFix = fix(stillRanges, floor: floor) ?? fix(ranges, floor: floor) else { return nil }
            position = stillFix.position
            accuracy = stillFix.accuracy
            quality = stillFix.quality
            // Keep the track where the still estimate is, so that motion picks up from here.
            state.track = TrackFilter(position: position, accuracy: accuracy, time: now)
            state.trackFloor = floorMajor
        }

        // A zone on another floor is left as soon as the floor changes.
        if let current = state.zone.current, current.floor != floorMajor, let left = state.zone.leave() {
            tags[tagIndex] = state
            moveTag(state.identity, from: left, to: nil, time: now, events: &events)
        }
        if let change = state.zone.update(
            position: position,
            zones: zonesByFloor[floorMajor] ?? [],
            time: now,
            configuration: configuration.zones
        ) {
            tags[tagIndex] = state
            moveTag(state.identity, from: change.from, to: change.to, time: now, events: &events)
        }
        tags[tagIndex] = state
        return TagEstimate(
            tag: state.identity,
            name: state.name,
            floor: floorMajor,
            position: position,
            accuracy: accuracy,
            zone: state.zone.current,
            ranges: ranges,
            quality: quality,
            time: now
        )
    }

    /// The fix from the floor's nearest ranges.
    private func fix(_ ranges: [AgentRange], floor: Floor) -> Fix? {
        let limit =
            calibratedFloors.contains(floor.major)
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
                    exponent: agent.pathLossExponent ?? map.model.pathLossExponent
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

    /// The motion statistic of a tag now: about 1 for a still tag, growing as it moves.
    public func motionStatistic(of tag: TagIdentity, now: Double) -> Double? {
        tagIndexByIdentity[tag].flatMap { motionStatistic(tagIndex: $0, now: now) }
    }

    /// Whether the engine currently takes the tag to be moving.
    public func isMoving(_ tag: TagIdentity) -> Bool? {
        tagIndexByIdentity[tag].map { tags[$0].moving }
    }

    /// The tag's current range to each agent that heard it recently, nearest first, from the fast or slow RSSIs.
    private func currentRanges(tagIndex: Int, now: Double, slow: Bool = false) -> [AgentRange] {
        let state = tags[tagIndex]
        let measuredPower = state.measuredPowerOverride ?? state.advertisedPower ?? map.model.measuredPower
        var ranges: [AgentRange] = []
        ranges.reserveCapacity(state.links.count)
        for link in state.links where now - link.fast.time <= map.model.readingMaxAge {
            let agent = map.agents[link.agentIndex]
            let model = PathLossModel(
                measuredPower: measuredPower,
                exponent: agent.pathLossExponent ?? map.model.pathLossExponent,
                rssiOffset: agent.rssiOffset
            )
            let estimate =
                slow
                ? link.slow.estimate(at: now, configuration: configuration.stillRSSIFilter)
                : link.fast.estimate(at: now, configuration: configuration.rssiFilter)
            let distance = model.distance(forRSSI: estimate.rssi)
            let growth = agent.pathLossExponent == nil ? configuration.modelSigmaPerMetre : 0
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
    private mutating func chooseFloor(tagIndex: Int, ranges: [AgentRange]) -> UInt16? {
        var strongest: [UInt16: (Double, Double)] = [:]
        for range in ranges {
            let agent = map.agents[range.agentIndex]
            let corrected = range.rssi + agent.rssiOffset
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

    private mutating func moveTag(
        _ tag: TagIdentity,
        from: ZoneKey?,
        to: ZoneKey?,
        time: Double,
        events: inout [ZoneEvent]
    ) {
        if let from, let index = zoneIndexByKey[from] {
            zoneMembers[index].remove(tag)
            changedZones.insert(index)
            events.append(ZoneEvent(time: time, tag: tag, zone: from, kind: .exit))
        }
        if let to, let index = zoneIndexByKey[to] {
            zoneMembers[index].insert(tag)
            changedZones.insert(index)
            events.append(ZoneEvent(time: time, tag: tag, zone: to, kind: .enter))
        }
    }

    private mutating func refreshZoneStates(now: Double) {
        for zoneIndex in coverage.indices {
            let covered = coverage[zoneIndex].contains { isAgentOnline($0, now: now) }
            let state: ZoneState = covered ? .known : .unknown
            if zoneStates[zoneIndex] != state {
                zoneStates[zoneIndex] = state
                changedZones.insert(zoneIndex)
            }
        }
    }

    private mutating func forget(_ indices: [Int]) {
        let drop = Set(indices)
        tags = tags.enumerated().filter { !drop.contains($0.offset) }.map(\.element)
        tagIndexByIdentity = Dictionary(tags.enumerated().map { ($1.identity, $0) }, uniquingKeysWith: { a, _ in a })
    }

    // MARK: - Queries

    /// Whether an agent counts as online now.
    public func isAgentOnline(_ agentIndex: Int, now: Double) -> Bool {
        guard agentReportedOnline.indices.contains(agentIndex) else { return false }
        if agentReportedOnline[agentIndex] == false { return false }
        guard configuration.agentsTimeOut else { return true }
        guard let heard = agentLastHeard[agentIndex] else { return false }
        return now - heard <= map.model.agentTimeout
    }

    /// Who is in a zone, and whether that can be known.
    public func occupancy(of zone: ZoneKey) -> ZoneOccupancy? {
        zoneIndexByKey[zone].map(occupancy)
    }

    /// The occupancy of every zone, in map order.
    public var allOccupancy: [ZoneOccupancy] { map.zones.indices.map(occupancy) }

    private func occupancy(_ index: Int) -> ZoneOccupancy {
        ZoneOccupancy(zone: map.zones[index].key, state: zoneStates[index], tags: zoneMembers[index].sorted())
    }

    /// A tag's state for a zone: inside, outside, or unknown (never seen, or the zone's agents are down).
    public func state(of tag: TagIdentity, in zone: ZoneKey) -> RegionState {
        guard let zoneIndex = zoneIndexByKey[zone], zoneStates[zoneIndex] == .known else { return .unknown }
        guard let tagIndex = tagIndexByIdentity[tag] else { return everSeen.contains(tag) ? .outside : .unknown }
        return tags[tagIndex].zone.current == zone ? .inside : .outside
    }

    /// The zone a tag is in, if any.
    public func zone(of tag: TagIdentity) -> ZoneKey? {
        tagIndexByIdentity[tag].flatMap { tags[$0].zone.current }
    }

    /// The agents that hear a tag, nearest first (CoreLocation's ranging).
    public func ranging(_ tag: TagIdentity, now: Double) -> [AgentRange] {
        guard let index = tagIndexByIdentity[tag] else { return [] }
        return currentRanges(tagIndex: index, now: now)
    }

    /// How many tags the engine holds state for.
    public var trackedTagCount: Int { tags.count }
}

/// What the engine keeps per tag.
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
    var floor: UInt16?
    var floorChallenger: UInt16?
    var floorChallengerCount = 0
    var track: TrackFilter?
    var trackFloor: UInt16?
    var moving = true
    var quietSince: Double?
    var slowRestart = -Double.infinity
    var zone = ZoneTracker()

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
