public import WhereaboutsWire

/// Publications on their way to the broker: held while it is unreachable, sent in order, released by policy.
///
/// One implementation for both services, told apart by its ``Policy``:
/// - the agent's reading batches are kept until the broker acknowledges them (``Policy/untilAcknowledged(capacity:inFlightLimit:)``):
///   at most a few unacknowledged at a time, everything unacknowledged sent again after a reconnect (the locator
///   drops the duplicates by `(agent, epoch, seq)`);
/// - the locator's outputs are kept only until libmosquitto takes them
///   (``Policy/untilHandedOver(capacity:handOverLimit:)``), which then re-sends its own in-flight QoS 1 messages after
///   a reconnect. It is handed at most as many unacknowledged QoS 1 messages as the broker takes at once, so that
///   what waits, waits here, where the two rules below apply, and not in libmosquitto's queue, where a restart's
///   thousands of tag states would hold the next occupancy change back for seconds.
///
/// Publications leave by their ``Publication/Priority``, urgent first, each priority in order (a topic's
/// publications share one); the session's `online` leads, and a control publication enqueued at the end (its
/// `offline`) follows everything held. One exception: while no more QoS 1 messages may be handed over, QoS 0 ones go
/// ahead of them, within their priority too, so that a locator whose acknowledgements are slow (its connection full
/// of readings it has not yet taken) still publishes its positions and metrics. A topic keeps its order through this:
/// a retained topic has at most one unsent publication, and the others' publications share one QoS.
/// In both, a retained publication replaces an unsent one on the same topic (only the newest state of a topic
/// matters, and it keeps its place in the order). What happens past `capacity` other publications is its
/// ``Overflow``: a live service drops the oldest and counts it; a service whose inputs can wait (a replay) holds
/// them back instead (``hasRoom`` turns false, and the shell stops taking inputs until acknowledgements make room),
/// so that nothing is dropped. The outbox is a state machine the session drives; it does no I/O.
///
/// The byte budget (``byteLimit``, the locator's): retained publications are not counted against `capacity` (a
/// topic holds one at most), so a flood of new topics (a million new tag ids, each with its own position and zone
/// summary) would otherwise be held without bound. Each publication held counts its topic's and payload's UTF-8
/// bytes and ``entryOverhead`` for its bookkeeping (``heldBytes``). Past the budget, unsent publications are
/// dropped, each counted in ``OutboxStatistics/shed``: first the oldest of ``Publication/Priority/expendable``
/// priority (the states of tags the map does not name), then the oldest non-retained one. Nothing else is dropped:
/// the session's status, the lease, the zones' occupancy and the named tags' states are as many as the map says, so
/// they may take the outbox past its budget by that much, never more. A dropped clear leaves that tag's retained
/// position at the broker until the next start's leftover sweep clears it.
///
/// An outbox that ``recordsChanges`` lists what it took and released (``Change``), for a shell that keeps the
/// service's non-retained publications on disk (``OutboxJournal``) so that a restart sends them again.
public struct Outbox: Sendable {
    /// When a publication leaves the outbox, and how many it holds.
    public enum Policy: Sendable, Hashable {
        /// Released on the broker's acknowledgement; at most `inFlightLimit` unacknowledged at a time.
        case untilAcknowledged(capacity: Int, inFlightLimit: Int)
        /// Released as soon as the MQTT client has taken it; at most `handOverLimit` QoS 1 messages handed over
        /// and not yet acknowledged at a time (libmosquitto's own in-flight window, and mosquitto's Receive
        /// Maximum, are 20 by default: more would only wait in libmosquitto's queue), of which background ones at
        /// most three quarters.
        case untilHandedOver(capacity: Int, handOverLimit: Int = 20)

        /// Whether a QoS 0 publication's completion (libmosquitto's word that it was written) releases it: only
        /// ``untilAcknowledged`` waits for one; the other lets the client leave them unreported
        /// (`MQTTClientConfiguration.reportsQoS0Completions`).
        public var waitsForQoS0Completions: Bool {
            if case .untilAcknowledged = self { true } else { false }
        }

        /// The most non-retained publications held.
        public var capacity: Int {
            switch self {
            case .untilAcknowledged(let capacity, _), .untilHandedOver(let capacity, _): max(capacity, 1)
            }
        }
    }

    /// What a full outbox does.
    public enum Overflow: Sendable, Hashable {
        /// Drops the oldest non-retained publication for the new one, and counts it (a live radio cannot wait).
        case dropOldest
        /// Keeps everything and reports no room (``Outbox/hasRoom``): the service's source must wait for the broker.
        /// The outbox then holds `capacity` plus what the inputs already taken produce.
        case backPressure
    }

    /// One publication in the outbox.
    public struct Entry: Sendable, Equatable {
        /// The outbox's own number for it, increasing in enqueue order.
        public var id: Int
        /// What to publish.
        public var publication: Publication
        /// The message id of the publish in flight; nil while unsent.
        public var messageID: Int?
        /// Whether it is the session's own (its status), left out of ``Outbox/statistics``.
        public var isControl = false
    }

    /// A change to the service publications held (non-retained, not the session's own), for a journal.
    public enum Change: Sendable, Equatable {
        /// The outbox took this entry.
        case held(Entry)
        /// The entry `id` left: acknowledged, refused, or dropped to make room.
        case released(id: Int)
    }

    /// The policy in force.
    public let policy: Policy
    /// Whether the outbox lists its ``Change``s for ``takeChanges()``.
    public let recordsChanges: Bool
    /// What happens past the capacity.
    public let overflow: Overflow
    /// What happened so far.
    public private(set) var statistics = OutboxStatistics()
    /// The most bytes held (``heldBytes``) before unsent publications are dropped; nil for no budget.
    public let byteLimit: Int?
    /// What the publications held count against ``byteLimit``: their topics' and payloads' UTF-8 bytes, and
    /// ``entryOverhead`` each.
    public private(set) var heldBytes = 0
    /// What a held publication costs besides its topic and payload: its entry, its places in the lanes and the
    /// index of retained topics, and the two strings' heap headers.
    public static let entryOverhead = 256

    private var entries: [Entry] = []
    /// Whether each of `entries` is still held. An entry released out of order (a more urgent one sent past older
    /// ones) is marked here and dropped at the next compaction, instead of being removed from the middle of the
    /// array: at 10,000 positions sent past a waiting event, that was 50 million moves.
    private var alive: [Bool] = []
    /// How many of `entries` from `head` on are released but not yet compacted away.
    private var dead = 0
    /// Index of the first live entry of `entries` (released entries before it wait for compaction).
    private var head = 0
    private var nextID = 0
    /// Ids for ``enqueueFirst(_:)``: negative and decreasing, so that ids stay unique and in order.
    private var nextFrontID = -1
    /// Unsent retained entries by topic, for coalescing.
    private var unsentRetained: [String: Int] = [:]
    private var heldNonRetained = 0
    private var inFlightCount = 0
    /// Ids that were in flight when a connection dropped, so that their next publish counts as a re-send.
    private var interrupted: Set<Int> = []
    private var changes: [Change] = []
    /// The unsent entries' ids by the lane they leave in (``lane(of:)``), each in id order.
    private var lanes = Array(repeating: [Int](), count: 2 * Self.laneGroups)
    /// Index of the first live id of each lane.
    private var laneHeads = Array(repeating: 0, count: 2 * Self.laneGroups)
    /// The lanes come in pairs, QoS 1 and QoS 0 (``lane(of:)``): the session's leading status, then one pair per
    /// priority, the last shared with the control publications enqueued at the end.
    private static let laneGroups = Publication.Priority.allCases.count + 1
    /// Message ids of QoS 1 publications handed over and not yet acknowledged (``Policy/untilHandedOver(capacity:handOverLimit:)``).
    private var handedOver: Set<Int> = []

    /// An empty outbox; one that `recordsChanges` lists them for ``takeChanges()``; with a `byteLimit`, one that drops
    /// unsent publications past it (see the type's overview).
    public init(policy: Policy, overflow: Overflow = .dropOldest, recordsChanges: Bool = false, byteLimit: Int? = nil) {
        self.policy = policy
        self.overflow = overflow
        self.recordsChanges = recordsChanges
        self.byteLimit = byteLimit.map { max($0, 0) }
    }

    /// What a publication counts against ``byteLimit``.
    public static func cost(of publication: Publication) -> Int {
        entryOverhead + publication.topic.name.utf8.count + publication.payload.utf8.count
    }

    /// The changes since the last call, oldest first (none unless ``recordsChanges``).
    public mutating func takeChanges() -> [Change] {
        defer { changes.removeAll(keepingCapacity: true) }
        return changes
    }

    /// How many publications are held, sent or not.
    public var count: Int { entries.count - head - dead }
    /// Whether nothing waits for sending or release.
    public var isEmpty: Bool { count == 0 }
    /// How many are published and not yet released (and, handed over, not yet acknowledged).
    public var inFlight: Int { inFlightCount + handedOver.count }
    /// The held entries, oldest first.
    public var held: [Entry] { liveIndices.map { entries[$0] } }
    /// Whether the service may produce more: always with ``Overflow/dropOldest``; with ``Overflow/backPressure``,
    /// while fewer than `capacity` non-retained publications are held.
    public var hasRoom: Bool { overflow == .dropOldest || heldNonRetained < policy.capacity }
    /// The service's publications held at this moment (the session's own status left out).
    public var heldPublications: Int { held.count { !$0.isControl } }

    /// Adds a publication at the end (or in place of an unsent retained one on the same topic); drops the oldest
    /// non-retained publication when full. A `control` publication (the session's status) is not counted.
    public mutating func enqueue(_ publication: Publication, control: Bool = false) {
        if publication.retain, let id = unsentRetained[publication.topic.name], let index = index(of: id) {
            heldBytes += Self.cost(of: publication) - Self.cost(of: entries[index].publication)
            replace(at: index, with: publication)
            if !control { statistics.coalesced += 1 }
            shedOverBudget()
            statistics.peakBytes = max(statistics.peakBytes, heldBytes)
            return
        }
        let id = nextID
        nextID += 1
        heldBytes += Self.cost(of: publication)
        entries.append(Entry(id: id, publication: publication, messageID: nil, isControl: control))
        alive.append(true)
        lanes[lane(of: entries[entries.count - 1])].append(id)
        if recordsChanges, !control, !publication.retain, let entry = entries.last { changes.append(.held(entry)) }
        if publication.retain {
            unsentRetained[publication.topic.name] = id
        } else {
            heldNonRetained += 1
            if overflow == .dropOldest, heldNonRetained > policy.capacity,
                let oldest = liveIndices.first(where: { !entries[$0].publication.retain })
            {
                remove(at: oldest)
                statistics.dropped += 1
            }
        }
        shedOverBudget()
        statistics.peak = max(statistics.peak, count)
        statistics.peakBytes = max(statistics.peakBytes, heldBytes)
    }

    /// Adds a control publication (the session's status, which must lead) before every other held one. An unsent
    /// retained one on the same topic (a standby's `online` when it took over, say) gives way to it: kept in its
    /// place, it would leave in its own lane, behind whatever was more urgent.
    public mutating func enqueueFirst(_ publication: Publication) {
        if publication.retain, let id = unsentRetained[publication.topic.name], let index = index(of: id) {
            if !entries[index].isControl { statistics.coalesced += 1 }
            remove(at: index)
        }
        let id = min(nextFrontID, (liveIndices.first.map { entries[$0].id } ?? nextID) - 1)
        nextFrontID = id - 1
        heldBytes += Self.cost(of: publication)
        if head > 0 {
            head -= 1
            entries[head] = Entry(id: id, publication: publication, messageID: nil, isControl: true)
            alive[head] = true
        } else {
            entries.insert(Entry(id: id, publication: publication, messageID: nil, isControl: true), at: 0)
            alive.insert(true, at: 0)
        }
        let lane = lane(of: entries[head])
        if laneHeads[lane] > 0 {
            laneHeads[lane] -= 1
            lanes[lane][laneHeads[lane]] = id
        } else {
            lanes[lane].insert(id, at: 0)
        }
        if publication.retain { unsentRetained[publication.topic.name] = id } else { heldNonRetained += 1 }
        statistics.peak = max(statistics.peak, count)
        statistics.peakBytes = max(statistics.peakBytes, heldBytes)
    }

    /// Drops unsent publications while more bytes are held than ``byteLimit`` allows: the oldest expendable one (an
    /// unnamed tag's state), else the oldest non-retained one; never the others (see the type's overview).
    private mutating func shedOverBudget() {
        guard let byteLimit else { return }
        while heldBytes > byteLimit {
            let group = Self.group(of: .expendable)
            // Entries are in id order, so the lower index of the two lanes' oldest is the older.
            let expendable = [oldest(inLane: 2 * group), oldest(inLane: 2 * group + 1)].compactMap { $0 }.min()
            guard
                let victim = expendable
                    ?? (heldNonRetained == 0
                        ? nil
                        : liveIndices.first {
                            !entries[$0].publication.retain && !entries[$0].isControl && entries[$0].messageID == nil
                        })
            else { return }
            remove(at: victim)
            statistics.shed += 1
        }
    }

    /// The next publication to send, if the in-flight limit allows and one is unsent: the oldest of the most urgent
    /// priority, or, while no QoS 1 message may be handed over, the oldest QoS 0 one of the most urgent priority that
    /// holds one.
    public func nextToSend() -> Entry? {
        let qos1Blocked: Bool
        let backgroundBlocked: Bool
        switch policy {
        case .untilAcknowledged(_, let limit):
            if inFlightCount >= max(limit, 1) { return nil }
            qos1Blocked = false
            backgroundBlocked = false
        case .untilHandedOver(_, let limit):
            qos1Blocked = handedOver.count >= max(limit, 1)
            // A quarter of the window is kept from background publications, so that what someone waits on (a
            // zone's occupancy) is handed over at once, not after the acknowledgements of a burst of tags' states.
            backgroundBlocked = handedOver.count >= max(limit - limit / 4, 1)
        }
        for group in 0..<Self.laneGroups {
            // The tags' states, named or not, and what follows them share the background's part of the window.
            let blocked = group >= Self.group(of: .background) ? backgroundBlocked : qos1Blocked
            let confirmed = oldest(inLane: 2 * group)
            let quick = oldest(inLane: 2 * group + 1)
            switch (confirmed, quick) {
            case (nil, nil): continue
            case (let confirmed?, nil):
                if blocked { continue }
                return entries[confirmed]
            case (nil, let quick?): return entries[quick]
            case (let confirmed?, let quick?):
                return blocked || entries[quick].id < entries[confirmed].id ? entries[quick] : entries[confirmed]
            }
        }
        return nil
    }

    /// The index in `entries` of a lane's oldest entry, if it holds one.
    private func oldest(inLane lane: Int) -> Int? {
        guard laneHeads[lane] < lanes[lane].count else { return nil }
        return index(of: lanes[lane][laneHeads[lane]])
    }

    /// The client took the entry `id` as message `messageID`.
    public mutating func sent(id: Int, messageID: Int) {
        guard let index = index(of: id), entries[index].messageID == nil else { return }
        let counted = !entries[index].isControl
        if counted { statistics.published += 1 }
        if interrupted.remove(id) != nil, counted { statistics.republished += 1 }
        if entries[index].publication.retain, unsentRetained[entries[index].publication.topic.name] == id {
            unsentRetained.removeValue(forKey: entries[index].publication.topic.name)
        }
        switch policy {
        case .untilHandedOver:
            if entries[index].publication.qos == .atLeastOnce { handedOver.insert(messageID) }
            remove(at: index)
        case .untilAcknowledged:
            leaveLane(entries[index])
            entries[index].messageID = messageID
            inFlightCount += 1
        }
    }

    /// Releases the entry published as `messageID`; returns it, or nil for an id not in flight (an acknowledgement
    /// of a publish from before a reconnect, whose entry was sent again under a new id).
    @discardableResult
    public mutating func acknowledged(messageID: Int, success: Bool) -> Entry? {
        handedOver.remove(messageID)
        guard case .untilAcknowledged = policy,
            let index = liveIndices.first(where: { entries[$0].messageID == messageID })
        else { return nil }
        let entry = entries[index]
        remove(at: index)
        if !entry.isControl {
            statistics.acknowledged += 1
            if !success { statistics.refused += 1 }
        }
        return entry
    }

    /// Gives up on the entry `id` (the client refused it for good, say as too large); counted as refused.
    public mutating func discard(id: Int) {
        guard let index = index(of: id) else { return }
        if !entries[index].isControl { statistics.refused += 1 }
        remove(at: index)
    }

    /// Forgets every unsent publication of the service (the session's own status stays): a locator that lost its
    /// lease must not publish what it said while it still held it. Returns how many were discarded.
    @discardableResult
    public mutating func discardUnsent() -> Int {
        let doomed = held.filter { $0.messageID == nil && !$0.isControl }.map(\.id)
        for id in doomed {
            if let index = index(of: id) { remove(at: index) }
        }
        statistics.discarded += doomed.count
        return doomed.count
    }

    /// The connection dropped: everything in flight is unsent again, to be published after the reconnect. (What
    /// was handed over is libmosquitto's to send again; its window starts empty.)
    public mutating func connectionLost() {
        handedOver.removeAll()
        guard inFlightCount > 0 else { return }
        for index in liveIndices where entries[index].messageID != nil {
            entries[index].messageID = nil
            interrupted.insert(entries[index].id)
        }
        inFlightCount = 0
        // Back into their lanes, in id order: rebuilt from the entries, which are.
        lanes = Array(repeating: [], count: lanes.count)
        laneHeads = Array(repeating: 0, count: lanes.count)
        for entry in held where entry.messageID == nil { lanes[lane(of: entry)].append(entry.id) }
    }

    // MARK: - Storage

    /// Entries are in id order, so a binary search finds one.
    private func index(of id: Int) -> Int? {
        var low = head
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low < entries.count && entries[low].id == id && alive[low] ? low : nil
    }

    /// The indices of the held entries in `entries`, oldest first.
    private var liveIndices: LazyFilterSequence<Range<Int>> {
        (head..<entries.count).lazy.filter { alive[$0] }
    }

    /// The lane an entry leaves in. Its group: the first for the session's leading status (``enqueueFirst(_:)``,
    /// negative ids), the last for a control publication enqueued at the end (the goodbye follows everything held),
    /// else its priority's; in the group, the QoS 1 lane, or the QoS 0 one.
    private func lane(of entry: Entry) -> Int {
        let group =
            entry.isControl ? (entry.id < 0 ? 0 : Self.laneGroups - 1) : Self.group(of: entry.publication.priority)
        return 2 * group + (entry.publication.qos == .atMostOnce ? 1 : 0)
    }

    /// The lane group of a publication's priority: after the session's leading status, in priority order.
    private static func group(of priority: Publication.Priority) -> Int { priority.rawValue + 1 }

    /// A newer retained state in place of an unsent one: same id, same priority (a topic keeps its priority); in the
    /// other lane of its group if its QoS differs.
    private mutating func replace(at index: Int, with publication: Publication) {
        let previous = entries[index]
        entries[index].publication = publication
        entries[index].publication.priority = previous.publication.priority
        let lane = lane(of: entries[index])
        guard lane != self.lane(of: previous) else { return }
        leaveLane(previous)
        lanes[lane].insert(previous.id, at: place(of: previous.id, inLane: lane))
    }

    /// Where `id` is, or would go, in a lane's live ids, which are in id order.
    private func place(of id: Int, inLane lane: Int) -> Int {
        let ids = lanes[lane]
        var low = laneHeads[lane]
        var high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Takes an unsent entry's id out of its lane (the lane's oldest, nearly always).
    private mutating func leaveLane(_ entry: Entry) {
        guard entry.messageID == nil else { return }
        let lane = lane(of: entry)
        let ids = lanes[lane]
        let low = place(of: entry.id, inLane: lane)
        guard low < ids.count, ids[low] == entry.id else { return }
        if low == laneHeads[lane] {
            laneHeads[lane] += 1
            if laneHeads[lane] == ids.count {
                lanes[lane].removeAll(keepingCapacity: true)
                laneHeads[lane] = 0
            } else if laneHeads[lane] >= 64, laneHeads[lane] * 2 >= ids.count {
                lanes[lane].removeFirst(laneHeads[lane])
                laneHeads[lane] = 0
            }
        } else {
            lanes[lane].remove(at: low)
        }
    }

    private mutating func remove(at index: Int) {
        let entry = entries[index]
        heldBytes -= Self.cost(of: entry.publication)
        leaveLane(entry)
        if entry.messageID != nil { inFlightCount -= 1 }
        if entry.publication.retain {
            if unsentRetained[entry.publication.topic.name] == entry.id {
                unsentRetained.removeValue(forKey: entry.publication.topic.name)
            }
        } else {
            heldNonRetained -= 1
        }
        interrupted.remove(entry.id)
        if recordsChanges, !entry.isControl, !entry.publication.retain { changes.append(.released(id: entry.id)) }
        alive[index] = false
        if index == head {
            head += 1
            while head < entries.count, !alive[head] {
                head += 1
                dead -= 1
            }
            if head == entries.count {
                entries.removeAll(keepingCapacity: true)
                alive.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= entries.count {
                entries.removeFirst(head)
                alive.removeFirst(head)
                head = 0
            }
        } else {
            dead += 1
            if dead >= 64, dead * 2 >= entries.count - head {
                // Half of what is left is released: keep the rest, in order.
                entries = liveIndices.map { entries[$0] }
                alive = Array(repeating: true, count: entries.count)
                head = 0
                dead = 0
            }
        }
    }
}

/// Counts of what an ``Outbox`` did with the service's publications (the session's status messages left out).
public struct OutboxStatistics: Sendable, Hashable {
    /// Publishes handed to the client, re-sends included.
    public var published = 0
    /// Publishes sent again after a reconnect because their acknowledgement had not arrived.
    public var republished = 0
    /// Publications released by an acknowledgement.
    public var acknowledged = 0
    /// Acknowledgements that carried a failure reason, and publications the client refused for good.
    public var refused = 0
    /// Publications dropped, oldest first, because the outbox was full.
    public var dropped = 0
    /// Publications discarded unsent by ``Outbox/discardUnsent()`` (a locator that stood down).
    public var discarded = 0
    /// Retained publications replaced by a newer one on the same topic before they were sent.
    public var coalesced = 0
    /// Publications dropped unsent because the outbox was over its byte budget (``Outbox/byteLimit``).
    public var shed = 0
    /// The most publications held at once.
    public var peak = 0
    /// The most bytes held at once (``Outbox/heldBytes``).
    public var peakBytes = 0

    public init() {}
}
