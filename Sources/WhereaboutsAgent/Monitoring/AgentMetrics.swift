public import WhereaboutsAdvertising
public import WhereaboutsCore
public import WhereaboutsGATT

/// The agent's counters since it started, and the lines it logs from them.
public struct AgentMetrics: Sendable, Hashable {
    /// HCI events read from the source.
    public var events = 0
    /// Drops by reason, from the sighting decoder (malformed events and ordinary traffic not published).
    public var drops = DropCounters()
    /// Sightings the filter selected.
    public var sightings = 0
    /// Batches built (one per window).
    public var batches = 0
    /// Batches published, re-sends included.
    public var published = 0
    /// Batches re-published after a reconnect.
    public var republished = 0
    /// Batches the broker acknowledged.
    public var acknowledged = 0
    /// Acknowledgements that refused the batch.
    public var refused = 0
    /// Batches held now, unsent or unacknowledged.
    public var buffered = 0
    /// The most batches held at once.
    public var bufferPeak = 0
    /// Batches dropped because the buffer was full.
    public var dropped = 0
    /// Sightings dropped because a window held the most tags.
    public var tagOverflow = 0
    /// Scan restarts by the watchdog.
    public var scanRestarts = 0
    /// Events the source had to drop because the agent fell behind.
    public var sourceDrops = 0
    /// Identities published so far.
    public var identities = 0
    /// Identities heard from more than one address (several devices, or one rotating its address), with how many.
    public var sharedIdentities: [SharedIdentity] = []
    /// The GATT jobs' counters, with `--gatt`.
    public var gatt: GATTJobQueue.Counters?
    /// ACL packets the GATT jobs' links dropped because the queue waiting for the controller's credits was full.
    public var gattDroppedPackets = 0
    /// What the GATT jobs' links dropped of what came in (malformed ACL or signalling, unknown channels, ...).
    public var gattLinkDrops = LinkCounters()
    /// Problems reading the source (a truncated btsnoop tail, say), in words; the last one.
    public var sourceProblem: String?
    /// Where the outbox is kept now.
    public var journal = JournalMode.none
    /// Times the outbox journal could not be written and the agent went on from memory (at start too).
    public var journalFailures = 0

    /// Where the agent keeps the batches the broker has not acknowledged.
    public enum JournalMode: String, Sendable, Hashable {
        /// In memory only: no state directory.
        case none
        /// In the journal in the state directory.
        case disk
        /// In memory, because the journal cannot be written (a full disk): the agent is degraded.
        case memory
    }

    /// All zero.
    public init() {}

    /// One `key=value` line: what the agent logs every minute and prints as its summary on exit.
    ///
    /// `malformed` is the total of drops whose bytes broke the format; `drops[...]` lists every non-zero reason, and
    /// `gatt-link-drops[...]` every non-zero reason the GATT jobs' links dropped what came in for.
    public var line: String {
        var parts = [
            "events=\(events)", "malformed=\(drops.malformed)", "sightings=\(sightings)", "batches=\(batches)",
            "published=\(published)", "republished=\(republished)", "acked=\(acknowledged)", "refused=\(refused)",
            "buffered=\(buffered)", "buffer-peak=\(bufferPeak)", "dropped=\(dropped)", "tag-overflow=\(tagOverflow)",
            "scan-restarts=\(scanRestarts)", "source-drops=\(sourceDrops)", "journal=\(journal.rawValue)",
            "journal-failures=\(journalFailures)", "identities=\(identities)",
            "shared-identities=\(sharedIdentities.count)",
        ]
        if !sharedIdentities.isEmpty {
            // The first few, most addresses first: enough to find them without flooding the line.
            let listed = sharedIdentities.prefix(8).map { "\($0.tag)=\($0.addresses)" }.joined(separator: ",")
            parts.append("addresses[\(listed)\(sharedIdentities.count > 8 ? ",..." : "")]")
        }
        let reasons = drops.description
        if !reasons.isEmpty { parts.append("drops[\(reasons)]") }
        if let gatt {
            parts.append(
                "gatt[received=\(gatt.received),completed=\(gatt.completed),timed-out=\(gatt.timedOut),"
                    + "busy=\(gatt.busy),refused=\(gatt.refused),acl-dropped=\(gattDroppedPackets)]")
        }
        let linkDrops = gattLinkDrops.nonZero
        if !linkDrops.isEmpty {
            parts.append("gatt-link-drops[\(linkDrops.map { "\($0.reason)=\($0.count)" }.joined(separator: ","))]")
        }
        if let sourceProblem { parts.append("source-problem=\"\(sourceProblem)\"") }
        return parts.joined(separator: " ")
    }
}

/// An identity heard from several addresses: several devices advertising it, or one rotating its private address.
public struct SharedIdentity: Sendable, Hashable {
    /// The identity.
    public var tag: TagIdentity
    /// How many distinct addresses it was heard from.
    public var addresses: Int

    public init(tag: TagIdentity, addresses: Int) {
        self.tag = tag
        self.addresses = addresses
    }
}
