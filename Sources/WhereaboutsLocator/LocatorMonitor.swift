import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

/// What the locator says about its own running: its counters, the metrics message, and the log lines that must not
/// flood the log (rejections, batches missing, tags evicted, falling behind its input).
///
/// A state machine fed in time order: each batch taken (``batchTaken(sent:now:)``) and each refusal
/// (``reject(_:agent:now:actions:)``) as they come, then ``tick(now:engine:map:deduplicator:topic:)`` after the engine's
/// update. Every rejection is counted; one line per reason is logged at most once a minute, saying how many were
/// suppressed since; the reports of gaps and evictions come at most once a minute too.
struct LocatorMonitor: Sendable {
    /// A median input lag from this many seconds up is said in the log (at most once a minute): the locator is
    /// behind its input. Well above agents' clock skew under NTP; readings older than the map's `reading_max_age`
    /// are dropped (`too_old_to_track`).
    static let behindLag = 2.0

    /// Seconds between metrics messages.
    let metricsInterval: Double
    /// The engine's limit of tracked tags, for the eviction report.
    let maximumTags: Int
    /// Counts since start.
    var counters = LocatorPipeline.Counters()
    /// The outbox as the service last saw it, for the metrics.
    var outbox: LocatorMetrics.Outbox?
    /// Seconds from each batch's arrival to the update that took it, since start (the endpoint's histogram).
    private(set) var updateLatency = Histogram()
    /// Seconds from each batch's sending to its arrival, since start.
    private(set) var inputLag = Histogram(bounds: LocatorMetricsSnapshot.inputLagBounds)
    /// Readings taken from each agent of the map in force, by the agent's index: a batch adds its count once, with no
    /// lookup by name on the way in.
    private var acceptedByAgentIndex: [Int] = []
    /// Readings taken per agent id under the maps replaced since start.
    private var acceptedEarlier: [String: Int] = [:]
    /// Tags evicted by the engines replaced since start (each new one counts from 0).
    private var evictedEarlier = 0

    private var lastMetrics = -Double.infinity
    /// The counters the last metrics told, for ``hasUntoldCounts(now:)``.
    private var countersAtLastMetrics = LocatorPipeline.Counters()
    private var latencies: [Double] = []
    private var pendingReceiveTimes: [Double] = []
    /// How long each batch since the last metrics took from its agent to the engine (``LocatorMetrics/inputLagP50``).
    private var inputLags: [Double] = []
    private var lastBehindWarning = -Double.infinity
    private var lastLogged: [RejectionReason: Double] = [:]
    private var suppressed: [RejectionReason: Int] = [:]
    /// Missing batches per agent as of the last gap report, and when that was.
    private var reportedMissing: [AgentID: Int] = [:]
    /// Jumps in seqs per agent as of the last report.
    private var reportedJumps: [AgentID: Int] = [:]
    private var lastGapReport = -Double.infinity
    /// Tags the engine had evicted as of the last report, and when that was.
    private var reportedEvictions = 0
    private var lastEvictionReport = -Double.infinity

    init(metricsInterval: Double, maximumTags: Int) {
        self.metricsInterval = metricsInterval
        self.maximumTags = maximumTags
    }

    // MARK: - Inputs

    /// A batch reached the engine at `now`, sent by its agent at `sent`: its latency is measured at the next tick.
    mutating func batchTaken(sent: Double, now: Double) {
        pendingReceiveTimes.append(now)
        let lag = max(now - sent, 0)
        inputLags.append(lag)
        inputLag.observe(lag)
    }

    /// `count` readings of one batch (or one recorded reading) of the map's agent `agentIndex` were taken.
    mutating func accepted(_ count: Int, agentIndex: Int) {
        guard count > 0, agentIndex >= 0 else { return }
        if agentIndex >= acceptedByAgentIndex.count {
            acceptedByAgentIndex += Array(repeating: 0, count: agentIndex + 1 - acceptedByAgentIndex.count)
        }
        acceptedByAgentIndex[agentIndex] += count
    }

    /// Counts a refused reading (or batch), and logs it unless its reason was logged within the minute.
    mutating func reject(_ reason: RejectionReason, agent: AgentID?, now: Double, actions: inout [Action]) {
        counters.rejected[reason, default: 0] += 1
        if let last = lastLogged[reason], now - last < 60 {
            suppressed[reason, default: 0] += 1
            return
        }
        let more = suppressed.removeValue(forKey: reason).map { " (\($0) more since the last report)" } ?? ""
        lastLogged[reason] = now
        let from = agent.map { "agent \($0)" } ?? "a topic with an invalid agent id"
        let what = reason == .badGATTResult ? "a GATT job result" : "a reading"
        actions.append(.log(.warning, "dropped \(what) from \(from): \(reason)\(more)"))
    }

    /// The ledger came back from the last run: the gaps it knew were reported then, and only new ones are now.
    mutating func ledgerRestored(_ deduplicator: BatchDeduplicator) {
        reportedMissing = deduplicator.missing
    }

    /// The map is about to be replaced, and the engine with it, which counts its evictions from 0 again: what the old
    /// ones counted is kept under the agents' ids.
    mutating func mapReplacing(_ old: FloorMap, engine: LocatorEngine) {
        for (index, count) in acceptedByAgentIndex.enumerated() where count > 0 && index < old.agents.count {
            acceptedEarlier[old.agents[index].id, default: 0] += count
        }
        acceptedByAgentIndex.removeAll()
        evictedEarlier += engine.evictedTagCount
        reportedEvictions = 0
    }

    /// After the engine's update: the latencies of the batches it took, and when due the metrics (with a warning when
    /// behind), the gaps and the evictions, in that order.
    mutating func tick(
        now: Double, engine: LocatorEngine, map: FloorMap, deduplicator: BatchDeduplicator, topic: Topic
    ) -> [Action] {
        var actions: [Action] = []
        for received in pendingReceiveTimes {
            let latency = max(now - received, 0)
            latencies.append(latency)
            updateLatency.observe(latency)
        }
        pendingReceiveTimes.removeAll(keepingCapacity: true)
        if now - lastMetrics >= metricsInterval {
            lastMetrics = now
            countersAtLastMetrics = counters
            let metrics = metrics(now: now, engine: engine, map: map, deduplicator: deduplicator)
            actions += behindWarning(metrics, now: now)
            actions.append(.publish(metricsPublication(metrics, topic: topic)))
        }
        if now - lastGapReport >= 60 {
            // At most once a minute, and at once for the first gap after a quiet minute.
            let reports = gapReports(deduplicator)
            if !reports.isEmpty { lastGapReport = now }
            actions += reports
        }
        if now - lastEvictionReport >= 60, engine.evictedTagCount > reportedEvictions {
            lastEvictionReport = now
            let new = engine.evictedTagCount - reportedEvictions
            reportedEvictions = engine.evictedTagCount
            actions.append(
                .log(
                    .warning,
                    "tracked tags at the limit of \(maximumTags): evicted \(new) unnamed tags "
                        + "(longest silent first) since the last report, \(engine.evictedTagCount) in all"))
        }
        return actions
    }

    // MARK: - Metrics

    /// Whether the metrics are due and the counters have moved since the last ones: a tick should then run, or the
    /// last readings of a burst that ended just after a metrics message would wait for the idle second's update to be
    /// told. (They did: the stream bench, which waits for the metrics to count every reading, measured most rounds
    /// at about 0.9 M readings/s instead of 1.3-1.5 M, a second late in the metrics alone.)
    func hasUntoldCounts(now: Double) -> Bool {
        now - lastMetrics >= metricsInterval && counters != countersAtLastMetrics
    }

    /// The metrics as of now.
    func metrics(now: Double, engine: LocatorEngine, map: FloorMap, deduplicator: BatchDeduplicator) -> LocatorMetrics {
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
            inputLagP99: Self.percentile(0.99, of: lags).map { $0 * 1000 }, outbox: outbox
        )
    }

    /// The figures for the metrics endpoint as of now (``LocatorPipeline/metricsSnapshot(now:role:)``); `hears` says
    /// which of the map's agents (by index) this locator listens to, `zonesUnknown` how many of its zones cannot be
    /// known.
    func snapshot(
        now: Double, engine: LocatorEngine, map: FloorMap, deduplicator: BatchDeduplicator, zonesUnknown: Int,
        hears: (Int) -> Bool
    ) -> LocatorMetricsSnapshot {
        var snapshot = LocatorMetricsSnapshot()
        snapshot.readingsByAgent = acceptedEarlier
        for (index, agent) in map.agents.enumerated() where hears(index) {
            let taken = index < acceptedByAgentIndex.count ? acceptedByAgentIndex[index] : 0
            snapshot.readingsByAgent[agent.id, default: 0] += taken
            snapshot.batchesMissing[agent.id] = 0
            snapshot.agentsUp[agent.id] = engine.isAgentOnline(index, now: now)
        }
        for (agent, missing) in deduplicator.missing { snapshot.batchesMissing[agent.rawValue] = missing }
        snapshot.readingsRejected = counters.rejected
        snapshot.batches = counters.batches
        snapshot.tagsTracked = engine.trackedTagCount
        snapshot.tagsEvicted = evictedEarlier + engine.evictedTagCount
        snapshot.zonesUnknown = zonesUnknown
        snapshot.outbox = outbox
        snapshot.updateLatency = updateLatency
        snapshot.inputLag = inputLag
        return snapshot
    }

    /// The metrics' publication; the latencies and lags they cover start again.
    mutating func metricsPublication(_ metrics: LocatorMetrics, topic: Topic) -> Publication {
        let payload = metrics.payload
        latencies.removeAll(keepingCapacity: true)
        inputLags.removeAll(keepingCapacity: true)
        return Publication(topic: topic, payload: payload, qos: .atMostOnce, retain: false)
    }

    /// The `p` quantile of sorted values (the value at rank ⌊count · p⌋), nil for none.
    private static func percentile(_ p: Double, of sorted: [Double]) -> Double? {
        sorted.isEmpty ? nil : sorted[min(Int(Double(sorted.count) * p), sorted.count - 1)]
    }

    // MARK: - Reports

    /// One log line per agent whose batches went missing since the last report, and one per agent whose seq jumped.
    private mutating func gapReports(_ deduplicator: BatchDeduplicator) -> [Action] {
        var lines: [Action] = []
        for (agent, jumps) in deduplicator.jumps.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let new = jumps.count - reportedJumps[agent, default: 0]
            guard new > 0 else { continue }
            reportedJumps[agent] = jumps.count
            let jump = jumps.last
            let from = jump.from < 0 ? "its run's start" : "\(jump.from)"
            lines.append(
                .log(
                    .warning,
                    "agent \(agent): \(new) seq jumps since the last report, \(jumps.count) in all, not counted as "
                        + "missing: the last from \(from) to \(jump.to) while its clock moved "
                        + "\(Self.seconds(min(max(jump.seconds, 0), 1e9))) s, "
                        + "more batches than it can send in that time (a forged or corrupt seq, not a loss)"))
        }
        for (agent, missing) in deduplicator.missing.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let new = missing - reportedMissing[agent, default: 0]
            guard new > 0 else { continue }
            reportedMissing[agent] = missing
            lines.append(
                .log(
                    .warning,
                    "agent \(agent): \(new) batches missing (gaps in its seqs) since the last report, \(missing) in all"
                ))
        }
        return lines
    }

    /// Says, at most once a minute, that the batches the metrics cover (those since the last metrics) reached the
    /// engine a median of ``behindLag`` seconds or more after their agents sent them. The rejections that follow
    /// (`too_old_to_track`, logged under the agent whose reading it was) would otherwise be the only sign, and they
    /// point at an agent.
    private mutating func behindWarning(_ metrics: LocatorMetrics, now: Double) -> [Action] {
        guard let median = metrics.inputLagP50.map({ $0 / 1000 }), median >= Self.behindLag,
            now - lastBehindWarning >= 60
        else { return [] }
        lastBehindWarning = now
        let worst = metrics.inputLagP99.map { $0 / 1000 } ?? median
        return [
            .log(
                .warning,
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
}
