public import WhereaboutsWire

/// The locator's figures at one moment, as its metrics endpoint (`--metrics-listen`) serves them to Prometheus.
///
/// The service loop owns the figures and makes one of these every ``LocatorService/snapshotInterval`` seconds
/// (``LocatorEffect/metrics(_:)``); the HTTP server's thread renders the last one it was handed
/// (``prometheusText(version:startTime:)``) when scraped. A value, so the two never share the loop's state, and the
/// loop's per-reading work takes no lock.
///
/// Every figure counts since the locator started, unless it says otherwise; the agents' are the locator's view of
/// them (what reached it), the only view one scrape target can give of a building's agents (docs/metrics.md).
public struct LocatorMetricsSnapshot: Sendable, Hashable {
    /// Which part the locator plays, for `whereabouts_lease_role`.
    public enum Role: String, Sendable, Hashable, CaseIterable {
        /// The site's only locator (`--role single`).
        case single
        /// One of a pair, holding the lease: it publishes.
        case active
        /// One of a pair, not holding the lease: it follows the readings without publishing.
        case standby
    }

    /// Readings the engine took, by agent id: every agent of the map in force (0 until heard), and those of maps
    /// replaced since the start that took any.
    public var readingsByAgent: [String: Int] = [:]
    /// Readings (or whole batches) refused, by reason.
    public var readingsRejected: [RejectionReason: Int] = [:]
    /// Batches received on the readings topics.
    public var batches = 0
    /// Batches missing now (gaps in seqs not filled by a late batch), by agent id: every agent of the map, and any
    /// other the batch ledger remembers with a gap.
    public var batchesMissing: [String: Int] = [:]
    /// Whether each agent of the map is online (its status, and heard within its timeout).
    public var agentsUp: [String: Bool] = [:]
    /// Tags with a current position.
    public var tagsTracked = 0
    /// Unnamed tags evicted at the engine's limit of tracked tags.
    public var tagsEvicted = 0
    /// Zones (of the floors this locator publishes) whose occupancy cannot be known: no online agent covers them.
    public var zonesUnknown = 0
    /// The outbox: held publications and bytes now, what it shed and dropped.
    public var outbox: LocatorMetrics.Outbox?
    /// Seconds from a batch's arrival to the engine update that took it into the outputs.
    public var updateLatency = Histogram()
    /// Seconds from an agent sending a batch (its clock) to the locator taking it.
    public var inputLag = Histogram(bounds: LocatorMetricsSnapshot.inputLagBounds)
    /// The part the locator plays now.
    public var role = Role.single

    /// The input lag's buckets, seconds: from 10 ms (broker and inbox) to 30 s (readings past the map's default
    /// `reading_max_age` of 10 s are dropped).
    public static let inputLagBounds = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

    /// A snapshot of a locator that has counted nothing yet.
    public init() {}
}

extension LocatorMetricsSnapshot {
    /// The figures in the Prometheus text format (version 0.0.4), with the build's `version` and the process's
    /// start (Unix seconds). Families and label values come out sorted, so that equal figures give equal text.
    public func prometheusText(version: String, startTime: Double) -> String {
        var out = PrometheusText()
        out.family("whereabouts_readings_total", .counter, help: "Readings the engine took, per agent.")
        for (agent, count) in readingsByAgent.sorted(by: { $0.key < $1.key }) {
            out.sample("whereabouts_readings_total", labels: [("agent", agent)], count)
        }
        out.family(
            "whereabouts_readings_rejected_total", .counter,
            help: "Readings (or whole batches, counted once) refused, by reason.")
        // Every reason, so that a rate over any of them starts from a known 0.
        for reason in RejectionReason.allCases.sorted() {
            out.sample(
                "whereabouts_readings_rejected_total", labels: [("reason", reason.rawValue)],
                readingsRejected[reason] ?? 0)
        }
        out.family("whereabouts_batches_total", .counter, help: "Batches received on the agents' readings topics.")
        out.sample("whereabouts_batches_total", batches)
        // A gauge: a late batch that fills a gap counts back, and a counter that falls reads as a restart.
        out.family(
            "whereabouts_batches_missing", .gauge,
            help:
                "Batches missing from an agent's runs (seq gaps not filled), as the locator's batch ledger counts them."
        )
        for (agent, count) in batchesMissing.sorted(by: { $0.key < $1.key }) {
            out.sample("whereabouts_batches_missing", labels: [("agent", agent)], count)
        }
        out.family("whereabouts_agent_up", .gauge, help: "1 for an agent of the map that is online, else 0.")
        for (agent, up) in agentsUp.sorted(by: { $0.key < $1.key }) {
            out.sample("whereabouts_agent_up", labels: [("agent", agent)], up ? 1 as Int : 0)
        }
        out.family("whereabouts_tags_tracked", .gauge, help: "Tags with a current position.")
        out.sample("whereabouts_tags_tracked", tagsTracked)
        out.family(
            "whereabouts_tags_evicted_total", .counter, help: "Unnamed tags evicted at the limit of tracked tags.")
        out.sample("whereabouts_tags_evicted_total", tagsEvicted)
        out.family(
            "whereabouts_zones_unknown", .gauge,
            help: "Zones whose occupancy cannot be known: no online agent covers them.")
        out.sample("whereabouts_zones_unknown", zonesUnknown)
        writeOutbox(into: &out)
        out.family(
            "whereabouts_update_latency_seconds", .histogram,
            help: "Seconds from a batch's arrival to the engine update that took it into the outputs.")
        out.samples(of: updateLatency, "whereabouts_update_latency_seconds")
        out.family(
            "whereabouts_input_lag_seconds", .histogram,
            help: "Seconds from an agent sending a batch (by its clock) to the locator taking it.")
        out.samples(of: inputLag, "whereabouts_input_lag_seconds")
        out.family("whereabouts_lease_role", .gauge, help: "1 for the part this locator plays now, else 0.")
        for candidate in Role.allCases {
            out.sample(
                "whereabouts_lease_role", labels: [("role", candidate.rawValue)], candidate == role ? 1 as Int : 0)
        }
        out.family("whereabouts_build_info", .gauge, help: "1, with the locator's version as a label.")
        out.sample("whereabouts_build_info", labels: [("version", version)], 1)
        out.family("process_start_time_seconds", .gauge, help: "Start time of the process since the Unix epoch.")
        out.sample("process_start_time_seconds", startTime)
        return out.text
    }

    /// The outbox's families; without an outbox reported yet, only held and bytes, at 0.
    private func writeOutbox(into out: inout PrometheusText) {
        out.family("whereabouts_outbox_held", .gauge, help: "Publications the locator holds for the broker.")
        out.sample("whereabouts_outbox_held", outbox?.held ?? 0)
        out.family("whereabouts_outbox_bytes", .gauge, help: "Bytes the held publications count against the budget.")
        out.sample("whereabouts_outbox_bytes", outbox?.bytes ?? 0)
        if let limit = outbox?.limitBytes {
            out.family("whereabouts_outbox_limit_bytes", .gauge, help: "The outbox's byte budget (--outbox-bytes).")
            out.sample("whereabouts_outbox_limit_bytes", limit)
        }
        out.family(
            "whereabouts_outbox_shed_total", .counter,
            help: "Publications dropped unsent over the byte budget (states of tags the map does not name first).")
        out.sample("whereabouts_outbox_shed_total", outbox?.shed ?? 0)
        out.family(
            "whereabouts_outbox_dropped_total", .counter,
            help: "Publications dropped unsent as the oldest past the outbox's count.")
        out.sample("whereabouts_outbox_dropped_total", outbox?.dropped ?? 0)
    }
}
