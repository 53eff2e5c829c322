/// The positioning engine: readings in; positions, zone transitions and occupancy out.
///
/// Pure and deterministic: no clock, no I/O, no randomness. Time comes in as `now:` and readings carry their own
/// times, so the live locator, offline replay and the simulator run this same code and get the same answers.
///
/// A coordinator of four parts, each in its own file:
/// - ``TagTracker``: per-tag RSSI filters, motion, floor and trilateration fix (the positions).
/// - ``ZoneMembership``: each tag's zone with ``ZoneHysteresis``, occupancy per zone, transitions, unknown zones.
/// - ``AgentLiveness``: which agents are online, and so which zones are covered.
/// - ``RadioConstants``: each agent's RSSI offset and path-loss exponent in force (calibration sets them).
///
/// The map it is made with never changes.
///
/// Units: metres, dBm, seconds.
public struct LocatorEngine: Sendable {
    /// Tuning of the whole pipeline.
    public struct Configuration: Sendable, Hashable {
        /// How positions are estimated.
        public enum Positioning: String, Sendable, Hashable {
            /// A Bayes filter over each floor's cells (``GridFilter``), with zone probabilities.
            case grid
            /// Trilateration of smoothed ranges and a Kalman track.
            case trilateration
        }

        /// How long a moving tag's readings may wait for its next estimate: ``estimateInterval`` with trilateration;
        /// with the grid filter the larger of it and ``stillEstimateInterval``, as for a still tag (see
        /// ``estimateInterval``).
        public var movingEstimateInterval: Double {
            positioning == .grid ? max(estimateInterval, stillEstimateInterval) : estimateInterval
        }

        /// How positions are estimated: by default the grid filter, weighing readings against the radio map that
        /// `whereabouts calibrate` learns where the map has one, and against the path-loss model where it has not.
        /// It is ahead of trilateration on every scenario of the accuracy harness and on the Kolakowski flat with
        /// default constants (1.15 / 2.42 against 1.42 / 3.15 m), and far ahead with a radio map (0.84 / 1.63 m);
        /// docs/tracker.md has the figures, and what trilateration is still for.
        public var positioning = Positioning.grid
        /// The grid filter's tuning.
        public var grid = GridFilter.Configuration()
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
        public var zones = ZoneHysteresis.Configuration()
        /// The published accuracy of a trilateration estimate (``TagEstimate/accuracy``, the radius that holds the
        /// true position about 68 % of the time) per RMS error the fix and track claim. Their claim is too narrow:
        /// the radius that held 68 % of the true positions was 1.3–2.0 times it on the Kolakowski robot path and
        /// the accuracy harness's four scenarios (seed 42). Zone evidence takes the RMS error itself
        /// (``TagEstimate/spread``).
        public var trilaterationAccuracyPerRMS: Double = 1.6
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
        /// … on this many updates in a row, before the tag changes floor, where the map gives no stairs or lift on
        /// its floor.
        public var floorSwitchUpdates: Int = 3
        /// Where it does, people change floor there: a tag placed within ``stairsReach`` of them in the last
        /// ``stairsMemory`` seconds changes floor after this many updates …
        public var floorSwitchUpdatesByStairs: Int = 2
        /// How near stairs (metres, plus the estimate's own accuracy) an estimate must place a tag to count …
        public var stairsReach: Double = 6
        /// … and for how long (seconds) it then counts as by them.
        public var stairsMemory: Double = 20
        /// Away from stairs, once its floor is established (it led every other floor by ``floorSwitchMargin`` on
        /// ``floorSwitchUpdatesAwayFromStairs`` updates in a row since the tag came onto it), another floor must
        /// beat it by this many dB …
        public var floorSwitchMarginAwayFromStairs: Double = 6
        /// … on this many updates in a row.
        public var floorSwitchUpdatesAwayFromStairs: Int = 10
        /// Which tags are tracked besides those the map names; empty means the site UUID.
        public var constraints: [BeaconIdentityConstraint] = []
        /// Whether an agent that has not been heard from for the map's agent timeout counts as offline. Live
        /// locators want this; a replay of a readings file, which has no heartbeats, does not.
        public var agentsTimeOut = true
        /// A tag silent for this long (seconds) is forgotten entirely, so that memory stays bounded.
        public var forgetAfter: Double = 3600
        /// At most this many tags are held. A new tag past the limit makes room by evicting the longest-silent
        /// tags the map does not name (1/16 of the limit at once, so that a flood of new identities costs little
        /// per tag); tags the map names are never evicted. Twice a 10,000-tag campus by default.
        public var maximumTags: Int = 20_000
        /// A tag is estimated once an interval (seconds), at the first update from each of its own instants that
        /// brings it readings (or an interval past the instant, if none does), the instants spread over the
        /// interval tag by tag so that tags started together are not estimated together; readings that arrive
        /// between wait in its filters, and none is lost. Waiting for a batch of its own makes the estimate the
        /// freshest it can be, and a zone change it decides follows the batch that completed it by an update's
        /// time, not by however long that batch had waited for the instant. An estimate made off those instants (a
        /// tag's first, an urgent one below, or one that waited past its instant for a batch) does not move them,
        /// so the next may follow it sooner than an interval. Agents report once a second, each at its own phase,
        /// so a locator updating every 20 ms would otherwise estimate a tag heard by a dozen agents a dozen
        /// times a second, each time with one new reading: at 10,000 tags that is over 100,000 fixes a second, more
        /// than a core. Half a second keeps the added delay of a zone decision under the 1 s dwell, and replays and
        /// the simulator, which update once a second, are unchanged. 0 estimates a moving tag at every update (a
        /// still one at every update too only with ``stillEstimateInterval`` 0). With the grid filter a moving tag
        /// waits as long as a still one (the larger of the two intervals): it weighs each reading once, so an update
        /// with only some agents' readings buys a prediction and a wider window, not accuracy. One exception: a tag
        /// whose zone change is due within its interval (``zoneDecisionDue(of:)``) is estimated at every update that
        /// brings it readings, so that the change is decided with the first batch past its dwell. A tag's first zone is
        /// not a change: its regular estimates decide it.
        public var estimateInterval: Double = 0.5
        /// … and a tag the motion test takes to be still, at most this often (seconds; never more often than
        /// ``estimateInterval``). A still tag's estimate is its long RSSI averages' fix, which a second's readings
        /// barely move, and most tags of a site stand still most of the time: at 10,000 tags, a quarter walking, this
        /// is over a third fewer estimates. A tag that starts to walk is estimated at ``estimateInterval`` from the
        /// estimate that finds it moving. Replays and the simulator update once a second, so their figures do not
        /// change. 0 (or anything up to ``estimateInterval``) treats still tags as moving ones.
        public var stillEstimateInterval: Double = 1
        /// How many runs an update may split its estimates into (each takes at least 64 tags), for ``runner`` to
        /// run. The estimates are the same however many there are: each tag's depends on its own readings only.
        /// 1, the default, is one run; the locator asks for one per core.
        public var workers: Int = 1
        /// Who runs an update's runs of estimates: by default one after another on the caller's thread (Core starts
        /// no threads); the locator, `whereabouts replay` and the bench pass the runtime's threads.
        public var runner = WorkRunner.serial

        public init() {}
    }

    /// The map with the radio constants in force written into its agents; the engine's own map never changes.
    public var map: FloorMap { radio.applied(to: givenMap) }
    /// The radio constants in force (see ``setAgentConstants(_:rssiOffset:pathLossExponent:)``).
    public private(set) var radio: RadioConstants
    /// The configuration.
    public let configuration: Configuration

    private let givenMap: FloorMap
    private let constraints: [BeaconIdentityConstraint]
    private let agentBeacons: [TagIdentity: Int]
    private var tracker: TagTracker
    private var zones: ZoneMembership
    private var liveness: AgentLiveness
    private var nextSweep = -Double.infinity
    /// What evictions since the last update owe the next one: exits from zones, and tags whose positions went.
    private var evictionEvents: [ZoneTransition] = []
    private var evictionLosses: [TagIdentity] = []
    /// Floors given for tags not held yet (``expectFloor(_:of:at:)``), and when.
    private var expectedFloors: [TagIdentity: (floor: UInt16, time: Double)] = [:]

    /// Tags evicted since start to keep within ``Configuration/maximumTags``.
    public private(set) var evictedTagCount = 0

    /// Makes an engine for a map.
    public init(map: FloorMap, configuration: Configuration = Configuration()) {
        givenMap = map
        self.configuration = configuration
        constraints = configuration.constraints.isEmpty ? [map.defaultConstraint] : configuration.constraints
        agentBeacons = Dictionary(
            map.agents.enumerated().map { index, agent in
                (AgentBeacon.identity(site: map.site.uuid, floor: agent.floor, agentID: agent.id), index)
            },
            uniquingKeysWith: { first, _ in first }
        )
        radio = RadioConstants(map: map)
        tracker = TagTracker(map: map, configuration: configuration)
        zones = ZoneMembership(map: map, configuration: configuration.zones)
        liveness = AgentLiveness(map: map, timesOut: configuration.agentsTimeOut)
    }

    // MARK: - Input

    /// Whether the engine tracks this tag: the map names it, or an identity constraint selects it, and it is not
    /// an agent's own beacon.
    public func tracks(_ tag: TagIdentity) -> Bool {
        guard agentBeacons[tag] == nil else { return false }
        return givenMap.knownTag(tag) != nil || constraints.contains { $0.matches(tag) }
    }

    /// The index of the agent whose beacon this is (agents advertise ``AgentBeacon`` identities), or nil.
    public func agentIndex(ofBeacon tag: TagIdentity) -> Int? { agentBeacons[tag] }

    /// Replaces an agent's radio constants (calibration); the next estimates use them.
    public mutating func setAgentConstants(_ agentIndex: Int, rssiOffset: Double, pathLossExponent: Double?) {
        radio.set(agentIndex, rssiOffset: rssiOffset, pathLossExponent: pathLossExponent)
    }

    /// Takes one reading heard by the agent at `agentIndex` in the map.
    ///
    /// - Returns: nil when taken, or why not.
    @discardableResult
    public mutating func ingest(_ reading: Reading, agentIndex: Int, now: Double) -> ReadingRejection? {
        guard givenMap.agents.indices.contains(agentIndex) else { return .unknownAgent }
        if let refusal = check(reading, now: now) { return refusal }
        return take(
            reading, agentIndex: agentIndex, place: tracker.place(of: reading.tag, agentIndex: agentIndex), now: now)
    }

    /// How many readings of a batch ``ingest(_:agentIndex:now:)`` looks up together: enough for their cache
    /// misses to overlap, few enough that what they load is still cached when they are taken.
    static let lookAhead = 32

    /// Takes readings heard by the agent at `agentIndex` in the map, in order, as one by one
    /// (``ingest(_:agentIndex:now:)``) but faster: their tags and links are looked up a few dozen at a time
    /// (``TagTracker/places(of:agentIndex:into:)``).
    ///
    /// - Returns: for each reading, nil when taken, or why not.
    @discardableResult
    public mutating func ingest(_ readings: [Reading], agentIndex: Int, now: Double) -> [ReadingRejection?] {
        guard givenMap.agents.indices.contains(agentIndex) else {
            return Array(repeating: .unknownAgent, count: readings.count)
        }
        var outcomes: [ReadingRejection?] = []
        outcomes.reserveCapacity(readings.count)
        var places: [TagPlace] = []
        places.reserveCapacity(Self.lookAhead)
        var start = readings.startIndex
        while start < readings.endIndex {
            let end = min(start + Self.lookAhead, readings.endIndex)
            tracker.places(of: readings[start..<end], agentIndex: agentIndex, into: &places)
            let evicted = evictedTagCount
            for (reading, place) in zip(readings[start..<end], places) {
                if let refusal = check(reading, now: now) {
                    outcomes.append(refusal)
                    continue
                }
                // An eviction moved the tags: what was found before it is looked up again.
                let found = evictedTagCount == evicted ? place : tracker.place(of: reading.tag, agentIndex: agentIndex)
                outcomes.append(take(reading, agentIndex: agentIndex, place: found, now: now))
            }
            start = end
        }
        return outcomes
    }

    /// Why the reading cannot be taken at `now` whatever its tag, if it cannot.
    private func check(_ reading: Reading, now: Double) -> ReadingRejection? {
        guard reading.rssi.isFinite, reading.rssi >= -127, reading.rssi <= 20, reading.time.isFinite,
            reading.count >= 1, reading.variance.map({ $0.isFinite && $0 >= 0 }) ?? true,
            reading.measuredPower.map({ $0.isFinite && $0 >= -127 && $0 <= 20 }) ?? true
        else { return .invalidValue }
        guard now - reading.time <= givenMap.model.readingMaxAge else { return .stale }
        return nil
    }

    /// Takes a checked reading whose tag and link were looked up (`place`).
    private mutating func take(_ reading: Reading, agentIndex: Int, place: TagPlace, now: Double) -> ReadingRejection? {
        // A tag already held is neither an agent's beacon nor untracked (neither is ever held): one lookup, not three,
        // for nearly every reading. One not found may have been started by an earlier reading of the same batch.
        let tagIndex: Int
        if let held = place.tagIndex ?? tracker.index(of: reading.tag) {
            tagIndex = held
        } else {
            if agentBeacons[reading.tag] != nil {
                agentHeard(agentIndex, at: reading.time)
                return .agentBeacon
            }
            guard tracks(reading.tag) else { return .untrackedTag }
            if tracker.count >= configuration.maximumTags { evict(now: now) }
            tagIndex = tracker.start(reading.tag, known: givenMap.knownTag(reading.tag))
            zones.seen(reading.tag)
            if !expectedFloors.isEmpty, let expected = expectedFloors.removeValue(forKey: reading.tag),
                now - expected.time <= givenMap.model.tagTimeout
            {
                tracker.expectFloor(expected.floor, ofTagAt: tagIndex)
            }
        }
        tracker.take(reading, tagIndex: tagIndex, link: place.link, agentIndex: agentIndex)
        agentHeard(agentIndex, at: reading.time)
        return nil
    }

    /// Makes room for a new tag: the longest-silent unnamed tags go, and any zone they were in is left.
    private mutating func evict(now: Double) {
        let batch = max(configuration.maximumTags / 16, 1)
        let evicted = tracker.evictLongestSilent(keeping: configuration.maximumTags - batch)
        guard !evicted.isEmpty else { return }
        evictedTagCount += evicted.count
        for (tag, hadPosition) in evicted {
            let inZone = zones.zone(of: tag) != nil
            zones.leave(tag, time: now, transitions: &evictionEvents)
            if hadPosition || inZone { evictionLosses.append(tag) }
        }
        zones.forget(evicted.lazy.map(\.tag))
    }

    /// Notes that the tag was last placed on `floor` by a locator that heard more of it: another locator of a split
    /// site, or an earlier run, through the retained position it left. A tag not estimated here yet starts on that
    /// floor, established, instead of on the floor its first readings favour; held, or placed already, it is left
    /// as it is. So a locator that restarts takes up the floor a tag's history chose where its readings alone leave
    /// the floor open (a car parked in the garage under a bedroom's agent), and does not claim, beside its
    /// neighbour, a tag the neighbour holds on its own floor. Kept for ``RadioModel/tagTimeout`` seconds from
    /// `time`, for at most ``Configuration/maximumTags`` tags.
    public mutating func expectFloor(_ floor: UInt16, of tag: TagIdentity, at time: Double) {
        guard givenMap.floor(major: floor) != nil else { return }
        if let index = tracker.index(of: tag) {
            tracker.expectFloor(floor, ofTagAt: index)
            return
        }
        if expectedFloors.count >= configuration.maximumTags {
            expectedFloors = expectedFloors.filter { time - $0.value.time <= givenMap.model.tagTimeout }
            guard expectedFloors.count < configuration.maximumTags else { return }
        }
        expectedFloors[tag] = (floor, time)
    }

    /// Another locator of a split site holds the tag on a floor this one does not hear (a lift ride past the share's
    /// margin): it leaves its zone now, the exit coming with the next update, and loses its position and floor, as
    /// at its timeout but without being reported lost, since the other locator speaks for it. Held here, it would
    /// stay in its zone until its timeout, 30 s in two zones at once. Heard again, it starts afresh.
    public mutating func handOver(_ tag: TagIdentity, at time: Double) {
        guard tracker.index(of: tag) != nil else { return }
        zones.leave(tag, time: time, transitions: &evictionEvents)
        tracker.lose(tag)
    }

    /// Notes that an agent was heard from (a batch arrived, even an empty one).
    public mutating func agentHeard(_ agentIndex: Int, at time: Double) {
        liveness.heard(agentIndex, at: time)
    }

    /// Records what an agent said of itself on its status topic (online, or offline through its last will).
    public mutating func setAgentStatus(_ agentIndex: Int, online: Bool) {
        liveness.setStatus(agentIndex, online: online)
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
        result.events = evictionEvents
        result.lostTags = evictionLosses
        evictionEvents.removeAll()
        evictionLosses.removeAll()
        zones.refreshStates(liveness: liveness, now: now)
        let grid = tracker.usesGrid
        // Completed in place: taking each estimate out of the array copied it (a retain of each of its buffers,
        // released with the array).
        var estimates = tracker.estimateHeard(now: now, radio: radio, zones: zones.geometry)
        for index in estimates.indices {
            let (tag, floor, time) = (estimates[index].tag, estimates[index].floor, estimates[index].time)
            let position = estimates[index].position
            // Every estimate carries its zone probabilities: the grid filter's posterior masses, or those the
            // tracker made from a trilateration estimate's position and accuracy.
            // Moved out, so that the probabilities reported are made in its own buffer.
            var evidence =
                estimates[index].zoneEvidence.take()
                ?? zones.geometry.evidence(
                    floor: floor, position: position,
                    accuracy: estimates[index].spread)
            // At the estimate's time: with a lag (grid filter), an earlier update's, smoothed.
            let held = estimates[index].floorContested
            let placed =
                grid
                ? zones.place(
                    tag, floor: floor, evidence: evidence, held: held, time: time, transitions: &result.events)
                : zones.place(
                    tag, floor: floor, position: position, evidence: evidence, held: held, time: time,
                    transitions: &result.events)
            tracker.setDecisionDue(ofEstimate: index, placed.decisionDue)
            estimates[index].zone = placed.zone
            estimates[index].zoneProbability = placed.probability
            estimates[index].zoneProbabilities = evidence.takeReported()
        }
        result.estimates = estimates
        if now >= nextSweep {
            nextSweep = now + Self.sweepInterval
            sweep(now: now, result: &result)
        }
        result.occupancyChanges = zones.takeChanges()
        result.events.sort { ($0.time, $0.kind == .enter ? 1 : 0) < ($1.time, $1.kind == .enter ? 1 : 0) }
        return result
    }

    /// Applies timeouts to silent tags and forgets long-silent ones.
    private mutating func sweep(now: Double, result: inout EngineUpdate) {
        var forgotten: Set<TagIdentity> = []
        // A tag silent for neither timeout has nothing to do here.
        let threshold = min(configuration.forgetAfter, givenMap.model.tagTimeout)
        for (tag, silence, hasTrack) in tracker.silent(longerThan: threshold, now: now) {
            var zone = zones.zone(of: tag)
            // Silence of the agents is not absence of the tag: only the time its zone's agents have been reporting
            // again counts, so a tag is not lost in the second between their first batch and its first reading.
            let heardFor = zone.flatMap { zones.knownSince($0) }.map { min(silence, now - $0) } ?? silence
            if heardFor > givenMap.model.tagTimeout, hasTrack || zone != nil {
                // Its agents are down: the tag may still be there. Say unknown, do not invent an exit, until it is
                // to be forgotten: memory stays bounded while agents are down too.
                if let zone, zones.isUnknown(zone), silence <= configuration.forgetAfter { continue }
                zones.leave(tag, time: now, transitions: &result.events)
                tracker.lose(tag)
                result.lostTags.append(tag)
                zone = nil
            }
            // Forgotten in the same sweep as it times out, if silent that long: not a sweep later for having been
            // in a zone.
            if silence > configuration.forgetAfter, zone == nil { forgotten.insert(tag) }
        }
        if !forgotten.isEmpty {
            tracker.forget(forgotten)
            zones.forget(forgotten)
        }
    }

    // MARK: - Queries

    /// Whether an agent counts as online now.
    public func isAgentOnline(_ agentIndex: Int, now: Double) -> Bool {
        liveness.isOnline(agentIndex, now: now)
    }

    /// Whether a zone's occupancy can be known now (its agents are heard), or nil for a zone the map lacks. Cheap:
    /// ``occupancy(of:)`` also lists and sorts the zone's members.
    public func state(of zone: ZoneKey) -> ZoneState? {
        zones.state(of: zone)
    }

    /// Who is in a zone, and whether that can be known.
    public func occupancy(of zone: ZoneKey) -> Occupancy? {
        zones.occupancy(of: zone)
    }

    /// The occupancy of every zone, in map order.
    public var allOccupancy: [Occupancy] { zones.all }

    /// A tag's state for a zone: inside, outside, or unknown (never seen, or the zone's agents are down).
    public func state(of tag: TagIdentity, in zone: ZoneKey) -> RegionState {
        zones.state(of: tag, in: zone)
    }

    /// The zone a tag is in, if any.
    public func zone(of tag: TagIdentity) -> ZoneKey? {
        zones.zone(of: tag)
    }

    /// When a change of the tag's zone now pending may be decided, if one is: its estimates come with every batch
    /// from an estimate interval before then, so that the change is decided with the first batch after it. Nil while
    /// a tag's first zone is still being decided: nothing waits on that (a starting locator holds occupancy back),
    /// and a locator starting with 10,000 tags estimated each with every batch for a second.
    public func zoneDecisionDue(of tag: TagIdentity) -> Double? {
        zones.decisionDue(of: tag)
    }

    /// The motion statistic of a tag now: about 1 for a still tag, growing as it moves.
    public func motionStatistic(of tag: TagIdentity, now: Double) -> Double? {
        tracker.motionStatistic(of: tag, now: now)
    }

    /// Whether the engine currently takes the tag to be moving.
    public func isMoving(_ tag: TagIdentity) -> Bool? {
        tracker.isMoving(tag)
    }

    /// The agents that hear a tag, nearest first (CoreLocation's ranging).
    public func ranging(_ tag: TagIdentity, now: Double) -> [AgentRange] {
        tracker.ranging(tag, now: now, radio: radio)
    }

    /// A tag's posterior over its floor's cells, when the grid filter places it (nil with trilateration, or before
    /// its first estimate, or after it timed out).
    public func posterior(of tag: TagIdentity) -> TagPosterior? {
        tracker.posterior(of: tag)
    }

    /// How many tags the engine holds state for.
    public var trackedTagCount: Int { tracker.count }
}
