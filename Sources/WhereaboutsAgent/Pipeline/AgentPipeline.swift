public import WhereaboutsAdvertising
import WhereaboutsCore
public import WhereaboutsGATT
public import WhereaboutsSession
public import WhereaboutsWire

/// The agent's logic, from raw HCI events to reading batches, as a state machine that returns actions.
///
/// Events are decoded into beacon sightings, aggregated per window, and each closed window becomes one batch,
/// published through the session's outbox (kept until the broker acknowledges it). A live scan closes windows by
/// the wall clock at every tick and is watched for silence; a replay closes them by the capture's own times. When
/// the source ends, or a signal comes, the source is stopped, the open window is flushed as a last batch, and the
/// session says goodbye once every batch is acknowledged.
public struct AgentPipeline: ServicePipeline {
    /// What the agent hears from its source.
    public enum Input: Sendable {
        /// Raw HCI events, each with the time it was heard (or is stamped with, in a replay).
        case events([HeardEvent], framing: HCIFraming)
        /// A replay's time moved on with no event: windows up to it may close.
        case replayTime(Double)
        /// The source has no more events; `problem` says why, if not simply the end of a capture.
        case sourceEnded(problem: SourceProblem?)
        /// The radio ended a GATT job (or stopped it after ``Effect/cancelGATTJob(_:)``); its link dropped
        /// `droppedPackets` ACL packets for want of the controller's credits, and `linkDrops` of what came in as
        /// malformed or not for it (both counted on the counters line, not published).
        case gattJobEnded(GATTJobResult, droppedPackets: Int = 0, linkDrops: LinkCounters = LinkCounters())
        /// How many events the controller has dropped so far because the agent fell behind (over every time it was
        /// opened), sent when the count changes: the counters line reports it.
        case sourceDrops(Int)
    }

    /// What the agent asks of its source.
    public enum Effect: Sendable, Hashable {
        /// Stop the scan and start it again (the watchdog's remedy for a controller that went quiet).
        case restartScan
        /// Stop the source for good.
        case stopSource
        /// Run a GATT job beside the scan; its end comes back as ``Input/gattJobEnded(_:droppedPackets:linkDrops:)``.
        case runGATTJob(GATTJob)
        /// Stop the running GATT job (its deadline passed; its `timeout` is already published).
        case cancelGATTJob(GATTJobID)
    }

    /// Settings of the pipeline.
    public struct Configuration: Sendable {
        /// The agent's id.
        public var agent: AgentID
        /// The site's topics.
        public var topics: Topics
        /// The epoch of this run's batches (milliseconds since 1970 at start, so a restart's seqs are new).
        public var epoch: Int
        /// Which sightings to publish.
        public var filter: SightingFilter
        /// Window length, seconds.
        public var window: Double = 1
        /// The most tags in one window.
        public var maximumTags = 1024
        /// The most batches held for the broker.
        public var bufferBatches = 600
        /// Whether the source is a live scan: windows close by the wall clock and a watchdog watches for silence.
        public var isLive = false
        /// Silence after steady traffic that restarts a live scan, seconds.
        public var watchdogTimeout: Double = 30
        /// Seconds between the counters lines in the log.
        public var metricsInterval: Double = 60
        /// The longest wait at a stop for the broker to acknowledge what is held, seconds.
        public var shutdownTimeout: Double = 3
        /// Whether the shell keeps the outbox's batches in a journal (a state directory was given).
        public var journaled = false
        /// Whether the agent takes GATT jobs (`--gatt`): it then subscribes to its requests topic.
        public var gatt = false

        public init(agent: AgentID, topics: Topics, epoch: Int, filter: SightingFilter) {
            self.agent = agent
            self.topics = topics
            self.epoch = epoch
            self.filter = filter
        }
    }

    /// The settings.
    public let configuration: Configuration
    public let session: BrokerSession.Configuration
    /// The agent subscribes to its GATT requests with `--gatt`, and to nothing else.
    public var subscriptions: [Subscription] { gattJobs.map { [$0.subscription] } ?? [] }
    /// The agent's counters (the outbox's are the session's).
    public private(set) var metrics = AgentMetrics()
    /// Why the source ended, when it ended with a problem.
    public private(set) var sourceProblem: SourceProblem?

    private let readingsTopic: Topic
    private var decoder: SightingDecoder
    private var aggregator: WindowAggregator
    private var sequencer: BatchSequencer
    private var watchdog: ScanWatchdog?
    private var lastMetricsLog: Double
    /// The GATT jobs, with `--gatt`.
    public private(set) var gattJobs: GATTJobDesk?
    private var stopped = false
    /// The distinct addresses each published identity was heard from (bounded), to tell when several devices
    /// share an identity: their readings are merged into one tag's.
    private var addressesByTag: [TagIdentity: Set<DeviceAddress>] = [:]
    private var warnedPrivateAddresses = 0
    /// Tags followed for their addresses, and addresses per tag, at most.
    private static let trackedTags = 4096
    private static let trackedAddressesPerTag = 64

    /// A pipeline whose source starts at `time`.
    public init(configuration: Configuration, at time: ServiceTime) {
        self.configuration = configuration
        // A live radio cannot wait: a full outbox drops its oldest batch. A replay can: it waits for the broker, at
        // the end too, so that it never loses a batch (a signal still stops it; the loss is then its exit status).
        session = BrokerSession.Configuration(
            statusTopic: configuration.topics.agentStatus(agent: configuration.agent),
            outbox: .untilAcknowledged(capacity: configuration.bufferBatches, inFlightLimit: 8),
            overflow: configuration.isLive ? .dropOldest : .backPressure,
            drainTimeout: configuration.isLive ? configuration.shutdownTimeout : .infinity, goodbyeTimeout: 2,
            journaled: configuration.journaled)
        readingsTopic = configuration.topics.readings(agent: configuration.agent)
        decoder = SightingDecoder(filter: configuration.filter)
        aggregator = WindowAggregator(
            configuration: .init(windowLength: configuration.window, maximumTags: configuration.maximumTags))
        sequencer = BatchSequencer(agent: configuration.agent, epoch: configuration.epoch)
        lastMetricsLog = time.monotonic
        metrics.journal = configuration.journaled ? .disk : .none
        if configuration.gatt { gattJobs = GATTJobDesk(agent: configuration.agent, topics: configuration.topics) }
        if configuration.isLive {
            watchdog = ScanWatchdog(configuration: .init(timeout: configuration.watchdogTimeout), now: time.monotonic)
        }
    }

    /// A batch a previous run left in the journal, as this run publishes it: unchanged (its own epoch and seq, so
    /// that the locator takes it once and counts no gap), or nil when it is not this agent's readings on this
    /// site (the journal of an agent whose id or site changed).
    public func restoredPublication(_ pending: OutboxJournal.Pending) -> Publication? {
        guard pending.topic == readingsTopic.name, !pending.retain else { return nil }
        return Publication(topic: readingsTopic, payload: pending.payload, qos: .atLeastOnce, retain: false)
    }

    // MARK: - ServicePipeline

    public mutating func connected(at time: ServiceTime) -> [ServiceAction<Effect>] { [] }

    public mutating func receive(topic: String, payload: [UInt8], at time: ServiceTime) -> [ServiceAction<Effect>] {
        gattJobs?.receive(topic: topic, payload: payload, now: time.monotonic) ?? []
    }

    public mutating func take(_ input: Input, at time: ServiceTime) -> [ServiceAction<Effect>] {
        switch input {
        case .events(let events, let framing):
            guard !stopped else { return [] }
            return hear(events, framing: framing, at: time)
        case .replayTime(let replayTime):
            guard !stopped else { return [] }
            return publish(aggregator.advance(to: replayTime), at: time)
        case .sourceEnded(let problem):
            sourceProblem = problem
            guard let problem else {
                return (configuration.isLive ? [] : [.log(.info, "end of the capture")]) + [.stop(failure: nil)]
            }
            if problem.isFailure {
                return [.log(.error, "source failed: \(problem)"), .stop(failure: "source failed: \(problem)")]
            }
            return [.log(.warning, "replay stopped early: \(problem)"), .stop(failure: nil)]
        case .gattJobEnded(let result, let droppedPackets, let linkDrops):
            metrics.gattDroppedPackets += droppedPackets
            metrics.gattLinkDrops.add(linkDrops)
            return gattJobs?.finished(result, now: time.monotonic) ?? []
        case .sourceDrops(let count):
            metrics.sourceDrops = max(metrics.sourceDrops, count)
            return []
        }
    }

    public mutating func tick(at time: ServiceTime, outbox: Outbox) -> [ServiceAction<Effect>] {
        var actions = gattJobs?.tick(now: time.monotonic) ?? []
        if !stopped, configuration.isLive {
            actions += publish(aggregator.advance(to: time.now), at: time)
            if watchdog?.shouldRestart(now: time.monotonic) == true {
                metrics.scanRestarts += 1
                actions.append(
                    .log(
                        .warning,
                        "no advertising reports for \(configuration.watchdogTimeout) s after steady traffic: "
                            + "restarting the scan"))
                actions.append(.effect(.restartScan))
            }
        }
        if time.monotonic - lastMetricsLog >= configuration.metricsInterval {
            lastMetricsLog = time.monotonic
            actions.append(.log(.info, "counters: \(summary(outbox: outbox))"))
        }
        return actions
    }

    /// The journal failed (the agent goes on from memory, its status says `degraded`) or works again: counted.
    public mutating func journalWritable(_ writable: Bool, at time: ServiceTime) -> [ServiceAction<Effect>] {
        guard configuration.journaled else { return [] }
        metrics.journal = writable ? .disk : .memory
        if !writable { metrics.journalFailures += 1 }
        return []
    }

    public mutating func stop(at time: ServiceTime) -> [ServiceAction<Effect>] {
        guard !stopped else { return [] }
        stopped = true
        var actions: [ServiceAction<Effect>] = [.effect(.stopSource)]
        if let window = aggregator.flush() { actions += publish([window], at: time) }
        return actions
    }

    // MARK: - Counters

    /// The counters as one `key=value` line, the session outbox's included. `sourceDrops` is the source's own count
    /// of dropped events, at the end, when it may know more than it last told (``Input/sourceDrops(_:)``).
    public func summary(outbox: Outbox, sourceDrops: Int = 0) -> String {
        var metrics = metrics
        let statistics = outbox.statistics
        metrics.drops = decoder.counters
        metrics.published = statistics.published
        metrics.republished = statistics.republished
        metrics.acknowledged = statistics.acknowledged
        metrics.refused = statistics.refused
        metrics.buffered = outbox.count
        metrics.bufferPeak = statistics.peak
        metrics.dropped = statistics.dropped
        metrics.sourceDrops = max(metrics.sourceDrops, sourceDrops)
        metrics.sourceProblem = sourceProblem?.message
        metrics.identities = addressesByTag.count
        metrics.sharedIdentities = sharedIdentities
        metrics.gatt = gattJobs?.counters
        return metrics.line
    }

    /// The identities heard from more than one address, with how many, most addresses first.
    public var sharedIdentities: [SharedIdentity] {
        addressesByTag.compactMap { $0.value.count > 1 ? SharedIdentity(tag: $0.key, addresses: $0.value.count) : nil }
            .sorted { ($0.addresses, $1.tag.description) > ($1.addresses, $0.tag.description) }
    }

    // MARK: - Hearing

    private mutating func hear(_ events: [HeardEvent], framing: HCIFraming, at time: ServiceTime) -> [ServiceAction<
        Effect
    >] {
        var closed: [ClosedWindow] = []
        var notes: [ServiceAction<Effect>] = []
        for event in events {
            metrics.events += 1
            let sightings = decoder.sightings(in: event.bytes[...], framing: framing, time: event.time)
            closed += aggregator.advance(to: event.time)
            for sighting in sightings {
                closed += aggregator.add(sighting, at: event.time)
                if let line = noteAddress(of: sighting) { notes.append(.log(.warning, line)) }
                gattJobs?.heard(sighting)
            }
            metrics.sightings += sightings.count
        }
        watchdog?.heard(events.count, now: time.monotonic)
        if decoder.privateAddressesHeard.count > warnedPrivateAddresses {
            warnedPrivateAddresses = decoder.privateAddressesHeard.count
            let addresses = decoder.privateAddressesHeard.map(\.description).sorted().joined(separator: ", ")
            notes.append(
                .log(
                    .warning,
                    "--address \(addresses): heard as a private random address, which the device rotates: it is "
                        + "not tracked (track its beacon identity instead)"))
        }
        return notes + publish(closed, at: time)
    }

    /// Remembers the address a sighting came from; returns a warning line when its identity is first heard from a
    /// second address.
    private mutating func noteAddress(of sighting: BeaconSighting) -> String? {
        guard var addresses = addressesByTag[sighting.tag] ?? (addressesByTag.count < Self.trackedTags ? [] : nil),
            addresses.count < Self.trackedAddressesPerTag, !addresses.contains(sighting.address)
        else { return nil }
        addresses.insert(sighting.address)
        addressesByTag[sighting.tag] = addresses
        guard addresses.count == 2 else { return nil }
        return
            "\(sighting.tag) is heard from 2 addresses (\(addresses.map(\.description).sorted().joined(separator: ", "))): "
            + "several devices advertise this identity, or one rotates its address; their readings are merged"
    }

    private mutating func publish(_ windows: [ClosedWindow], at time: ServiceTime) -> [ServiceAction<Effect>] {
        windows.map { window in
            let batch = sequencer.batch(for: window, sent: time.now)
            metrics.batches += 1
            metrics.tagOverflow += window.overflow
            return .publish(Publication(topic: readingsTopic, payload: batch.payload, qos: .atLeastOnce, retain: false))
        }
    }
}

/// One HCI event and when it was heard, Unix seconds.
public struct HeardEvent: Sendable {
    /// The event's bytes.
    public var bytes: [UInt8]
    /// When it was heard.
    public var time: Double

    public init(bytes: [UInt8], time: Double) {
        self.bytes = bytes
        self.time = time
    }
}

/// Why a source ended other than by reaching the end of a capture.
public struct SourceProblem: Sendable, CustomStringConvertible {
    /// What went wrong, in words.
    public var message: String
    /// Whether the agent should exit with a failure (a live controller failed) rather than finish normally (a
    /// capture with a damaged tail).
    public var isFailure: Bool

    public init(message: String, isFailure: Bool) {
        self.message = message
        self.isFailure = isFailure
    }

    public var description: String { message }
}
