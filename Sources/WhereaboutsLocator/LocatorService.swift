public import WhereaboutsCore
public import WhereaboutsSession
import WhereaboutsWire

/// The locator as a service: its pipeline, and when to run the engine.
///
/// Messages are answered at once when the engine has not run within ``updateInterval`` (monotonic seconds), so a
/// lone batch is not kept waiting for the ticker; a burst is coalesced into one update per interval; and the engine
/// runs at least once a second of the service clock, so zones time out while nothing arrives, and sooner when the
/// metrics are due with counts they have not told.
///
/// With a ``LeaseKeeper`` (`--role auto`) the locator is one of a pair: it follows the readings either way (its
/// engine fed, so a standby is warm), but publishes only while it holds the lease. A standby's publications are
/// dropped, not queued; on taking over it publishes all retained state from its engine (as after a reconnect), and on
/// standing down it discards whatever the session still held unsent. The lease is checked on every input before
/// anything is published, by the monotonic clock, so a locator resumed after a pause finds its lease gone first.
///
/// With a ``ledgerInterval`` the batch ledger (``LocatorPipeline/ledger``) is handed to the shell to save at most
/// that often while it changes, and the batches each input took in between to append to its journal; the shell saves
/// it once more after the client has stopped, and restores it (and replays the journal) before the first connection,
/// so that a batch taken by one run is a duplicate to the next, and its gaps are counted as the last run left them.
public struct LocatorService: ServicePipeline {
    /// The outbox's byte budget by default (``Outbox/byteLimit``), 4 MiB: what a reconnect republishes of about 2,500
    /// tags (a tag's position, zone and location take about 1.6 kB held). Past it the unnamed tags' states are shed,
    /// oldest first: a flood of new tag ids then costs the locator this much besides the engine, whose 20,000 tags
    /// take about 150 MB. (With 32 MiB, a flood of a million ids took the locator to 300 MB, VmHWM; with 8 MiB to 197
    /// MB; with 4 MiB to 189 MB: held publications cost what they count, but the churn of shedding millions costs
    /// more.) A site with more unnamed tags that must all be republished after a broker restart raises it
    /// (`--outbox-bytes`); named tags' states are never shed.
    public static let defaultOutboxBytes = 4 << 20
    /// The largest MQTT packet the locator asks the broker to send it (MQTT v5 Maximum Packet Size in CONNECT), for
    /// payloads of at most `payloadLimit` bytes: room besides for the topic (a readings topic is about 90 bytes; the
    /// retained outputs read back are no longer) and properties. A payload a little over the limit still arrives, cut,
    /// and is counted as `payload_too_large`; a conforming broker never sends a larger packet at all.
    public static func maximumPacketSize(payloadLimit: Int) -> Int {
        payloadLimit + 8_192
    }

    /// The most received batches the locator holds before the MQTT client stops reading. Each was acknowledged to the
    /// broker on arrival, so a `kill -9` loses at most these, the one libmosquitto holds in its callback and the four
    /// the runner has taken (decoded while the loop works on the ones before): 37 batches.
    public static let inboxLimit = 32
    /// Seconds between saves of the batch ledger while it changes, by default: a crash loses at most these of it.
    public static let defaultLedgerInterval = 5.0

    /// The locator's logic.
    public private(set) var pipeline: LocatorPipeline
    /// The shortest real time between two engine updates while messages stream in, seconds.
    public let updateInterval: Double
    /// The session's settings: the locator's status topic, an outbox that holds outputs only while disconnected.
    public let session: BrokerSession.Configuration

    /// The lease, for one of a pair of locators; nil for a locator on its own.
    public private(set) var lease: LeaseKeeper?

    /// Seconds (monotonic) between saves of the batch ledger while it changes; nil: the ledger is not saved while
    /// running (the shell may still save it at the stop).
    public let ledgerInterval: Double?
    private var ledgerSavedAt = -Double.infinity
    /// Seconds (monotonic) between the figures handed to the metrics endpoint (``LocatorEffect/metrics(_:)``), at a
    /// tick; nil: none are (no `--metrics-listen`).
    public let snapshotInterval: Double?
    private var snapshotAt = -Double.infinity
    private var ledgerSavedRevision: UInt64

    private var pendingSinceUpdate = false
    private var lastUpdate = -Double.infinity
    private var lastRealUpdate = -Double.infinity

    /// A service around `pipeline`; `outboxCapacity` bounds the events and metrics held while the broker is away, and
    /// `outboxBytes` all it holds (``Outbox/byteLimit``). `ledgerInterval`: seconds between saves of the batch ledger
    /// (``LocatorEffect/saveLedger(_:)``), nil for none; `snapshotInterval`: seconds between the metrics endpoint's
    /// figures (``LocatorEffect/metrics(_:)``), nil for none.
    public init(
        pipeline: LocatorPipeline, updateInterval: Double = 0.02, outboxCapacity: Int = 10_000,
        outboxBytes: Int? = LocatorService.defaultOutboxBytes, lease: LeaseKeeper.Configuration? = nil,
        ledgerInterval: Double? = nil, snapshotInterval: Double? = nil
    ) {
        self.snapshotInterval = snapshotInterval.map { $0.isFinite ? max($0, 0) : 1 }
        self.pipeline = pipeline
        self.lease = lease.map(LeaseKeeper.init(configuration:))
        self.updateInterval = max(updateInterval, 0)
        self.ledgerInterval = ledgerInterval.map { $0.isFinite ? max($0, 0) : Self.defaultLedgerInterval }
        ledgerSavedRevision = pipeline.ledgerRevision
        if ledgerInterval != nil { self.pipeline.journalsLedger() }
        session = BrokerSession.Configuration(
            statusTopic: pipeline.statusTopic, outbox: .untilHandedOver(capacity: outboxCapacity),
            drainTimeout: 2, goodbyeTimeout: 2, outboxByteLimit: outboxBytes)
    }

    public var subscriptions: [Subscription] {
        guard lease != nil else { return pipeline.subscriptions }
        // The lease without noLocal: the holder's renewals must come back to it to count.
        return pipeline.subscriptions + [
            Subscription(filter: pipeline.topics.locatorLeaseFilter, qos: .atLeastOnce),
            Subscription(filter: pipeline.topics.locatorStatusFilter, qos: .atLeastOnce, noLocal: true),
        ]
    }

    /// One of a pair: the end of the last lease it held (``LeaseKeeper/validUntil``), past which nothing it handed
    /// over as the holder may reach the broker. A process paused with publications in libmosquitto's queue (unwritten,
    /// or unacknowledged and due to be re-sent after the reconnect) would otherwise deliver them after the standby
    /// took over: found by the paused-active test, a renewal the broker received after the standby's claim.
    public var sendingDeadline: Double? {
        lease?.validUntil
    }

    /// Whether this locator publishes now: always on its own, while it holds the lease in a pair.
    public func isActive(at time: ServiceTime) -> Bool {
        lease?.isActive(now: time.monotonic) ?? true
    }

    public mutating func connected(at time: ServiceTime) -> [ServiceAction<LocatorEffect>] {
        var actions = leaseActions(lease?.connected(now: time.monotonic) ?? [], at: time)
        actions += gated({ $0.connected(now: time.now) }, at: time)
        if lease != nil, !isActive(at: time) {
            // A standby keeps nothing for later: whatever waited for this connection is forgotten.
            actions.append(.discardHeld)
        }
        return actions
    }

    public mutating func disconnected() {
        lease?.disconnected()
    }

    public mutating func receive(topic: String, payload: [UInt8], at time: ServiceTime) -> [ServiceAction<
        LocatorEffect
    >] {
        var actions = checkLease(at: time)
        if lease != nil {
            if topic == pipeline.topics.locatorLease.name {
                return actions
                    + leaseActions(lease?.received(LocatorLease(bytes: payload), now: time.monotonic) ?? [], at: time)
            }
            if topic == pipeline.topics.locatorStatus.name {
                // Another locator's `offline` (a standby's goodbye or will, a deposed holder's late will): the site's
                // locator is up as long as the holder is.
                if isActive(at: time), Availability(payload: payload) == .offline {
                    actions.append(.publish(statusOnline))
                }
                return actions
            }
        }
        actions += gated({ $0.receive(topic: topic, payload: payload, now: time.now) }, at: time)
        return actions + received(at: time)
    }

    /// The pipeline's decoding of readings batches, done off the loop.
    public var preparation: MessagePreparation<PreparedBatch>? {
        let decode = pipeline.preparation
        return MessagePreparation { topic, payload, time in decode(topic, payload, time.now) }
    }

    /// A readings batch the preparation decoded (never the lease's or the status's topic, which it leaves alone).
    public mutating func receive(
        topic: String, payload: [UInt8], prepared: PreparedBatch, at time: ServiceTime
    ) -> [ServiceAction<LocatorEffect>] {
        var actions = checkLease(at: time)
        actions += gated({ $0.receive(topic: topic, payload: payload, prepared: prepared, now: time.now) }, at: time)
        return actions + received(at: time)
    }

    /// An acknowledgement is about to let held publications go: a holder past its validity stands down first, and
    /// they are discarded. Found by the paused-active test: a renewal held for room went out after the pause, on the
    /// first acknowledgement, before any input that checked the lease.
    public mutating func acknowledging(at time: ServiceTime) -> [ServiceAction<LocatorEffect>] {
        checkLease(at: time)
    }

    /// After a message: the batch it took goes to the ledger's journal; the engine runs now unless it ran within the
    /// update interval.
    private mutating func received(at time: ServiceTime) -> [ServiceAction<LocatorEffect>] {
        pendingSinceUpdate = true
        var actions: [ServiceAction<LocatorEffect>] = []
        if ledgerInterval != nil {
            let lines = pipeline.takeLedgerJournal()
            if !lines.isEmpty { actions.append(.effect(.journalLedger(lines))) }
        }
        guard time.monotonic - lastRealUpdate >= updateInterval else { return actions }
        return actions + update(at: time)
    }

    public mutating func tick(at time: ServiceTime, outbox: Outbox) -> [ServiceAction<LocatorEffect>] {
        pipeline.noteOutbox(
            LocatorMetrics.Outbox(
                held: outbox.count, bytes: outbox.heldBytes, peakBytes: outbox.statistics.peakBytes,
                limitBytes: outbox.byteLimit, shed: outbox.statistics.shed, dropped: outbox.statistics.dropped,
                coalesced: outbox.statistics.coalesced))
        var actions: [ServiceAction<LocatorEffect>] = []
        if lease != nil {
            actions += leaseActions(lease?.tick(now: time.monotonic) ?? [], at: time)
        }
        actions += ledgerSave(at: time)
        if pendingSinceUpdate || time.now - lastUpdate >= 1 || pipeline.hasUntoldCounts(now: time.now) {
            actions += update(at: time)
        }
        // After the update, so that the latencies it measured are in.
        if let snapshotInterval, time.monotonic - snapshotAt >= snapshotInterval {
            snapshotAt = time.monotonic
            actions.append(.effect(.metrics(pipeline.metricsSnapshot(now: time.now, role: role(at: time)))))
        }
        return actions
    }

    /// The part this locator plays now, for the metrics endpoint.
    private func role(at time: ServiceTime) -> LocatorMetricsSnapshot.Role {
        guard lease != nil else { return .single }
        return isActive(at: time) ? .active : .standby
    }

    /// The ledger's bytes to save, every ``ledgerInterval`` seconds while it changes. A standby saves too: it takes
    /// the batches all the same.
    private mutating func ledgerSave(at time: ServiceTime) -> [ServiceAction<LocatorEffect>] {
        guard let ledgerInterval, time.monotonic - ledgerSavedAt >= ledgerInterval,
            pipeline.ledgerRevision != ledgerSavedRevision
        else { return [] }
        ledgerSavedAt = time.monotonic
        ledgerSavedRevision = pipeline.ledgerRevision
        // Every batch taken is in the ledger saved: the journal starts again empty.
        _ = pipeline.takeLedgerJournal()
        return [.effect(.saveLedger(pipeline.ledger))]
    }

    /// SIGHUP brought a new map, read and validated by the shell.
    public mutating func reload(_ map: FloorMap, at time: ServiceTime) -> [ServiceAction<LocatorEffect>] {
        checkLease(at: time) + gated({ $0.replaceMap(map, now: time.now) }, at: time)
    }

    public mutating func stop(at time: ServiceTime) -> [ServiceAction<LocatorEffect>] {
        var actions = checkLease(at: time)
        actions += update(at: time) + gated({ $0.shutdown(now: time.now) }, at: time)
        // Last: the lease goes after the final outputs, so the standby takes over from them at once.
        actions += leaseActions(lease?.stop(now: time.monotonic) ?? [], at: time)
        return actions
    }

    private mutating func update(at time: ServiceTime) -> [ServiceAction<LocatorEffect>] {
        pendingSinceUpdate = false
        lastUpdate = time.now
        lastRealUpdate = time.monotonic
        return gated({ $0.tick(now: time.now) }, at: time)
    }

    // MARK: - The lease

    /// Lets the lease's clock speak before anything is published: a holder past its validity stands down now.
    private mutating func checkLease(at time: ServiceTime) -> [ServiceAction<LocatorEffect>] {
        guard lease != nil else { return [] }
        return leaseActions(lease?.check(now: time.monotonic) ?? [], at: time)
    }

    /// Runs `step` on the pipeline and drops the publications it returns while this locator does not hold the lease
    /// (its engine has taken the input all the same).
    ///
    /// Mutating, and the pipeline is changed before anything else reads `self`: with a non-mutating method called on
    /// the result of a mutating one, Swift copies `self` before the call, and the engine's tables (every tag's state,
    /// every published position) are then copied on write by each batch: at 10,000 tags that was about a third of the
    /// locator's CPU.
    private mutating func gated(
        _ step: (inout LocatorPipeline) -> [ServiceAction<LocatorEffect>], at time: ServiceTime
    ) -> [ServiceAction<LocatorEffect>] {
        let actions = step(&pipeline)
        guard !isActive(at: time) else { return actions }
        return actions.filter {
            if case .publish = $0 { return false }
            return true
        }
    }

    private var statusOnline: Publication {
        Publication(
            topic: pipeline.topics.locatorStatus, payload: Availability.online.payload, qos: .atLeastOnce, retain: true)
    }

    private mutating func leaseActions(
        _ decisions: [LeaseKeeper.Decision], at time: ServiceTime
    ) -> [ServiceAction<LocatorEffect>] {
        var actions: [ServiceAction<LocatorEffect>] = []
        for decision in decisions {
            switch decision {
            case .publish(let claim):
                actions.append(
                    .publish(
                        Publication(
                            topic: pipeline.topics.locatorLease, payload: claim.payload, qos: .atLeastOnce,
                            retain: true,
                            priority: .urgent)))
            case .release:
                // Behind everything still held: the outbox sends the urgent first, and a release among them let the
                // standby take over while the stop's last outputs were still going out.
                actions.append(
                    .publish(
                        Publication(
                            topic: pipeline.topics.locatorLease, payload: "", qos: .atLeastOnce, retain: true,
                            priority: .last)))
            case .tookOver(let reason):
                actions.append(.log(.warning, "active: \(reason)"))
                // The site's state as this locator's engine has it, as after a reconnect: occupancy only once warm.
                actions.append(.publish(statusOnline))
                actions += pipeline.connected(now: time.now)
            case .stoodDown(let reason):
                actions.append(.log(.warning, "standby: \(reason)"))
                actions.append(.discardHeld)
            }
        }
        return actions
    }
}
