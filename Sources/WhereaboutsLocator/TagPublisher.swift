import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

/// What the locator publishes of each tag, and when: its position, and its zone summary (``TagZone``, with its
/// plain-text location), both retained.
///
/// The publish policy:
/// - A position goes out when the tag was never published, changed zone or floor, moved ``positionMinimumMove``
///   metres, or was last published ``positionHeartbeat`` seconds ago; a lost tag's retained position is cleared, so
///   that no dashboard shows a ghost.
/// - A zone summary goes out only when the tag's zone or its state changes: `unknown` while the agents that would
///   hear it are offline, `lost` when it is not heard while they are up. Summaries are held back until the warm-up
///   ends, like occupancy, so that a restart does not make every tag pass through "in no zone".
/// - What an earlier run (or the map before a reload) left retained is cleared when its tag is not heard again within
///   the tag timeout; a summary is said `lost` instead for a tag the map names.
/// - Only the tags on the floors this locator owns are published; a tag that leaves them is handed over without
///   clearing anything, as the locator of its new floor speaks for it.
/// - A tag the map names publishes at ``Publication/Priority/background`` priority, any other at
///   ``Publication/Priority/expendable``: what waits for the broker leaves named tags first, and a flood of new tag
///   ids, past the outbox's byte budget, sheds only the unnamed tags' states.
struct TagPublisher: Sendable {
    /// The most inherited positions remembered (a bound against a flood of retained topics).
    static let inheritedLimit = 100_000

    /// A tag's position is republished at least this often (seconds) while it is tracked …
    let positionHeartbeat: Double
    /// … and otherwise only when it moved this far (metres) or changed zone or floor.
    let positionMinimumMove: Double
    private let topics: Topics
    private var map: FloorMap
    private var share: FloorShare?
    /// Each zone's name, for payloads (a search of the map's zones for every position was measurable).
    private var zoneNames: [ZoneKey: String] = [:]
    /// Each agent's id, by its index in the map, checked once for payloads (nil for one that is no valid id).
    private var agentIDs: [AgentID?] = []

    private var lastPositions: [TagIdentity: PublishedPosition] = [:]
    /// Retained positions an earlier run (or the map before a reload) left, by tag, with when they were learned.
    private var inherited: [TagIdentity: Double] = [:]
    /// The zone summary last published for each tag, tracked or lost.
    private var lastZones: [TagIdentity: TagZone] = [:]
    /// The floor of each tag the engine tracks now (the ones not lost).
    private var trackedFloors: [TagIdentity: UInt16] = [:]
    /// Since when each floor has had an agent online (a floor with none is absent).
    private var floorOnlineSince: [UInt16: Double] = [:]
    /// When the tags' zone states were last re-evaluated against the agents' liveness.
    private var lastZoneSweep = -Double.infinity

    private struct PublishedPosition: Sendable {
        var payload: TagPosition
        var time: Double
        /// The tag's position topic, built once (the tag's identity written out) and kept for its next publications.
        var topic: Topic
    }

    /// What a tracked tag's summary says, but for the names.
    private typealias Placement = (state: TagZone.State, floor: UInt16, zone: ZoneKey?)

    init(map: FloorMap, share: FloorShare?, topics: Topics, positionHeartbeat: Double, positionMinimumMove: Double) {
        self.topics = topics
        self.map = map
        self.share = share
        self.positionHeartbeat = positionHeartbeat
        self.positionMinimumMove = positionMinimumMove
        names(map)
    }

    /// The floor the engine tracks a tag on now; nil for a tag not tracked.
    func floor(of tag: TagIdentity) -> UInt16? { trackedFloors[tag] }

    /// Takes a new map (and its share): the engine starts over, so every tag published so far is published afresh
    /// as it is heard again (its summary carried names from the old map), and cleared (or said lost) if it is not
    /// heard within the tag timeout.
    mutating func replaceMap(_ newMap: FloorMap, share newShare: FloorShare?, now: Double) {
        map = newMap
        share = newShare
        names(newMap)
        for tag in lastPositions.keys { inherited[tag] = now }
        lastPositions.removeAll()
        for tag in lastZones.keys { inherited[tag] = now }
        lastZones.removeAll()
        trackedFloors.removeAll()
    }

    private mutating func names(_ map: FloorMap) {
        zoneNames = Dictionary(map.zones.map { ($0.key, $0.name) }, uniquingKeysWith: { first, _ in first })
        agentIDs = map.agents.map { AgentID($0.id) }
    }

    /// Every (re)connection: every position and summary this locator published, again.
    func connected() -> [Action] {
        var actions: [Action] = []
        for published in lastPositions.values.sorted(by: { $0.payload.tag < $1.payload.tag }) {
            actions.append(
                .publish(
                    Publication(
                        topic: topics.position(tag: published.payload.tag), payload: published.payload.payload,
                        qos: .atLeastOnce, retain: true, priority: priority(of: published.payload.tag))))
        }
        for tag in lastZones.keys.sorted() {
            if let summary = lastZones[tag] { actions += zonePublications(summary) }
        }
        return actions
    }

    // MARK: - Positions

    /// The position to publish for the estimate at `index`, on a floor this locator owns, if it is news.
    ///
    /// Decided on the estimate's fields before the estimate is passed on whole (a copy, its arrays retained): most
    /// estimates, of tags standing still, publish nothing.
    mutating func position(of estimates: [TagEstimate], at index: Int, now: Double) -> Publication? {
        let slot = lastPositions.index(forKey: estimates[index].tag)
        guard
            positionIsDue(
                after: slot, position: estimates[index].position, zone: estimates[index].zone,
                floor: estimates[index].floor, now: now)
        else { return nil }
        return positionPublication(estimates[index], replacing: slot, now: now)
    }

    /// A tag estimated on another share's floor: that locator publishes it now. Nothing is cleared (it would race the
    /// new owner's publication); our record goes, so that we publish afresh if the tag comes back.
    mutating func positionHandedOver(_ tag: TagIdentity) {
        lastPositions[tag] = nil
    }

    /// The positions of tags another locator wrote over, said again.
    func positions(of tags: [TagIdentity]) -> [Action] {
        tags.compactMap { tag in
            lastPositions[tag].map {
                .publish(
                    Publication(
                        topic: $0.topic, payload: $0.payload.payload, qos: .atLeastOnce, retain: true,
                        priority: priority(of: tag)))
            }
        }
    }

    /// Clears the retained positions of the tags that left, so that no dashboard shows a ghost.
    mutating func clearPositions(of lostTags: [TagIdentity]) -> [Action] {
        var actions: [Action] = []
        for tag in lostTags where lastPositions.removeValue(forKey: tag) != nil {
            actions.append(.publish(clearing(topics.position(tag: tag), of: tag)))
        }
        return actions
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
            || last.distance(to: position) >= positionMinimumMove
            || now - lastPositions.values[slot].time >= positionHeartbeat
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
        return Publication(
            topic: topic, payload: payload.payload, qos: .atMostOnce, retain: true, priority: priority(of: estimate.tag)
        )
    }

    /// Makes `published` the record of `payload`, published at `time`; returns its topic.
    private static func record(_ payload: TagPosition, time: Double, in published: inout PublishedPosition) -> Topic {
        published.payload = payload
        published.time = time
        return published.topic
    }

    // MARK: - Zone summaries

    /// Publishes the zone summaries that changed: those of the tags just estimated or lost, and, once a second, any
    /// whose state the agents' liveness changed (a zone whose agents went offline makes its tags `unknown`). Before
    /// the warm-up ends (`isWarm` false) only the tags' floors are noted.
    mutating func zoneSummaries(_ update: EngineUpdate, engine: LocatorEngine, isWarm: Bool, now: Double) -> [Action] {
        refreshOnlineFloors(engine: engine, now: now)
        guard isWarm else {
            // Held back like occupancy: a tag is placed in its zone only after a few readings, and a restart must
            // not make every tag pass through "in no zone". The first sweep after the warm-up publishes them.
            for index in update.estimates.indices {
                trackedFloors[update.estimates[index].tag] = update.estimates[index].floor
            }
            for tag in update.lostTags { trackedFloors[tag] = nil }
            return []
        }
        var actions: [Action] = []
        // By index: only the tag and its floor are read (taking each estimate out copied it, buffers and all).
        for index in update.estimates.indices {
            let (tag, floor) = (update.estimates[index].tag, update.estimates[index].floor)
            trackedFloors[tag] = floor
            guard share.owns(floor: floor) else {
                // Handed over: the owner of its floor publishes its summary from now on.
                lastZones[tag] = nil
                continue
            }
            actions += publishTracked(tag, floor: floor, engine: engine)
        }
        for tag in update.lostTags {
            let floor = trackedFloors.removeValue(forKey: tag) ?? lastZones[tag]?.floor
            // Lost on another share's floor: its locator says so. (The whole site's locator owns every floor.)
            if share != nil, floor.map({ !share.owns(floor: $0) }) ?? (lastZones[tag] == nil) { continue }
            let summary = lostSummary(tag, floor: floor, unknown: floor.map { floorOnlineSince[$0] == nil } ?? true)
            if summary.state == .lost, map.knownTag(tag) == nil {
                actions += clearZone(tag)
            } else {
                actions += publishZone(summary)
            }
        }
        guard now - lastZoneSweep >= LocatorEngine.sweepInterval else { return actions }
        lastZoneSweep = now
        return actions + sweep(engine: engine, now: now)
    }

    /// The summaries the agents' liveness changed: tracked tags whose zone's agents went offline or came back, and
    /// tags lost while their agents were down that are still not heard a tag timeout after they came back.
    private mutating func sweep(engine: LocatorEngine, now: Double) -> [Action] {
        var actions: [Action] = []
        // Only the summaries that change are sorted: on a campus a handful a second, where sorting every tracked tag
        // took milliseconds. A loop, not `filter`: a closure calling this mutating method's `self` copied the whole
        // pipeline for each tag (3 % of the live locator's CPU at 10,000 tags).
        var changed: [(tag: TagIdentity, floor: UInt16)] = []
        for (tag, floor) in trackedFloors where share.owns(floor: floor) {
            if isNew(trackedPlacement(tag, floor: floor, engine: engine), for: tag) { changed.append((tag, floor)) }
        }
        for (tag, floor) in changed.sorted(by: { $0.tag < $1.tag }) {
            actions += publishTracked(tag, floor: floor, engine: engine)
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

    /// The summaries of tags another locator wrote over, said again while this one owns their floor.
    func zoneSummaries(of tags: [TagIdentity]) -> [Action] {
        var actions: [Action] = []
        for tag in tags {
            guard let summary = lastZones[tag], trackedFloors[tag].map({ share.owns(floor: $0) }) == true else {
                continue
            }
            actions += zonePublications(summary)
        }
        return actions
    }

    /// Notes which floors have an agent online now, and since when.
    private mutating func refreshOnlineFloors(engine: LocatorEngine, now: Double) {
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
    private mutating func publishTracked(_ tag: TagIdentity, floor: UInt16, engine: LocatorEngine) -> [Action] {
        let placement = trackedPlacement(tag, floor: floor, engine: engine)
        guard isNew(placement, for: tag) else { return [] }
        return publishZone(trackedSummary(tag, placement: placement))
    }

    /// Whether a placement differs from the tag's summary last published.
    private func isNew(_ placement: Placement, for tag: TagIdentity) -> Bool {
        guard let last = lastZones[tag] else { return true }
        return last.state != placement.state || last.floor != placement.floor || last.zone != placement.zone?.minor
    }

    private func trackedPlacement(_ tag: TagIdentity, floor: UInt16, engine: LocatorEngine) -> Placement {
        let zone = engine.zone(of: tag)
        let unknown = zone.map { engine.state(of: $0) != .known } ?? (floorOnlineSince[floor] == nil)
        return (unknown ? .unknown : .known, zone?.floor ?? floor, zone)
    }

    /// The summary of a tracked tag: its zone, `unknown` while the zone's (or, in no zone, the floor's) agents are
    /// offline; a known one says where the tag was last published (positions go out before summaries), rounded.
    private func trackedSummary(_ tag: TagIdentity, placement: Placement) -> TagZone {
        let position = placement.state == .known ? lastPositions[tag]?.payload : nil
        return TagZone(
            tag: tag, name: map.knownTag(tag)?.name, state: placement.state, floor: placement.floor,
            floorName: map.floor(major: placement.floor)?.name, zone: placement.zone?.minor,
            // A tenth of a metre says enough for a room, and reads cleanly.
            zoneName: placement.zone.flatMap { zoneNames[$0] }, x: position.map { $0.x.rounded(toDecimals: 1) },
            y: position.map { $0.y.rounded(toDecimals: 1) },
            accuracy: position.map { $0.accuracy.rounded(toDecimals: 1) },
            probability: position?.probability.map { $0.rounded(toDecimals: 2) })
    }

    /// The summary of a tag no longer heard: `lost`, or `unknown` (keeping its floor) when no agent could hear it.
    private func lostSummary(_ tag: TagIdentity, floor: UInt16?, unknown: Bool) -> TagZone {
        TagZone(
            tag: tag, name: map.knownTag(tag)?.name, state: unknown ? .unknown : .lost, floor: unknown ? floor : nil,
            floorName: unknown ? floor.flatMap { map.floor(major: $0)?.name } : nil, zone: nil, zoneName: nil)
    }

    /// Publishes a summary (and its plain-text location) unless it is the one last published.
    private mutating func publishZone(_ summary: TagZone) -> [Action] {
        guard lastZones[summary.tag] != summary else { return [] }
        lastZones[summary.tag] = summary
        return zonePublications(summary)
    }

    private func zonePublications(_ summary: TagZone) -> [Action] {
        let priority = priority(of: summary.tag)
        return [
            .publish(
                Publication(
                    topic: topics.tagZone(tag: summary.tag), payload: summary.payload, qos: .atLeastOnce, retain: true,
                    priority: priority)),
            .publish(
                Publication(
                    topic: topics.tagLocation(tag: summary.tag), payload: summary.location, qos: .atLeastOnce,
                    retain: true, priority: priority)),
        ]
    }

    /// Clears a tag's retained summary and location (a tag the map does not name, gone).
    private mutating func clearZone(_ tag: TagIdentity) -> [Action] {
        lastZones[tag] = nil
        return [
            .publish(clearing(topics.tagZone(tag: tag), of: tag)),
            .publish(clearing(topics.tagLocation(tag: tag), of: tag)),
        ]
    }

    // MARK: - What others left

    /// A retained position of `tag` read back: an earlier run's (ours are not sent back to us), cleared by
    /// ``clearStale(now:)`` unless the tag is heard again in time; on a split site, possibly another locator's.
    mutating func retainedPosition(
        _ tag: TagIdentity, payload: [UInt8], arbiter: inout FloorArbiter, engine: inout LocatorEngine, now: Double
    ) {
        if let share {
            let floor =
                payload.isEmpty ? nil : (try? TagPosition(payload: String(decoding: payload, as: UTF8.self)))?.floor
            if let floor, share.hears(floor: floor) {
                // Where the locator that placed it had it: a tag this one has not placed yet starts there, so
                // that a restarted locator does not decide its floor apart from its neighbour's.
                engine.expectFloor(floor, of: tag, at: now)
            } else if let floor, trackedFloors[tag].map({ share.owns(floor: $0) }) == true {
                // On a floor this one does not hear (a lift ride past the margin): it left ours now. Its exit
                // goes out with the next update; nothing of it is cleared or said again, as the other speaks.
                engine.handOver(tag, at: now)
                trackedFloors[tag] = floor
                lastPositions[tag] = nil
                lastZones[tag] = nil
                return
            }
            let verdict = arbiter.verdict(on: tag, floor: floor, published: lastPositions[tag] != nil, map: map)
            guard adopt(tag, verdict) else { return }
        }
        if !payload.isEmpty, lastPositions[tag] == nil { inherit(tag, now: now) }
    }

    /// A retained zone summary of `tag` read back: like a position, said lost (or cleared, for a tag the map does not
    /// name) unless the tag is heard in time.
    mutating func retainedZone(_ tag: TagIdentity, payload: [UInt8], arbiter: inout FloorArbiter, now: Double) {
        if share != nil {
            let summary = payload.isEmpty ? nil : try? TagZone(payload: String(decoding: payload, as: UTF8.self))
            let publishes = lastZones[tag] != nil && trackedFloors[tag].map { share.owns(floor: $0) } == true
            let verdict = arbiter.verdict(on: tag, floor: summary?.floor, published: publishes, map: map)
            guard adopt(tag, verdict) else {
                // Another locator speaks for the tag now: what we last said of it is no longer ours to repeat.
                if !publishes, summary?.floor.map({ !share.owns(floor: $0) }) == true { lastZones[tag] = nil }
                return
            }
        }
        if !payload.isEmpty, lastZones[tag] == nil { inherit(tag, now: now) }
    }

    /// Whether the arbiter's verdict makes the retained state ours to clean up; forgets the leftover it gave away.
    private mutating func adopt(_ tag: TagIdentity, _ verdict: FloorArbiter.Verdict) -> Bool {
        switch verdict {
        case .leftover: return true
        case .contested: return false
        case .others(let forget):
            if forget { inherited[tag] = nil }
            return false
        }
    }

    private mutating func inherit(_ tag: TagIdentity, now: Double) {
        guard inherited.count < Self.inheritedLimit else { return }
        inherited[tag] = inherited[tag] ?? now
    }

    /// Clears the retained positions no tracked tag stands behind any more: those an earlier run left (or this run
    /// published under the map before a reload) whose tag has not been heard again within the tag timeout. Their
    /// zone summaries say `lost` (or `unknown`, when no agent is online) for a tag the map names, and are cleared for
    /// any other.
    mutating func clearStale(now: Double) -> [Action] {
        let timeout = map.model.tagTimeout
        var actions: [Action] = []
        for (tag, since) in inherited where now - since >= timeout {
            inherited[tag] = nil
            // Heard by us on another share's floor: its locator speaks for the tag.
            if let floor = trackedFloors[tag], !share.owns(floor: floor) { continue }
            if lastPositions[tag] == nil { actions.append(.publish(clearing(topics.position(tag: tag), of: tag))) }
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

    private func clearing(_ topic: Topic, of tag: TagIdentity) -> Publication {
        Publication(topic: topic, payload: "", qos: .atLeastOnce, retain: true, priority: priority(of: tag))
    }

    /// The priority of a tag's publications: the map's named tags before the others, which an outbox over its byte
    /// budget may shed (``Publication/Priority/expendable``).
    private func priority(of tag: TagIdentity) -> Publication.Priority {
        map.knownTag(tag) == nil ? .expendable : .background
    }
}
