public import WhereaboutsCore
public import WhereaboutsSession
public import WhereaboutsWire

/// The locator's logic between the broker and the engine, as a state machine that returns the service's actions.
///
/// The shell (the `whereabouts-locator` executable) owns the MQTT client and the clock. It feeds every received
/// message to ``receive(topic:payload:now:)``, calls ``tick(now:)`` after each burst of messages and at least once
/// a second, and performs the actions that come back. No I/O happens here, so tests drive it directly.
///
/// It owns the engine and runs it between its parts, each a state machine of one concern:
/// - ``ReadingIntake``: every reading decoded and checked by ``BatchDecoder``, duplicates by (agent, epoch, seq)
///   dropped, the rest ingested;
/// - ``LocatorMonitor``: the counters and metrics; every rejection counted by reason and logged at most once a minute
///   per reason; gaps, evictions and a locator behind its input reported;
/// - ``OccupancyPublisher``: zones' occupancy and events, held back during a warm-up so that a restart never
///   publishes a false empty;
/// - ``TagPublisher``: each tag's position and zone summary, published when they are news, and what an earlier run
///   left cleared;
/// - ``FloorArbiter``: which floors and tags this locator speaks for on a site split by floor;
/// - ``HomeAssistantDiscovery``: the discovery configs, and the removal of those the map no longer has;
/// - ``TagBatteryPublisher``: the battery voltage named tags report, when it changes, and the battery level GATT
///   jobs read;
/// - ``AgentActivityPublisher``: each agent's last batch and readings a second, once a minute.
///
/// After every (re)connection, all retained state is published again.
public struct LocatorPipeline: Sendable {
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

    /// How many times a minute a locator says its own again of a tag another keeps writing over.
    public static let contestRepliesPerMinute = FloorArbiter.repliesPerMinute

    /// The map (replaced on SIGHUP by ``replaceMap(_:now:)``).
    public private(set) var map: FloorMap
    /// The topics of the map's site.
    public let topics: Topics
    /// The settings.
    public let configuration: Configuration

    private var engine: LocatorEngine
    private var calibration: LocatorCalibration
    private var intake: ReadingIntake
    private var monitor: LocatorMonitor
    private var occupancy: OccupancyPublisher
    private var tags: TagPublisher
    private var arbiter: FloorArbiter
    private var discovery: HomeAssistantDiscovery
    private var batteries: TagBatteryPublisher
    private var agentActivity: AgentActivityPublisher

    /// Makes a pipeline for a validated map.
    public init(map: FloorMap, configuration: Configuration = Configuration()) {
        self.map = map
        self.configuration = configuration
        let topics = Topics(site: map.site.uuid)
        self.topics = topics
        engine = LocatorEngine(map: map, configuration: configuration.engine)
        calibration = LocatorCalibration(map: map, configuration: configuration.calibration)
        calibration.prepare(&engine)
        intake = ReadingIntake(
            limits: configuration.limits, tolerance: configuration.tolerance,
            recordsReadings: configuration.recordsReadings)
        monitor = LocatorMonitor(
            metricsInterval: configuration.metricsInterval, maximumTags: configuration.engine.maximumTags)
        let share = configuration.floors.map { FloorShare(lenient: map, floors: $0, margin: configuration.floorMargin) }
        arbiter = FloorArbiter(share: share)
        occupancy = OccupancyPublisher(map: map, share: share, topics: topics, warmUp: configuration.warmUp)
        tags = TagPublisher(
            map: map, share: share, topics: topics, positionHeartbeat: configuration.positionHeartbeat,
            positionMinimumMove: configuration.positionMinimumMove)
        discovery = HomeAssistantDiscovery(
            map: map, share: share, topics: topics, isEnabled: configuration.homeAssistantDiscovery)
        batteries = TagBatteryPublisher(map: map, topics: topics)
        agentActivity = AgentActivityPublisher(map: map, share: share, topics: topics)
    }

    // MARK: - Queries

    /// Counts since start.
    public var counters: Counters { monitor.counters }

    /// The floors this locator owns and hears, when the site is split between locators; nil for the whole site.
    public var share: FloorShare? { arbiter.share }

    /// Whether this locator publishes the outputs of a floor: its zones' occupancy and events, and the tags on it.
    public func owns(floor major: UInt16) -> Bool { arbiter.owns(floor: major) }

    /// Whether this locator publishes the site-wide outputs (calibration, the site's and the tags' discovery
    /// configs, the classic status and metrics topics).
    public var ownsSite: Bool { arbiter.ownsSite }

    /// Whether this locator publishes a tag now: the engine tracks it on one of its floors.
    public func publishes(_ tag: TagIdentity) -> Bool { tags.floor(of: tag).map { owns(floor: $0) } ?? false }

    /// Whether this locator listens to an agent (its share hears the agent's floor).
    func hears(agentIndex: Int) -> Bool { arbiter.hears(floor: map.agents[agentIndex].floor) }

    /// The locator's `online`/`offline` topic: `…/locator/status`, or its share's own for a share that does not own
    /// the site, so that one locator's last will never says another is offline.
    public var statusTopic: Topic { share.statusTopic(topics) }

    /// Where the metrics go: `…/locator/metrics`, or the share's own, like ``statusTopic``.
    public var metricsTopic: Topic { share.metricsTopic(topics) }

    /// The subscriptions the shell makes (and remakes after every reconnect): the readings, statuses and GATT job
    /// results (the battery levels jobs read) of the agents it hears (one topic per agent for a share of the floors). The tags' positions and zone summaries, and our
    /// discovery configs, are read back (without our own publications) to learn what an earlier run left retained.
    public var subscriptions: [Subscription] {
        var list = arbiter.agentSubscriptions(map: map, topics: topics)
        list += [
            Subscription(filter: topics.allPositions, qos: .atMostOnce, noLocal: true),
            Subscription(filter: topics.allTagZones, qos: .atMostOnce, noLocal: true),
            Subscription(filter: topics.allOccupancy, qos: .atMostOnce, noLocal: true),
        ]
        if configuration.homeAssistantDiscovery {
            list.append(Subscription(filter: Topics.homeAssistantStatusFilter, qos: .atLeastOnce))
            list.append(Subscription(filter: topics.allDiscoveryConfigs, qos: .atMostOnce, noLocal: true))
        }
        return list
    }

    /// Read-only access to the engine, for queries and tests.
    public var engineState: LocatorEngine { engine }

    /// A tag's grid posterior as the engine holds it now (``LocatorEngine/posterior(of:)``).
    public func posterior(of tag: TagIdentity) -> TagPosterior? { engine.posterior(of: tag) }

    /// The metrics as of now (also published every ``Configuration/metricsInterval`` seconds).
    public func metrics(now: Double) -> LocatorMetrics {
        monitor.metrics(now: now, engine: engine, map: map, deduplicator: intake.deduplicator)
    }

    /// The figures for the metrics endpoint as of now, with the part the locator plays (the service knows it).
    public func metricsSnapshot(now: Double, role: LocatorMetricsSnapshot.Role = .single) -> LocatorMetricsSnapshot {
        let unknown = map.zones.lazy.filter { owns(floor: $0.floor) && engine.state(of: $0.key) == .unknown }.count
        var snapshot = monitor.snapshot(
            now: now, engine: engine, map: map, deduplicator: intake.deduplicator, zonesUnknown: unknown,
            hears: { hears(agentIndex: $0) })
        snapshot.role = role
        return snapshot
    }

    /// Notes the outbox's state, for the metrics' `outbox` (the service does, at every tick).
    public mutating func noteOutbox(_ outbox: LocatorMetrics.Outbox) {
        monitor.outbox = outbox
    }

    /// Whether the metrics are due with counts they have not told: a tick should run (``LocatorMonitor``).
    public func hasUntoldCounts(now: Double) -> Bool { monitor.hasUntoldCounts(now: now) }

    // MARK: - The batch ledger

    /// Which batches the pipeline has taken, in ``BatchLedger``'s file form, for the shell to keep across restarts.
    public var ledger: [UInt8] { BatchLedger.encode(intake.deduplicator) }

    /// Changes whenever the ledger does: the shell saves it only when this moved since its last save.
    public var ledgerRevision: UInt64 { intake.deduplicator.revision }

    /// How many agents the ledger remembers.
    public var ledgerAgentCount: Int { intake.deduplicator.trackedAgentCount }

    /// Takes the ledger an earlier run saved (``ledger``), before the first message; the batches it lists are then
    /// duplicates. Bytes that are not a whole, valid ledger change nothing: the ledger stays as it was (empty at
    /// start), and the error says why.
    public mutating func restoreLedger(_ bytes: [UInt8]) throws(BatchLedger.Error) {
        try intake.restoreLedger(bytes)
        monitor.ledgerRestored(intake.deduplicator)
    }

    /// Takes again, after ``restoreLedger(_:)``, the batches the last run journaled since it saved the ledger
    /// (``takeLedgerJournal()``): the ledger is then what it was at the last batch that run took, so a `kill -9`
    /// makes the next run count as missing only the batches the broker had handed over and no run took. Returns how
    /// many batches the journal listed; a torn last line is left out.
    public mutating func replayLedgerJournal(_ bytes: [UInt8]) -> Int {
        defer { monitor.ledgerRestored(intake.deduplicator) }
        return intake.replayJournal(bytes)
    }

    /// From now on, lists each batch taken for ``takeLedgerJournal()`` (a shell that keeps the ledger in a file).
    public mutating func journalsLedger() {
        intake.journalsLedger()
    }

    /// The journal's lines for the batches taken since the last call, to append to the file beside the ledger.
    public mutating func takeLedgerJournal() -> [UInt8] {
        intake.takeJournal()
    }

    // MARK: - Lifecycle

    /// Called on every (re)connection: republishes all retained state. (The session announces `online` first.)
    public mutating func connected(now: Double) -> [ServiceAction<LocatorEffect>] {
        intake.connected(now: now)
        var actions = discovery.announcements
        if ownsSite { actions.append(.publish(calibration.publication(engine: engine, topics: topics, now: now))) }
        actions += occupancy.connected(engine: engine, now: now)
        return actions + tags.connected() + batteries.connected()
    }

    /// The last words at a stop: the final metrics. (The session then says `offline`, as the will would.)
    public mutating func shutdown(now: Double) -> [ServiceAction<LocatorEffect>] {
        [.publish(monitor.metricsPublication(metrics(now: now), topic: metricsTopic))]
    }

    /// Takes a new, validated map (SIGHUP). The engine starts over on it, so occupancy waits for a new warm-up (no
    /// zone passes through a false empty) and positions are published again as tags are heard; positions not heard
    /// again within the tag timeout are cleared, as are the occupancy and discovery configs of zones the new map no
    /// longer has. Counters and the batch ledger carry on. A map of another site is refused: the topics would change
    /// under the subscriptions, so changing sites takes a restart. So is, for a locator split by floor, a map that
    /// changes its share's floors or whether it owns the site (its status topic and last will would move).
    public mutating func replaceMap(_ newMap: FloorMap, now: Double) -> [ServiceAction<LocatorEffect>] {
        if let refusal = refusal(of: newMap) { return [.log(.error, refusal)] }
        monitor.mapReplacing(map, engine: engine)
        // Occupancy of removed zones is cleared after their configs, so that no entity reads the empty payload.
        let clearedOccupancy = occupancy.removedZones(in: newMap)
        map = newMap
        intake.mapReplaced()
        let share = configuration.floors.map {
            FloorShare(lenient: newMap, floors: $0, margin: configuration.floorMargin)
        }
        arbiter.replaceShare(share)
        engine = LocatorEngine(map: newMap, configuration: configuration.engine)
        calibration = LocatorCalibration(map: newMap, configuration: configuration.calibration)
        calibration.prepare(&engine)
        occupancy = OccupancyPublisher(
            map: newMap, share: share, topics: topics, warmUp: configuration.warmUp, startTime: now)
        tags.replaceMap(newMap, share: share, now: now)
        batteries.replaceMap(newMap)
        agentActivity.replaceMap(newMap, share: share)
        var actions = discovery.replaceMap(newMap, share: share)
        actions += clearedOccupancy
        actions += discovery.announcements
        if ownsSite { actions.append(.publish(calibration.publication(engine: engine, topics: topics, now: now))) }
        return actions
    }

    /// Why a new map cannot be taken without a restart, or nil: another site, or another share of the floors.
    private func refusal(of newMap: FloorMap) -> String? {
        guard newMap.site.uuid == map.site.uuid else {
            return "the new map is for site \(newMap.site.uuid), not \(map.site.uuid): restart the locator to change "
                + "sites"
        }
        guard let share, let floors = configuration.floors else { return nil }
        // The share's own floors and whether it owns the site name its status topic, which its last will is on,
        // and who publishes the site's outputs: changing them takes a restart, as changing sites does.
        let next = FloorShare(lenient: newMap, floors: floors, margin: configuration.floorMargin)
        guard next.floors != share.floors || next.ownsSite != share.ownsSite else { return nil }
        let owner = { (share: FloorShare) in share.ownsSite ? ", owning the site" : "" }
        return "the new map changes this locator's share from floors \(share.floors)\(owner(share)) to "
            + "floors \(next.floors)\(owner(next)): restart the locator to change it; keeping the map in force"
    }

    // MARK: - Input

    /// Takes one received message.
    public mutating func receive(topic: String, payload: [UInt8], now: Double) -> [ServiceAction<LocatorEffect>] {
        switch topics.parse(topic) {
        case .readings(let agent):
            if let index = map.agentIndex(of: agent.rawValue), !hears(agentIndex: index) {
                // Another share's agent (a wildcard or shared subscription delivered it): not ours to fuse.
                monitor.counters.otherFloors += 1
                return []
            }
            return take(intake.decode(payload, agent: agent, map: map, now: now), agent: agent, now: now)
        case .agentStatus(let agent):
            guard let index = map.agentIndex(of: agent.rawValue), hears(agentIndex: index),
                let availability = Availability(payload: payload)
            else { return [] }
            // `degraded` is an agent that works (its journal cannot be written): its readings count as ever.
            engine.setAgentStatus(index, online: availability.isAvailable)
            if availability.isAvailable { engine.agentHeard(index, at: now) }
            return []
        case .gattResult(let agent):
            return gattResult(payload, agent: agent, now: now)
        case .locatorLease, .locatorStatus:
            return []  // the service's, when it is one of a pair (LeaseKeeper)
        case .homeAssistantStatus:
            // Home Assistant's birth message: it has (re)started and needs the discovery configs again.
            return Availability(payload: payload) == .online ? discovery.announcements : []
        case .position(let tag):
            tags.retainedPosition(tag, payload: payload, arbiter: &arbiter, engine: &engine, now: now)
            return []
        case .occupancy(let floor, let zone):
            return occupancy.retainedOccupancy(floor: floor, zone: zone, payload: payload)
        case .tagZone(let tag):
            tags.retainedZone(tag, payload: payload, arbiter: &arbiter, now: now)
            return []
        case .discoveryConfig(let topic):
            return discovery.retainedConfig(topic, payload: payload)
        case nil:
            // A readings topic whose agent level is not a valid id: refused like a bad `agent` member, and counted.
            let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
            guard topic.hasPrefix(topics.prefix + "/agents/"), levels.last == "readings" else { return [] }
            var actions: [ServiceAction<LocatorEffect>] = []
            monitor.reject(.badAgent, agent: nil, now: now, actions: &actions)
            return actions
        }
    }

    /// Decodes a readings batch off the service's loop, with what stays fixed while this map is in force
    /// (``ReadingIntake/preparation(map:share:topics:)``): decoding was a third of the locator's CPU on the loop.
    /// Nil for any other message, and for a batch of an agent this locator does not hear (counted when
    /// ``receive(topic:payload:now:)`` takes it).
    public var preparation: @Sendable (_ topic: String, _ payload: [UInt8], _ now: Double) -> PreparedBatch? {
        intake.preparation(map: map, share: share, topics: topics)
    }

    /// Takes a received batch that ``preparation`` decoded: as ``receive(topic:payload:now:)`` would at `now`. Its
    /// time checks are made again for `now` (``BatchDecoder/retimed(_:decodedAt:now:)``), and it is decoded again
    /// when the map was replaced since, or when only that can tell what its verdict at `now` is.
    public mutating func receive(
        topic: String, payload: [UInt8], prepared: PreparedBatch, now: Double
    ) -> [ServiceAction<LocatorEffect>] {
        guard let (result, agent) = intake.retimed(prepared, now: now) else {
            return receive(topic: topic, payload: payload, now: now)
        }
        return take(result, agent: agent, now: now)
    }

    private mutating func take(_ result: BatchDecodeResult, agent: AgentID, now: Double) -> [Action] {
        var actions: [Action] = []
        let taken = intake.take(
            result, agent: agent, map: map, now: now, engine: &engine, calibration: &calibration, monitor: &monitor,
            actions: &actions)
        if let taken, let batch = result.batch {
            occupancy.batchTaken(now: now)
            // A split site's share speaks for the tags on its floors (``publishes(_:)``); the whole site's for all.
            let (tags, share) = (tags, share)
            actions += batteries.batch(batch.outcomes) { tag in
                share == nil || tags.floor(of: tag).map { share.owns(floor: $0) } == true
            }
            agentActivity.batchTaken(agentIndex: taken.agentIndex, accepted: taken.accepted, now: now)
        }
        return actions
    }

    /// Takes an agent's GATT job result: a named tag's battery level, published by the locator that hears the agent
    /// (on a split site, whose shares subscribe agent by agent; a whole-site locator also takes an agent the map does
    /// not have), so that one level is said once. A malformed result is dropped and counted like a bad reading.
    private mutating func gattResult(_ payload: [UInt8], agent: AgentID, now: Double) -> [Action] {
        if let index = map.agentIndex(of: agent.rawValue) {
            guard hears(agentIndex: index) else { return [] }
        } else {
            guard ownsSite else { return [] }
        }
        switch batteries.gattResult(payload) {
        case .success(let actions): return actions
        case .failure(let reason):
            var actions: [Action] = []
            monitor.reject(reason, agent: agent, now: now, actions: &actions)
            return actions
        }
    }

    /// Takes one reading of a readings recording, as ``LocatorReplay`` feeds them: through the same way into the
    /// engine as a reading of a live batch (the recording holds what passed the wire checks and the deduplication).
    ///
    /// - Parameter now: the time the reading is taken at: its own time, or the last tick if that is later.
    public mutating func receive(_ reading: RecordedReading, now: Double) -> [ServiceAction<LocatorEffect>] {
        var actions: [Action] = []
        let taken = intake.take(
            reading, map: map, share: share, now: now, engine: &engine, calibration: &calibration, monitor: &monitor,
            actions: &actions)
        if taken { occupancy.batchTaken(now: now) }
        return actions
    }

    // MARK: - Output

    /// Runs the engine over what arrived since the last tick and publishes the consequences: calibration, events and
    /// occupancy first (they are what dashboards wait for), then positions, zone summaries and the reports.
    public mutating func tick(now: Double) -> [ServiceAction<LocatorEffect>] {
        let update = engine.update(now: now)
        var actions = calibration.tick(now: now, engine: &engine, topics: topics)
        if !ownsSite { actions.removeAll { $0.topicName == topics.calibration.name } }
        actions += occupancy.tick(update, engine: engine, now: now)
        for index in update.estimates.indices {
            guard owns(floor: update.estimates[index].floor) else {
                tags.positionHandedOver(update.estimates[index].tag)
                continue
            }
            if let position = tags.position(of: update.estimates, at: index, now: now) {
                actions.append(.publish(position))
            }
            discovery.noteTracked(update.estimates[index].tag, actions: &actions)
        }
        actions += arbiter.answerContests(now: now)
        // Written over by another locator while we own them: say ours again.
        let contested = arbiter.contestedTags
        actions += tags.positions(of: contested)
        actions += tags.clearPositions(of: update.lostTags)
        actions += tags.zoneSummaries(update, engine: engine, isWarm: occupancy.isWarm, now: now)
        actions += tags.zoneSummaries(of: contested)
        arbiter.contestsAnswered()
        actions += tags.clearStale(now: now)
        actions += monitor.tick(
            now: now, engine: engine, map: map, deduplicator: intake.deduplicator, topic: metricsTopic)
        actions += agentActivity.tick(now: now)
        return actions
    }
}
