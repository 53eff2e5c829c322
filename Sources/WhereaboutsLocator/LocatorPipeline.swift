public import WhereaboutsCore
public import WhereaboutsSession
public import WhereaboutsWire

/// The locator's logic between the broker and the engine, as a state machine that returns actions.
///
/// The shell (the `whereabouts-locator` executable) owns the MQTT client and the clock. It feeds every received
/// message to ``receive(topic:payload:now:)``, calls ``tick(now:)`` after each burst of messages and at least once
/// a second, and performs the actions that come back. No I/O happens here, so tests drive it directly.
///
/// What it guarantees:
/// - Every reading is decoded and checked by ``BatchDecoder``; duplicates by (agent, epoch, seq) are dropped; every
///   rejection is counted by reason and logged at most once a minute per reason.
/// - Occupancy is not published during a warm-up after start, so a restart never publishes a false empty: the
///   retained values of the previous run stand until this run has heard the tags again. If no batch comes at all,
///   each zone whose agents stay silent for their timeout is published `unknown`, as it would be had they fallen
///   silent in a run: no count of the previous run stands for good.
/// - After every (re)connection, all retained state is published again.
/// - Each tag's zone summary (``TagZone``, and its plain-text location) is published only when the tag's zone or
///   its state changes: `unknown` while the agents that would hear it are offline, `lost` when it is not heard while
///   they are up.
/// - Home Assistant discovery configs that the map no longer has are removed, whether the map changed under a
///   running locator (SIGHUP) or while it was stopped (learned from the broker's retained configs at start).
public struct LocatorPipeline: Sendable {
    /// Settings of the pipeline.
    public struct Configuration: Sendable {
        /// The engine's tuning.
        public var engine = LocatorEngine.Configuration()
        /// Limits on batch payloads.
        public var limits = BatchDecoder.Limits()
        /// Time tolerances for readings.
        public var tolerance = BatchDecoder.TimeTolerance()
        /// Seconds during which occupancy is held back, counted from the first batch (or recorded reading) taken
        /// after the start or a reload.
        public var warmUp: Double = 10
        /// Seconds between metrics messages.
        public var metricsInterval: Double = 10
        /// A tag's position is republished at least this often (seconds) while it is tracked …
        public var positionHeartbeat: Double = 30
        /// … and otherwise only when it moved this far (metres) or changed zone or floor.
        public var positionMinimumMove: Double = 0.1
        /// Whether to announce Home Assistant discovery configs.
        public var homeAssistantDiscovery = true
        /// Whether readings that pass the wire checks (before the engine's own) produce `.record` actions.
        public var recordsReadings = false
        /// Which radio constants to range with, and the automatic calibration's settings.
        public var calibration = LocatorCalibration.Configuration()
        /// The floors (majors) this locator owns when the site is split between locators (``FloorShare``); nil
        /// for the whole site. Floors the map does not have are ignored (the shell refuses them first).
        public var floors: [UInt16]? = nil
        /// With ``floors``: how many floors above and below them the locator hears (``FloorShare/margin``).
        public var floorMargin = FloorShare.defaultMargin

        public init() {}
    }

    /// Counts since start.
    public struct Counters: Sendable, Equatable {
        /// Readings taken by the engine.
        public var accepted = 0
        /// Readings (or whole batches) refused, by reason.
        public var rejected: [RejectionReason: Int] = [:]
        /// Batches received on the readings topics.
        public var batches = 0
        /// Readings of other agents' beacons (calibration traffic, not tags).
        public var agentBeacons = 0
        /// Batches (or recorded readings) of agents this locator's ``FloorShare`` does not hear, ignored.
        public var otherFloors = 0
    }

    /// The map (replaced on SIGHUP by ``replaceMap(_:now:)``).
    public private(set) var map: FloorMap {
        didSet {
            zoneNames = Self.zoneNames(of: map)
            agentIDs = map.agents.map { AgentID($0.id) }
            mapGeneration += 1
        }
    }
    /// How many times the map was replaced: a batch decoded under another (``PreparedBatch``) is decoded again.
    private var mapGeneration = 0
    /// Each zone's name, for payloads (a search of the map's zones for every position was measurable).
    private var zoneNames: [ZoneKey: String] = [:]
    /// Each agent's id, by its index in the map, checked once for payloads (nil for one that is no valid id).
    private var agentIDs: [AgentID?] = []
    /// The topics of the map's site.
    public let topics: Topics
    /// The settings.
    public let configuration: Configuration
    /// Counts since start.
    public private(set) var counters = Counters()
    /// The floors this locator owns and hears, when the site is split between locators; nil for the whole site.
    public private(set) var share: FloorShare?

    private var engine: LocatorEngine
    private var calibration: LocatorCalibration
    private let decoder: BatchDecoder
    private var deduplicator = BatchDeduplicator()
    /// When the first batch (or recorded reading) was taken since the start or the last reload: the warm-up counts
    /// from here. Counted from the start, a locator slow to get its first readings (a loaded machine, a backlog to
    /// read after a restart) ended its warm-up before it had placed its tags, and published their zones empty.
    private var firstBatchTime: Double?
    private var warmedUp = false
    /// When the pipeline started (its first tick) or last took a new map.
    private var startTime: Double?
    /// The zones published `unknown` because no batch came for an agent timeout after the start.
    private var unheardZones: Set<ZoneKey> = []
    private var lastMetrics = -Double.infinity
    /// The counters the last metrics told, for ``hasUntoldCounts(now:)``.
    private var countersAtLastMetrics = Counters()
    private var lastPositions: [TagIdentity: PublishedPosition] = [:]
    private var latencies: [Double] = []
    private var pendingReceiveTimes: [Double] = []
    /// How long each batch since the last metrics took from its agent to the engine (``LocatorMetrics/inputLagP50``).
    private var inputLags: [Double] = []
    private var lastBehindWarning = -Double.infinity
    /// A median input lag from this many seconds up is said in the log (at most once a minute): the locator is
    /// behind its input. Well above agents' clock skew under NTP; readings older than the map's `reading_max_age`
    /// are dropped (`too_old_to_track`).
    static let behindLag = 2.0
    private var lastLogged: [RejectionReason: Double] = [:]
    private var suppressed: [RejectionReason: Int] = [:]
    /// Retained positions an earlier run (or the map before a reload) left, by tag, with when they were learned.
    private var inherited: [TagIdentity: Double] = [:]
    /// The most inherited positions remembered (a bound against a flood of retained topics).
    static let inheritedLimit = 100_000
    /// The zone summary last published for each tag, tracked or lost.
    private var lastZones: [TagIdentity: TagZone] = [:]
    /// The floor of each tag the engine tracks now (the ones not lost).
    private var trackedFloors: [TagIdentity: UInt16] = [:]
    /// Since when each floor has had an agent online (a floor with none is absent).
    private var floorOnlineSince: [UInt16: Double] = [:]
    /// When the tags' zone states were last re-evaluated against the agents' liveness.
    private var lastZoneSweep = -Double.infinity
    /// The discovery config topics of the map, to tell ours from leftovers.
    private var configTopics: Set<Topic> = []
    /// Tracked tags the map does not name, already logged as invisible to Home Assistant (bounded).
    private var unmappedLogged: Set<TagIdentity> = []
    /// The most unmapped tags logged one by one.
    static let unmappedLogLimit = 20
    /// Missing batches per agent as of the last gap report, and when that was.
    private var reportedMissing: [AgentID: Int] = [:]
    private var lastGapReport = -Double.infinity
    /// Tags the engine had evicted as of the last report, and when that was.
    private var reportedEvictions = 0
    private var lastEvictionReport = -Double.infinity
    /// Tags this locator publishes whose retained position or zone summary another locator wrote over (split
    /// sites, while two locators briefly disagree on a tag's floor): republished at the next tick.
    private var contested: Set<TagIdentity> = []
    /// Per contested tag, since when its republications are counted and how many there were: at most
    /// ``contestRepliesPerMinute`` a minute. Two locators that stay apart on a tag's floor (one does not hear the
    /// floor the other moved it to, or their histories differ) would otherwise each say theirs again at every tick,
    /// 50 times a second, for as long as the tag stays.
    private var contestReplies: [TagIdentity: (since: Double, count: Int)] = [:]
    /// When a tag's republications were last cut short, for the log (once a minute).
    private var lastContestWarning = -Double.infinity
    /// How many times a minute a locator says its own again of a tag another keeps writing over.
    public static let contestRepliesPerMinute = 10

    private struct PublishedPosition: Sendable {
        var payload: TagPosition
        var time: Double
        /// The tag's position topic, built once (the tag's identity written out) and kept for its next publications.
        var topic: Topic
    }

    /// Makes a pipeline for a validated map.
    public init(map: FloorMap, configuration: Configuration = Configuration()) {
        self.map = map
        zoneNames = Self.zoneNames(of: map)
        agentIDs = map.agents.map { AgentID($0.id) }
        self.configuration = configuration
        topics = Topics(site: map.site.uuid)
        engine = LocatorEngine(map: map, configuration: configuration.engine)
        calibration = LocatorCalibration(map: map, configuration: configuration.calibration)
        calibration.prepare(&engine)
        decoder = BatchDecoder(limits: configuration.limits, tolerance: configuration.tolerance)
        share = configuration.floors.map { FloorShare(lenient: map, floors: $0, margin: configuration.floorMargin) }
        configTopics = Set(discoveryConfigs(ownedOnly: false).map(\.topic))
    }

    // MARK: - Ownership (split sites)

    /// Whether this locator publishes the outputs of a floor: its zones' occupancy and events, and the tags on it.
    public func owns(floor major: UInt16) -> Bool { share?.owns(floor: major) ?? true }

    /// Whether this locator publishes the site-wide outputs (calibration, the site's and the tags' discovery
    /// configs, the classic status and metrics topics).
    public var ownsSite: Bool { share?.ownsSite ?? true }

    /// Whether this locator publishes a tag now: the engine tracks it on one of its floors.
    public func publishes(_ tag: TagIdentity) -> Bool {
        trackedFloors[tag].map { owns(floor: $0) } ?? false
    }

    /// Whether this locator listens to an agent (its share hears the agent's floor).
    func hears(agentIndex: Int) -> Bool { Self.hears(agentIndex: agentIndex, share: share, map: map) }

    private static func hears(agentIndex: Int, share: FloorShare?, map: FloorMap) -> Bool {
        share.map { $0.hears(floor: map.agents[agentIndex].floor) } ?? true
    }

    /// The locator's `online`/`offline` topic: `…/locator/status`, or its share's own for a share that does not own
    /// the site, so that one locator's last will never says another is offline.
    public var statusTopic: Topic {
        guard let share, !share.ownsSite else { return topics.locatorStatus }
        return topics.locatorStatus(shareOf: share.floors)
    }

    /// Where the metrics go: `…/locator/metrics`, or the share's own, like ``statusTopic``.
    public var metricsTopic: Topic {
        guard let share, !share.ownsSite else { return topics.locatorMetrics }
        return topics.locatorMetrics(shareOf: share.floors)
    }

    /// The subscriptions the shell makes (and remakes after every reconnect). The tags' positions and zone
    /// summaries, and our discovery configs, are read back (without our own publications) to learn what an earlier
    /// run left retained.
    ///
    /// A locator that owns a share of the floors subscribes to the readings and statuses of the agents it hears, one
    /// topic per agent, instead of every agent's.
    public var subscriptions: [Subscription] {
        var list: [Subscription] = []
        if let share {
            for agent in map.agents where share.hears(floor: agent.floor) {
                guard let id = AgentID(agent.id) else { continue }
                list.append(Subscription(filter: TopicFilter(exactly: topics.readings(agent: id)), qos: 1))
                list.append(Subscription(filter: TopicFilter(exactly: topics.agentStatus(agent: id)), qos: 1))
            }
        } else {
            list = [
                Subscription(filter: topics.allReadings, qos: 1), Subscription(filter: topics.allAgentStatuses, qos: 1),
            ]
        }
        list += [
            Subscription(filter: topics.allPositions, qos: 0, noLocal: true),
            Subscription(filter: topics.allTagZones, qos: 0, noLocal: true),
            Subscription(filter: topics.allOccupancy, qos: 0, noLocal: true),
        ]
        if configuration.homeAssistantDiscovery {
            list.append(Subscription(filter: Topics.homeAssistantStatusFilter, qos: 1))
            list.append(Subscription(filter: topics.allDiscoveryConfigs, qos: 0, noLocal: true))
        }
        return list
    }

    // MARK: - Lifecycle

    /// Called on every (re)connection: republishes all retained state. (The session announces `online` first.)
    public mutating func connected(now: Double) -> [LocatorAction] {
        var actions = discoveryActions()
        if ownsSite { actions.append(.publish(calibration.publication(engine: engine, topics: topics, now: now))) }
        if warmedUp {
            actions += ownedOccupancy.map { .publish(occupancyPublication($0, now: now)) }
        } else if !unheardZones.isEmpty {
            actions += unheardOccupancy.filter { unheardZones.contains($0.zone) }.map {
                .publish(occupancyPublication($0, now: now))
            }
        }
        for published in lastPositions.values.sorted(by: { $0.payload.tag < $1.payload.tag }) {
            actions.append(
                .publish(
                    Publication(
                        topic: topics.position(tag: published.payload.tag), payload: published.payload.payload, qos: 1,
                        retain: true, priority: .background)))
        }
        for tag in lastZones.keys.sorted() {
            if let summary = lastZones[tag] { actions += zonePublications(summary) }
        }
        return actions
    }

    // MARK: - The batch ledger

    /// Which batches the pipeline has taken, in ``BatchLedger``'s file form, for the shell to keep across restarts.
    public var ledger: [UInt8] { BatchLedger.encode(deduplicator) }

    /// Changes whenever the ledger does: the shell saves it only when this moved since its last save.
    public var ledgerRevision: UInt64 { deduplicator.revision }

    /// How many agents the ledger remembers.
    public var ledgerAgentCount: Int { deduplicator.trackedAgentCount }

    /// Takes the ledger an earlier run saved (``ledger``), before the first message; the batches it lists are then
    /// duplicates. Bytes that are not a whole, valid ledger change nothing: the ledger stays as it was (empty at
    /// start), and the error says why.
    public mutating func restoreLedger(_ bytes: [UInt8]) throws(BatchLedger.Error) {
        deduplicator = try BatchLedger.decode(
            bytes, maximumAgents: deduplicator.maximumAgents, clockSkew: deduplicator.clockSkew)
    }

    /// A tag's grid posterior as the engine holds it now (``LocatorEngine/posterior(of:)``).
    public func posterior(of tag: TagIdentity) -> TagPosterior? {
        engine.posterior(of: tag)
    }

    /// The last words at a stop: the final metrics. (The session then says `offline`, as the will would.)
    public mutating func shutdown(now: Double) -> [LocatorAction] {
        [.publish(metricsPublication(metrics(now: now)))]
    }

    /// Takes a new, validated map (SIGHUP). The engine starts over on it, so occupancy waits for a new warm-up (no
    /// zone passes through a false empty) and positions are published again as tags are heard; positions not heard
    /// again within the tag timeout are cleared, as are the occupancy and discovery configs of zones the new map no
    /// longer has. Counters and the batch ledger carry on. A map of another site is refused: the topics would change
    /// under the subscriptions, so changing sites takes a restart. So is, for a locator split by floor, a map that
    /// changes its share's floors or whether it owns the site (its status topic and last will would move).
    public mutating func replaceMap(_ newMap: FloorMap, now: Double) -> [LocatorAction] {
        guard newMap.site.uuid == map.site.uuid else {
            return [
                .log(
                    "the new map is for site \(newMap.site.uuid), not \(map.site.uuid): restart the locator to change sites"
                )
            ]
        }
        if let share, let floors = configuration.floors {
            // The share's own floors and whether it owns the site name its status topic, which its last will is on,
            // and who publishes the site's outputs: changing them takes a restart, as changing sites does.
            let next = FloorShare(lenient: newMap, floors: floors, margin: configuration.floorMargin)
            guard next.floors == share.floors, next.ownsSite == share.ownsSite else {
                let owner = { (share: FloorShare) in share.ownsSite ? ", owning the site" : "" }
                return [
                    .log(
                        "the new map changes this locator's share from floors \(share.floors)\(owner(share)) to "
                            + "floors \(next.floors)\(owner(next)): restart the locator to change it; keeping the map "
                            + "in force")
                ]
            }
        }
        var actions: [LocatorAction] = []
        // Occupancy of removed zones is cleared after their configs, so that no entity reads the empty payload.
        var clearedOccupancy: [LocatorAction] = []
        let kept = Set(newMap.zones.map(\.key))
        for zone in map.zones where !kept.contains(zone.key) {
            clearedOccupancy.append(
                .publish(
                    Publication(
                        topic: topics.occupancy(floor: zone.floor, zone: zone.minor), payload: "", qos: 1, retain: true,
                        priority: .urgent)
                ))
        }
        let oldConfigs = Set(discoveryConfigs(ownedOnly: false).map(\.topic))
        map = newMap
        share = configuration.floors.map {
            FloorShare(lenient: newMap, floors: $0, margin: configuration.floorMargin)
        }
        contested.removeAll()
        engine = LocatorEngine(map: newMap, configuration: configuration.engine)
        calibration = LocatorCalibration(map: newMap, configuration: configuration.calibration)
        calibration.prepare(&engine)
        warmedUp = false
        firstBatchTime = nil
        startTime = now
        unheardZones.removeAll()
        reportedEvictions = 0  // the new engine counts from 0
        for tag in lastPositions.keys { inherited[tag] = now }
        lastPositions.removeAll()
        // Zone summaries carry names from the old map: publish them afresh as tags are heard again; those not heard
        // in time are said lost (or cleared) like the positions.
        for tag in lastZones.keys { inherited[tag] = now }
        lastZones.removeAll()
        trackedFloors.removeAll()
        let newConfigs = discoveryConfigs(ownedOnly: false)
        let newTopics = Set(newConfigs.map(\.topic))
        configTopics = newTopics
        for topic in oldConfigs.subtracting(newTopics).sorted(by: { $0.name < $1.name }) {
            actions.append(.publish(Publication(topic: topic, payload: "", qos: 1, retain: true)))
        }
        actions += clearedOccupancy
        actions += discoveryActions()
        if ownsSite { actions.append(.publish(calibration.publication(engine: engine, topics: topics, now: now))) }
        return actions
    }

    // MARK: - Input

    /// Takes one received message.
    public mutating func receive(topic: String, payload: [UInt8], now: Double) -> [LocatorAction] {
        switch topics.parse(topic) {
        case .readings(let agent):
            if let index = map.agentIndex(of: agent.rawValue), !hears(agentIndex: index) {
                // Another share's agent (a wildcard or shared subscription delivered it): not ours to fuse.
                counters.otherFloors += 1
                return []
            }
            return receiveBatch(payload, agent: agent, now: now)
        case .agentStatus(let agent):
            guard let index = map.agentIndex(of: agent.rawValue), hears(agentIndex: index),
                let availability = Availability(payload: payload)
            else { return [] }
            engine.setAgentStatus(index, online: availability == .online)
            if availability == .online { engine.agentHeard(index, at: now) }
            return []
        case .locatorLease, .locatorStatus:
            return []  // the service's, when it is one of a pair (LeaseKeeper)
        case .homeAssistantStatus:
            // Home Assistant's birth message: it has (re)started and needs the discovery configs again.
            guard Availability(payload: payload) == .online else { return [] }
            return discoveryActions()
        case .position(let tag):
            // A retained position left by an earlier run (ours are not sent back to us): cleared by the stale
            // sweep unless the tag is heard again in time.
            if let share {
                let floor =
                    payload.isEmpty ? nil : (try? TagPosition(payload: String(decoding: payload, as: UTF8.self)))?.floor
                if let floor, share.hears(floor: floor) {
                    // Where the locator that placed it had it: a tag this one has not placed yet starts there, so
                    // that a restarted locator does not decide its floor apart from its neighbour's.
                    engine.expectFloor(floor, of: tag, at: now)
                } else if let floor, trackedFloors[tag].map({ owns(floor: $0) }) == true {
                    // On a floor this one does not hear (a lift ride past the margin): it left ours now. Its exit
                    // goes out with the next update; nothing of it is cleared or said again, as the other speaks.
                    engine.handOver(tag, at: now)
                    trackedFloors[tag] = floor
                    lastPositions[tag] = nil
                    lastZones[tag] = nil
                    return []
                }
                guard adoptRetained(tag, floor: floor, published: lastPositions[tag] != nil) else { return [] }
            }
            if !payload.isEmpty, lastPositions[tag] == nil, inherited.count < Self.inheritedLimit {
                inherited[tag] = inherited[tag] ?? now
            }
            return []
        case .occupancy(let floor, let zone):
            // A zone an earlier run (or an earlier map) published and this map does not have: clear it, so that no
            // dashboard keeps showing a room that is gone.
            guard !payload.isEmpty, !map.zones.contains(where: { $0.key == ZoneKey(floor: floor, minor: zone) })
            else { return [] }
            // Split: a zone on another share's floor is that locator's to clear (it may run a newer map, in the middle
            // of a rolling update); one on a floor the map does not have, the site owner's.
            guard map.floor(major: floor) != nil ? owns(floor: floor) : ownsSite else { return [] }
            return [
                .publish(
                    Publication(
                        topic: topics.occupancy(floor: floor, zone: zone), payload: "", qos: 1, retain: true,
                        priority: .urgent))
            ]
        case .tagZone(let tag):
            // Likewise a zone summary: said lost (or cleared, for a tag the map does not name) unless heard in time.
            if share != nil {
                let summary = payload.isEmpty ? nil : try? TagZone(payload: String(decoding: payload, as: UTF8.self))
                let publishes = lastZones[tag] != nil && trackedFloors[tag].map { owns(floor: $0) } == true
                guard adoptRetained(tag, floor: summary?.floor, published: publishes) else {
                    // Another locator speaks for the tag now: what we last said of it is no longer ours to repeat.
                    if !publishes, summary?.floor.map({ !owns(floor: $0) }) == true { lastZones[tag] = nil }
                    return []
                }
            }
            if !payload.isEmpty, lastZones[tag] == nil, inherited.count < Self.inheritedLimit {
                inherited[tag] = inherited[tag] ?? now
            }
            return []
        case .discoveryConfig(let topic):
            // One of our retained configs: an earlier run's (ours are not sent back to us). Removed when the map no
            // longer has it, so that Home Assistant drops the entity instead of keeping it with an old state.
            guard configuration.homeAssistantDiscovery, !payload.isEmpty, !configTopics.contains(topic) else {
                return []
            }
            return [.publish(Publication(topic: topic, payload: "", qos: 1, retain: true))]
        case nil:
            // A readings topic whose agent level is not a valid id: refused like a bad `agent` member, and counted.
            let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
            if topic.hasPrefix(topics.prefix + "/agents/"), levels.last == "readings" {
                var actions: [LocatorAction] = []
                reject(.badAgent, agent: nil, now: now, actions: &actions)
                return actions
            }
            return []
        }
    }

    /// What a split locator makes of a retained position or zone summary another locator (or an earlier run)
    /// published for a tag; true when it is ours to clean up like an earlier run's leftover.
    ///
    /// - A tag this locator publishes now: another locator, still deciding the tag on its own floor, wrote over us;
    ///   we say ours again at the next tick (at most once a tick, and only while we own the tag, so the exchange
    ///   ends as soon as both decide the same floor).
    /// - A tag on a floor of another share: that locator speaks for it; forget any leftover we meant to clear.
    /// - A tag on one of our floors: an earlier run's, ours to clear if we do not hear the tag again.
    /// - No floor (a lost tag), or a floor the map does not have: the site's owner cleans it up.
    private mutating func adoptRetained(_ tag: TagIdentity, floor: UInt16?, published: Bool) -> Bool {
        if published {
            contested.insert(tag)
            return false
        }
        guard let floor, map.floor(major: floor) != nil else { return ownsSite }
        if owns(floor: floor) { return true }
        inherited[tag] = nil
        return false
    }

    /// Keeps in ``contested`` the tags whose republications this minute are still under
    /// ``contestRepliesPerMinute``, and counts them; says once a minute which tag another locator keeps claiming.
    private mutating func answerContests(now: Double, actions: inout [LocatorAction]) {
        // Nothing at the ticks without a contest; the minutes that ended are dropped when one comes.
        guard !contested.isEmpty else { return }
        contestReplies = contestReplies.filter { now - $0.value.since < 60 }
        var refused: [TagIdentity] = []
        for tag in contested {
            var replies = contestReplies[tag] ?? (now, 0)
            guard replies.count < Self.contestRepliesPerMinute else {
                refused.append(tag)
                continue
            }
            replies.count += 1
            contestReplies[tag] = replies
        }
        contested.subtract(refused)
        guard let first = refused.min(), now - lastContestWarning >= 60 else { return }
        lastContestWarning = now
        let others = refused.count > 1 ? " and \(refused.count - 1) more" : ""
        actions.append(
            .log(
                "another locator keeps publishing tag \(first)\(others) on a floor of its own while this one holds "
                    + "it on one of its floors: their histories differ, or one does not hear the other's floor; "
                    + "each says its own at most \(Self.contestRepliesPerMinute) times a minute"))
    }

    /// A readings batch decoded by ``preparation``, off the service's loop.
    public struct PreparedBatch: Sendable {
        /// The map's generation it was decoded under.
        fileprivate let mapGeneration: Int
        /// The agent its topic names.
        fileprivate let agent: AgentID
        fileprivate let result: BatchDecodeResult
        /// The time it was decoded at, which its time checks used.
        fileprivate let decodedAt: Double
    }

    /// Decodes a readings batch with what stays fixed while this map is in force: the decoder (its limits, its tag
    /// cache, which is safe to share), the map's agents and this locator's share. The service runs it on the task
    /// that receives messages, so that decoding (a third of the locator's CPU when it was on the loop) overlaps the
    /// engine. Nil for any other message, and for a batch of an agent this locator does not hear (counted when
    /// ``receive(topic:payload:now:)`` takes it).
    public var preparation: @Sendable (_ topic: String, _ payload: [UInt8], _ now: Double) -> PreparedBatch? {
        let topics = topics
        let map = map
        let share = share
        let decoder = decoder
        let generation = mapGeneration
        return { topic, payload, now in
            guard case .readings(let agent) = topics.parse(topic) else { return nil }
            if let index = map.agentIndex(of: agent.rawValue), !Self.hears(agentIndex: index, share: share, map: map) {
                return nil
            }
            let result = Self.decode(payload, agent: agent, decoder: decoder, map: map, now: now)
            return PreparedBatch(mapGeneration: generation, agent: agent, result: result, decodedAt: now)
        }
    }

    /// Takes a received batch that ``preparation`` decoded: as ``receive(topic:payload:now:)`` would at `now`. Its
    /// time checks are made again for `now` (``BatchDecoder/retimed(_:decodedAt:now:)``), and it is decoded again
    /// when the map was replaced since, or when only that can tell what its verdict at `now` is.
    public mutating func receive(
        topic: String, payload: [UInt8], prepared: PreparedBatch, now: Double
    ) -> [LocatorAction] {
        guard prepared.mapGeneration == mapGeneration,
            let result = decoder.retimed(prepared.result, decodedAt: prepared.decodedAt, now: now)
        else { return receive(topic: topic, payload: payload, now: now) }
        return receiveBatch(result, agent: prepared.agent, now: now)
    }

    private static func decode(
        _ payload: [UInt8], agent: AgentID, decoder: BatchDecoder, map: FloorMap, now: Double
    ) -> BatchDecodeResult {
        decoder.decode(
            payload, topicAgent: agent, isKnownAgent: { map.agentIndex(of: $0.rawValue) != nil }, now: now)
    }

    private mutating func receiveBatch(_ payload: [UInt8], agent: AgentID, now: Double) -> [LocatorAction] {
        receiveBatch(Self.decode(payload, agent: agent, decoder: decoder, map: map, now: now), agent: agent, now: now)
    }

    private mutating func receiveBatch(_ result: BatchDecodeResult, agent: AgentID, now: Double) -> [LocatorAction] {
        counters.batches += 1
        var actions: [LocatorAction] = []
        guard let batch = result.batch, let agentIndex = map.agentIndex(of: batch.agent.rawValue) else {
            reject(result.rejection ?? .unknownAgent, agent: agent, now: now, actions: &actions)
            return actions
        }
        if let duplicate = deduplicator.admit(batch) {
            reject(duplicate, agent: agent, now: now, actions: &actions)
            return actions
        }
        engine.agentHeard(agentIndex, at: now)
        if firstBatchTime == nil { firstBatchTime = now }
        pendingReceiveTimes.append(now)
        inputLags.append(max(now - batch.sent, 0))
        // The engine takes the batch's readings together (it looks their tags up a few dozen at a time), then each
        // is recorded and counted in its place among the batch's outcomes, as one taken alone would be.
        var readings: [RecordedReading] = []
        readings.reserveCapacity(batch.outcomes.count)
        for case .accepted(let wire) in batch.outcomes { readings.append(RecordedReading(wire, agent: batch.agent)) }
        let engineReadings = readings.map(Self.engineReading)
        let refusals = engine.ingest(engineReadings, agentIndex: agentIndex, now: now)
        var next = 0
        for outcome in batch.outcomes {
            switch outcome {
            case .rejected(let reason):
                reject(reason, agent: agent, now: now, actions: &actions)
            case .accepted:
                settle(
                    readings[next], as: engineReadings[next], refusal: refusals[next], agentIndex: agentIndex,
                    now: now, actions: &actions)
                next += 1
            }
        }
        return actions
    }

    /// Takes one reading of a readings recording, as ``LocatorReplay`` feeds them: through the same ``ingest``
    /// as a reading of a live batch (the recording holds what passed the wire checks and the deduplication).
    ///
    /// - Parameter now: the time the reading is taken at: its own time, or the last tick if that is later.
    public mutating func receive(_ reading: RecordedReading, now: Double) -> [LocatorAction] {
        var actions: [LocatorAction] = []
        guard reading.time.isFinite, now.isFinite else {
            reject(.nonFinite, agent: reading.agent, now: now.isFinite ? now : 0, actions: &actions)
            return actions
        }
        guard let agentIndex = map.agentIndex(of: reading.agent.rawValue) else {
            reject(.unknownAgent, agent: reading.agent, now: now, actions: &actions)
            return actions
        }
        guard hears(agentIndex: agentIndex) else {
            counters.otherFloors += 1
            return actions
        }
        // A recording has no heartbeats; a reading is the sign of life its batch was.
        engine.agentHeard(agentIndex, at: now)
        if firstBatchTime == nil { firstBatchTime = now }
        ingest(reading, agentIndex: agentIndex, now: now, actions: &actions)
        return actions
    }

    /// A replayed reading reaches the engine here, a live batch's readings together (``receiveBatch(_:agent:now:)``);
    /// both are then settled the same way.
    private mutating func ingest(
        _ reading: RecordedReading, agentIndex: Int, now: Double, actions: inout [LocatorAction]
    ) {
        let engineReading = Self.engineReading(reading)
        settle(
            reading, as: engineReading, refusal: engine.ingest(engineReading, agentIndex: agentIndex, now: now),
            agentIndex: agentIndex, now: now, actions: &actions)
    }

    private static func engineReading(_ reading: RecordedReading) -> Reading {
        Reading(
            tag: reading.tag,
            time: reading.time,
            rssi: reading.rssi,
            count: reading.count,
            variance: reading.variance,
            measuredPower: reading.power.map(Double.init)
        )
    }

    /// What follows a reading's ingestion, live or replayed: recorded when recording, handed to the calibration
    /// when it is another agent's beacon, and counted as taken or refused.
    private mutating func settle(
        _ reading: RecordedReading, as engineReading: Reading, refusal: ReadingRejection?, agentIndex: Int,
        now: Double, actions: inout [LocatorAction]
    ) {
        // The recording keeps every reading that passed the wire checks, so that a replay sees what the live
        // engine saw, stale or untracked ones included.
        if configuration.recordsReadings { actions.append(.record(JSONLines.line(reading))) }
        if let refusal {
            if refusal == .agentBeacon {
                counters.agentBeacons += 1
                calibration.take(engineReading, receiver: agentIndex, engine: engine)
            } else {
                reject(Self.reason(for: refusal), agent: reading.agent, now: now, actions: &actions)
            }
            return
        }
        counters.accepted += 1
    }

    static func reason(for refusal: ReadingRejection) -> RejectionReason {
        switch refusal {
        case .unknownAgent: .unknownAgent
        case .untrackedTag: .untrackedTag
        case .stale: .tooOldToTrack
        case .invalidValue: .nonFinite
        case .agentBeacon: .untrackedTag
        }
    }

    private mutating func reject(
        _ reason: RejectionReason, agent: AgentID?, now: Double, actions: inout [LocatorAction]
    ) {
        counters.rejected[reason, default: 0] += 1
        if let last = lastLogged[reason], now - last < 60 {
            suppressed[reason, default: 0] += 1
            return
        }
        let more = suppressed.removeValue(forKey: reason).map { " (\($0) more since the last report)" } ?? ""
        lastLogged[reason] = now
        let from = agent.map { "agent \($0)" } ?? "a topic with an invalid agent id"
        actions.append(.log("dropped a reading from \(from): \(reason)\(more)"))
    }

    // MARK: - Output

    /// Runs the engine over what arrived since the last tick and publishes the consequences.
    public mutating func tick(now: Double) -> [LocatorAction] {
        let update = engine.update(now: now)
        var actions = calibration.tick(now: now, engine: &engine, topics: topics)
        if !ownsSite { actions.removeAll { $0.topicName == topics.calibration.name } }
        for event in update.events where owns(floor: event.zone.floor) {
            actions.append(.publish(eventPublication(event)))
        }
        // Events and occupancy first: they are what dashboards wait for; positions follow.
        if startTime == nil { startTime = now }
        if !warmedUp, let firstBatchTime, now - firstBatchTime >= configuration.warmUp {
            warmedUp = true
            actions += ownedOccupancy.map { .publish(occupancyPublication($0, now: now)) }
        } else if warmedUp {
            // A loop: closures calling this mutating method's `self` copy the pipeline for each call.
            for change in update.occupancyChanges where owns(floor: change.zone.floor) {
                actions.append(.publish(occupancyPublication(change, now: now)))
            }
        } else if firstBatchTime == nil, let startTime,
            now - startTime >= max(configuration.warmUp, map.model.agentTimeout)
        {
            // Not one batch since the start. A zone whose agents have all been silent for their timeout (a status
            // message counts as a sign of life) cannot be known: a running locator would have said so by now, and
            // the counts of the previous run must not stand. A zone is said unknown once; nothing else is said
            // before the warm-up that follows the first batch.
            let newlyUnknown = unheardOccupancy.filter { !unheardZones.contains($0.zone) }
            unheardZones.formUnion(newlyUnknown.map(\.zone))
            actions += newlyUnknown.map { .publish(occupancyPublication($0, now: now)) }
        }
        for index in update.estimates.indices {
            let tag = update.estimates[index].tag
            guard owns(floor: update.estimates[index].floor) else {
                // On another share's floor: that locator publishes it now. Nothing is cleared (it would race the
                // new owner's publication); our record goes, so that we publish afresh if the tag comes back.
                lastPositions[tag] = nil
                continue
            }
            // Decided on the estimate's fields before the estimate is passed on whole (a copy, its arrays retained):
            // most estimates, of tags standing still, publish nothing.
            let slot = lastPositions.index(forKey: tag)
            if positionIsDue(
                after: slot, position: update.estimates[index].position, zone: update.estimates[index].zone,
                floor: update.estimates[index].floor, now: now)
            {
                actions.append(.publish(positionPublication(update.estimates[index], replacing: slot, now: now)))
            }
            logIfUnmapped(tag, actions: &actions)
        }
        answerContests(now: now, actions: &actions)
        for tag in contested.sorted() {
            // Written over by another locator while we own the tag: say ours again.
            guard let published = lastPositions[tag] else { continue }
            actions.append(
                .publish(
                    Publication(
                        topic: published.topic, payload: published.payload.payload, qos: 1, retain: true,
                        priority: .background)
                ))
        }
        for tag in update.lostTags where lastPositions.removeValue(forKey: tag) != nil {
            // A tag that left: clear its retained position so that no dashboard shows a ghost.
            actions.append(
                .publish(
                    Publication(
                        topic: topics.position(tag: tag), payload: "", qos: 1, retain: true, priority: .background)))
        }
        actions += zoneSummaryActions(update, now: now)
        for tag in contested.sorted() {
            guard let summary = lastZones[tag], trackedFloors[tag].map({ owns(floor: $0) }) == true else { continue }
            actions += zonePublications(summary)
        }
        contested.removeAll()
        actions += clearStalePositions(now: now)
        for received in pendingReceiveTimes { latencies.append(max(now - received, 0)) }
        pendingReceiveTimes.removeAll(keepingCapacity: true)
        if now - lastMetrics >= configuration.metricsInterval {
            lastMetrics = now
            countersAtLastMetrics = counters
            let metrics = metrics(now: now)
            actions += behindWarning(metrics, now: now)
            actions.append(.publish(metricsPublication(metrics)))
        }
        if now - lastGapReport >= 60 {
            // At most once a minute, and at once for the first gap after a quiet minute.
            let reports = gapReports()
            if !reports.isEmpty { lastGapReport = now }
            actions += reports
        }
        if now - lastEvictionReport >= 60, engine.evictedTagCount > reportedEvictions {
            lastEvictionReport = now
            let new = engine.evictedTagCount - reportedEvictions
            reportedEvictions = engine.evictedTagCount
            actions.append(
                .log(
                    "tracked tags at the limit of \(configuration.engine.maximumTags): evicted \(new) unnamed tags "
                        + "(longest silent first) since the last report, \(engine.evictedTagCount) in all"))
        }
        return actions
    }

    /// Clears the retained positions no tracked tag stands behind any more: those an earlier run left (or this run
    /// published under the map before a reload) whose tag has not been heard again within the tag timeout. Their
    /// zone summaries say `lost` (or `unknown`, when no agent is online) for a tag the map names, and are cleared for
    /// any other.
    private mutating func clearStalePositions(now: Double) -> [LocatorAction] {
        let timeout = map.model.tagTimeout
        var actions: [LocatorAction] = []
        for (tag, since) in inherited where now - since >= timeout {
            inherited[tag] = nil
            // Heard by us on another share's floor: its locator speaks for the tag.
            if let floor = trackedFloors[tag], !owns(floor: floor) { continue }
            if lastPositions[tag] == nil {
                actions.append(
                    .publish(
                        Publication(
                            topic: topics.position(tag: tag), payload: "", qos: 1, retain: true, priority: .background))
                )
            }
            guard lastZones[tag] == nil else { continue }
            if map.knownTag(tag) != nil {
                let anyOnline = !floorOnlineSince.isEmpty
                actions += publishZone(lostSummary(tag, floor: nil, unknown: !anyOnline))
            } else {
                actions += clearZone(tag)
            }
        }
        return actions.sorted { $0.topicName < $1.topicName }
    }

    // MARK: - Zone summaries

    /// Publishes the zone summaries that changed: those of the tags just estimated or lost, and, once a second, any
    /// whose state the agents' liveness changed (a zone whose agents went offline makes its tags `unknown`).
    private mutating func zoneSummaryActions(_ update: EngineUpdate, now: Double) -> [LocatorAction] {
        refreshOnlineFloors(now: now)
        guard warmedUp else {
            // Held back like occupancy: a tag is placed in its zone only after a few readings, and a restart must
            // not make every tag pass through "in no zone". The first sweep after the warm-up publishes them.
            for index in update.estimates.indices {
                trackedFloors[update.estimates[index].tag] = update.estimates[index].floor
            }
            for tag in update.lostTags { trackedFloors[tag] = nil }
            return []
        }
        var actions: [LocatorAction] = []
        // By index: only the tag and its floor are read (taking each estimate out copied it, buffers and all).
        for index in update.estimates.indices {
            let (tag, floor) = (update.estimates[index].tag, update.estimates[index].floor)
            trackedFloors[tag] = floor
            guard owns(floor: floor) else {
                // Handed over: the owner of its floor publishes its summary from now on.
                lastZones[tag] = nil
                continue
            }
            actions += publishTracked(tag, floor: floor)
        }
        for tag in update.lostTags {
            let floor = trackedFloors.removeValue(forKey: tag) ?? lastZones[tag]?.floor
            // Lost on another share's floor: its locator says so. (The whole site's locator owns every floor.)
            if share != nil, floor.map({ !owns(floor: $0) }) ?? (lastZones[tag] == nil) { continue }
            let summary = lostSummary(tag, floor: floor, unknown: floor.map { floorOnlineSince[$0] == nil } ?? true)
            if summary.state == .lost, map.knownTag(tag) == nil {
                actions += clearZone(tag)
            } else {
                actions += publishZone(summary)
            }
        }
        guard now - lastZoneSweep >= LocatorEngine.sweepInterval else { return actions }
        lastZoneSweep = now
        // Only the summaries that change are sorted: on a campus a handful a second, where sorting every tracked tag
        // took milliseconds. A loop, not `filter`: a closure calling this mutating method's `self` copied the whole
        // pipeline for each tag (3 % of the live locator's CPU at 10,000 tags).
        var changed: [(tag: TagIdentity, floor: UInt16)] = []
        for (tag, floor) in trackedFloors where owns(floor: floor) {
            if isNew(trackedPlacement(tag, floor: floor), for: tag) { changed.append((tag, floor)) }
        }
        for (tag, floor) in changed.sorted(by: { $0.tag < $1.tag }) {
            actions += publishTracked(tag, floor: floor)
        }
        // Filtered before sorted: on a campus nearly every summary is of a tracked tag.
        let untracked = lastZones.filter { $0.value.state == .unknown && trackedFloors[$0.key] == nil }
        for (tag, summary) in untracked.sorted(by: { $0.key < $1.key }) {
            // Lost while its agents were down: once they have been back for a tag timeout without hearing it, it
            // has left.
            guard let floor = summary.floor, let since = floorOnlineSince[floor], now - since >= map.model.tagTimeout
            else { continue }
            if map.knownTag(tag) == nil {
                actions += clearZone(tag)
            } else {
                actions += publishZone(lostSummary(tag, floor: floor, unknown: false))
            }
        }
        return actions
    }

    /// Notes which floors have an agent online now, and since when.
    private mutating func refreshOnlineFloors(now: Double) {
        var online: Set<UInt16> = []
        for (index, agent) in map.agents.enumerated() where engine.isAgentOnline(index, now: now) {
            online.insert(agent.floor)
        }
        for floor in floorOnlineSince.keys where !online.contains(floor) { floorOnlineSince[floor] = nil }
        for floor in online where floorOnlineSince[floor] == nil { floorOnlineSince[floor] = now }
    }

    /// Publishes a tracked tag's summary if it changed.
    ///
    /// Every estimate and every sweep asks, ten thousand times a second on a campus, and nearly always nothing
    /// changed: so the state, floor and zone are compared first, before the names are looked up and the summary is
    /// made. Under one map the names follow from those three (``trackedSummary(_:placement:)`` and
    /// ``lostSummary(_:floor:unknown:)`` both look them up from the tag, the floor and the zone, and a new map
    /// empties `lastZones`), so equal placements are equal summaries.
    private mutating func publishTracked(_ tag: TagIdentity, floor: UInt16) -> [LocatorAction] {
        let placement = trackedPlacement(tag, floor: floor)
        guard isNew(placement, for: tag) else { return [] }
        return publishZone(trackedSummary(tag, placement: placement))
    }

    /// Whether a placement differs from the tag's summary last published.
    private func isNew(_ placement: Placement, for tag: TagIdentity) -> Bool {
        guard let last = lastZones[tag] else { return true }
        return last.state != placement.state || last.floor != placement.floor || last.zone != placement.zone?.minor
    }

    /// What a tracked tag's summary says, but for the names.
    private typealias Placement = (state: TagZone.State, floor: UInt16, zone: ZoneKey?)

    private func trackedPlacement(_ tag: TagIdentity, floor: UInt16) -> Placement {
        let zone = engine.zone(of: tag)
        let unknown = zone.map { engine.state(of: $0) != .known } ?? (floorOnlineSince[floor] == nil)
        return (unknown ? .unknown : .known, zone?.floor ?? floor, zone)
    }

    /// The summary of a tracked tag: its zone, `unknown` while the zone's (or, in no zone, the floor's) agents are
    /// offline.
    private func trackedSummary(_ tag: TagIdentity, placement: Placement) -> TagZone {
        TagZone(
            tag: tag, name: map.knownTag(tag)?.name, state: placement.state, floor: placement.floor,
            floorName: map.floor(major: placement.floor)?.name, zone: placement.zone?.minor,
            zoneName: placement.zone.flatMap { zoneNames[$0] })
    }

    /// The summary of a tag no longer heard: `lost`, or `unknown` (keeping its floor) when no agent could hear it.
    private func lostSummary(_ tag: TagIdentity, floor: UInt16?, unknown: Bool) -> TagZone {
        TagZone(
            tag: tag, name: map.knownTag(tag)?.name, state: unknown ? .unknown : .lost, floor: unknown ? floor : nil,
            floorName: unknown ? floor.flatMap { map.floor(major: $0)?.name } : nil, zone: nil, zoneName: nil)
    }

    /// Publishes a summary (and its plain-text location) unless it is the one last published.
    private mutating func publishZone(_ summary: TagZone) -> [LocatorAction] {
        guard lastZones[summary.tag] != summary else { return [] }
        lastZones[summary.tag] = summary
        return zonePublications(summary)
    }

    private func zonePublications(_ summary: TagZone) -> [LocatorAction] {
        [
            .publish(
                Publication(
                    topic: topics.tagZone(tag: summary.tag), payload: summary.payload, qos: 1, retain: true,
                    priority: .background)),
            .publish(
                Publication(
                    topic: topics.tagLocation(tag: summary.tag), payload: summary.location, qos: 1, retain: true,
                    priority: .background)
            ),
        ]
    }

    /// Clears a tag's retained summary and location (a tag the map does not name, gone).
    private mutating func clearZone(_ tag: TagIdentity) -> [LocatorAction] {
        lastZones[tag] = nil
        return [
            .publish(
                Publication(topic: topics.tagZone(tag: tag), payload: "", qos: 1, retain: true, priority: .background)),
            .publish(
                Publication(
                    topic: topics.tagLocation(tag: tag), payload: "", qos: 1, retain: true, priority: .background)),
        ]
    }

    /// Says once (for the first few such tags) that a tracked tag is not in the map, so Home Assistant does not
    /// show it, and how to add it.
    private mutating func logIfUnmapped(_ tag: TagIdentity, actions: inout [LocatorAction]) {
        guard configuration.homeAssistantDiscovery, map.knownTag(tag) == nil,
            unmappedLogged.count < Self.unmappedLogLimit, unmappedLogged.insert(tag).inserted
        else { return }
        actions.append(
            .log(
                "tag \(tag) is tracked but not in the map's \"tags\", so Home Assistant does not show it: add "
                    + "{\"id\": \"\(tag)\", \"name\": \"…\"} to the map and reload the locator (SIGHUP)"))
    }

    /// One log line per agent whose batches went missing since the last report (at most once a minute).
    private mutating func gapReports() -> [LocatorAction] {
        var lines: [LocatorAction] = []
        for (agent, missing) in deduplicator.missing.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let new = missing - reportedMissing[agent, default: 0]
            guard new > 0 else { continue }
            reportedMissing[agent] = missing
            lines.append(
                .log(
                    "agent \(agent): \(new) batches missing (gaps in its seqs) since the last report, \(missing) in all"
                ))
        }
        return lines
    }

    /// Whether the metrics are due and the counters have moved since the last ones: a tick should then run, or the
    /// last readings of a burst that ended just after a metrics message would wait for the idle second's update to be
    /// told. (They did: the stream bench, which waits for the metrics to count every reading, measured most rounds
    /// at about 0.9 M readings/s instead of 1.3-1.5 M, a second late in the metrics alone.)
    public func hasUntoldCounts(now: Double) -> Bool {
        now - lastMetrics >= configuration.metricsInterval && counters != countersAtLastMetrics
    }

    /// The metrics as of now (also published every ``Configuration/metricsInterval`` seconds).
    public func metrics(now: Double) -> LocatorMetrics {
        let sorted = latencies.sorted()
        let lags = inputLags.sorted()
        return LocatorMetrics(
            time: now,
            readingsAccepted: counters.accepted,
            readingsRejected: counters.rejected,
            tagsTracked: engine.trackedTagCount,
            agentsOnline: map.agents.indices.filter { engine.isAgentOnline($0, now: now) }.count,
            batchesMissing: deduplicator.missing.values.reduce(0, +),
            latencyP50: Self.percentile(0.5, of: sorted).map { $0 * 1000 },
            latencyP99: Self.percentile(0.99, of: sorted).map { $0 * 1000 },
            inputLagP50: Self.percentile(0.5, of: lags).map { $0 * 1000 },
            inputLagP99: Self.percentile(0.99, of: lags).map { $0 * 1000 }
        )
    }

    /// The `p` quantile of sorted values (the value at rank ⌊count · p⌋), nil for none.
    private static func percentile(_ p: Double, of sorted: [Double]) -> Double? {
        sorted.isEmpty ? nil : sorted[min(Int(Double(sorted.count) * p), sorted.count - 1)]
    }

    /// Says, at most once a minute, that the batches the metrics cover (those since the last metrics) reached the
    /// engine a median of ``behindLag`` seconds or more after their agents sent them. The rejections that follow
    /// (`too_old_to_track`, logged under the agent whose reading it was) would otherwise be the only sign, and they
    /// point at an agent.
    private mutating func behindWarning(_ metrics: LocatorMetrics, now: Double) -> [LocatorAction] {
        guard let median = metrics.inputLagP50.map({ $0 / 1000 }), median >= Self.behindLag,
            now - lastBehindWarning >= 60
        else { return [] }
        lastBehindWarning = now
        let worst = metrics.inputLagP99.map { $0 / 1000 } ?? median
        return [
            .log(
                "behind its input: the last \(inputLags.count) batches reached the engine \(Self.seconds(median)) s "
                    + "after their agents sent them (p99 \(Self.seconds(worst)) s). The locator takes fewer readings a "
                    + "second than arrive, or the broker held them back; readings older than the map's "
                    + "model.reading_max_age (10 s by default) are dropped (docs/scale.md says what one locator carries)"
            )
        ]
    }

    /// Seconds with one decimal, for a log line.
    private static func seconds(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// Read-only access to the engine, for queries and tests.
    public var engineState: LocatorEngine { engine }

    /// The metrics' publication; the latencies and lags they cover start again.
    private mutating func metricsPublication(_ metrics: LocatorMetrics) -> Publication {
        let payload = metrics.payload
        latencies.removeAll(keepingCapacity: true)
        inputLags.removeAll(keepingCapacity: true)
        return Publication(topic: metricsTopic, payload: payload, qos: 0, retain: false)
    }

    private func discoveryActions() -> [LocatorAction] {
        discoveryConfigs(ownedOnly: true).map {
            .publish(Publication(topic: $0.topic, payload: $0.payload, qos: 1, retain: true))
        }
    }

    /// The zones' occupancy this locator publishes, in map order.
    private var ownedOccupancy: [Occupancy] {
        share == nil ? engine.allOccupancy : engine.allOccupancy.filter { owns(floor: $0.zone.floor) }
    }

    /// The zones this locator publishes whose state is unknown (no online agent covers them).
    private var unheardOccupancy: [Occupancy] {
        ownedOccupancy.filter { $0.state == .unknown }
    }

    /// The Home Assistant discovery configs of the site, the map's zones and known tags (none when discovery is
    /// off): those this locator publishes, or with `ownedOnly` false those of every share of the site (to tell a
    /// leftover from another share's config). A zone's entities are available while its locator is online.
    private func discoveryConfigs(ownedOnly: Bool) -> [DiscoveryConfig] {
        guard configuration.homeAssistantDiscovery else { return [] }
        let siteName = map.site.name
        let site = !ownedOnly || ownsSite
        var configs: [DiscoveryConfig] = site ? [.locator(topics: topics, siteName: siteName)] : []
        for zone in map.zones where !ownedOnly || owns(floor: zone.floor) {
            let floorName = map.floor(major: zone.floor)?.name
            configs.append(
                .zoneCount(
                    topics: topics, floor: zone.floor, zone: zone.minor, zoneName: zone.name, floorName: floorName,
                    siteName: siteName, availability: statusTopic))
            configs.append(
                .zoneOccupied(
                    topics: topics, floor: zone.floor, zone: zone.minor, zoneName: zone.name, floorName: floorName,
                    siteName: siteName, availability: statusTopic))
        }
        for tag in map.knownTags where site {
            configs.append(.tagZone(topics: topics, tag: tag.identity, tagName: tag.name))
            configs.append(.tagTracker(topics: topics, tag: tag.identity, tagName: tag.name))
        }
        return configs
    }

    private func occupancyPublication(_ occupancy: Occupancy, now: Double) -> Publication {
        let zone = map.zones.first { $0.key == occupancy.zone }
        let members = zip(occupancy.tags, occupancy.probabilities).map { tag, probability in
            ZoneOccupancy.Member(id: tag, name: map.knownTag(tag)?.name, probability: probability)
        }
        let payload = ZoneOccupancy(
            site: map.site.uuid,
            floor: occupancy.zone.floor,
            zone: occupancy.zone.minor,
            name: zone?.name ?? "",
            state: occupancy.state == .known ? .known : .unknown,
            count: occupancy.count,
            tags: members,
            updated: now
        )
        return Publication(
            topic: topics.occupancy(floor: occupancy.zone.floor, zone: occupancy.zone.minor),
            payload: payload.payload,
            qos: 1,
            retain: true,
            priority: .urgent
        )
    }

    private func eventPublication(_ event: ZoneTransition) -> Publication {
        let zoneName = zoneNames[event.zone]
        let payload = ZoneEvent(
            time: event.time,
            tag: event.tag,
            name: map.knownTag(event.tag)?.name,
            floor: event.zone.floor,
            zone: event.zone.minor,
            zoneName: zoneName,
            kind: event.kind == .enter ? .enter : .exit
        )
        return Publication(topic: topics.events, payload: payload.payload, qos: 1, retain: false)
    }

    /// Whether an estimate says enough that is new to be published: a tag never published (`slot` nil), or one
    /// whose last position (at `slot` in ``lastPositions``) is in another zone or on another floor, far enough away,
    /// or older than the heartbeat.
    ///
    /// The last position is read where it lies: a copy of it (`lastPositions[tag]`) retained and released each of
    /// its strings and arrays, for every estimate.
    private func positionIsDue(
        after slot: [TagIdentity: PublishedPosition].Index?, position: Point, zone: ZoneKey?, floor: UInt16,
        now: Double
    ) -> Bool {
        guard let slot else { return true }
        let last = Point(x: lastPositions.values[slot].payload.x, y: lastPositions.values[slot].payload.y)
        return lastPositions.values[slot].payload.zone != zone?.minor
            || lastPositions.values[slot].payload.floor != floor
            || last.distance(to: position) >= configuration.positionMinimumMove
            || now - lastPositions.values[slot].time >= configuration.positionHeartbeat
    }

    /// The publication of an estimate's position, which is recorded in ``lastPositions`` at `slot` (found before,
    /// nothing added or removed since), or as a new entry when `slot` is nil.
    private mutating func positionPublication(
        _ estimate: TagEstimate, replacing slot: [TagIdentity: PublishedPosition].Index?, now: Double
    ) -> Publication {
        let nearest = estimate.ranges.first.flatMap { range -> TagPosition.NearestAgent? in
            guard agentIDs.indices.contains(range.agentIndex), let agent = agentIDs[range.agentIndex],
                let proximity = TagPosition.NearestAgent.Proximity(rawValue: range.proximity.rawValue)
            else { return nil }
            return TagPosition.NearestAgent(agent: agent, proximity: proximity, distance: range.distance)
        }
        let payload = TagPosition(
            tag: estimate.tag,
            name: estimate.name,
            x: estimate.position.x,
            y: estimate.position.y,
            floor: estimate.floor,
            zone: estimate.zone?.minor,
            zoneName: estimate.zone.flatMap { zoneNames[$0] },
            accuracy: estimate.accuracy,
            nearest: nearest,
            // When the tag was there: now, or with a fixed lag that much earlier.
            updated: estimate.time,
            probability: estimate.zoneProbability,
            zones: estimate.zoneProbabilities.map { ZoneShare(zone: $0.zone.minor, probability: $0.probability) }
        )
        let topic: Topic
        if let slot {
            // Changed in place: reading the entry (`values[slot]`) copied it whole, its strings and arrays retained.
            topic = Self.record(payload, time: now, in: &lastPositions.values[slot])
        } else {
            topic = topics.position(tag: estimate.tag)
            lastPositions[estimate.tag] = PublishedPosition(payload: payload, time: now, topic: topic)
        }
        return Publication(topic: topic, payload: payload.payload, qos: 0, retain: true, priority: .background)
    }

    /// Makes `published` the record of `payload`, published at `time`; returns its topic.
    private static func record(_ payload: TagPosition, time: Double, in published: inout PublishedPosition) -> Topic {
        published.payload = payload
        published.time = time
        return published.topic
    }

    private static func zoneNames(of map: FloorMap) -> [ZoneKey: String] {
        Dictionary(map.zones.map { ($0.key, $0.name) }, uniquingKeysWith: { first, _ in first })
    }
}
