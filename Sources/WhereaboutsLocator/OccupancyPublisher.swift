import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

/// What the locator publishes of its zones: each zone's occupancy (retained) and the enter/exit events, held back
/// during a warm-up so that a restart never publishes a false empty.
///
/// The warm-up counts from the first batch (or recorded reading) taken after the start or a reload
/// (``batchTaken(now:)``): counted from the start, a locator slow to get its first readings (a loaded machine, a
/// backlog to read after a restart) ended its warm-up before it had placed its tags, and published their zones empty.
/// Until it ends, the retained values of the previous run stand. If no batch comes at all, each zone whose agents stay
/// silent for their timeout is published `unknown` once, as it would be had they fallen silent in a run: no count of
/// the previous run stands for good. Only the zones on the floors this locator owns are published.
struct OccupancyPublisher: Sendable {
    /// Seconds during which occupancy is held back, counted from the first batch.
    let warmUp: Double
    private let topics: Topics
    private let map: FloorMap
    private let share: FloorShare?
    /// Each zone's name, for events (a search of the map's zones for every event was measurable).
    private let zoneNames: [ZoneKey: String]
    /// When the first batch was taken since the start or the last reload: the warm-up counts from here.
    private var firstBatchTime: Double?
    /// Whether the warm-up is over: occupancy changes are published as they come.
    private(set) var isWarm = false
    /// When the pipeline started (its first tick) or took this map.
    private var startTime: Double?
    /// The zones published `unknown` because no batch came for an agent timeout after the start.
    private var unheardZones: Set<ZoneKey> = []

    /// A publisher for `map`; `startTime` nil when the start is the first tick (a reload passes its own time).
    init(map: FloorMap, share: FloorShare?, topics: Topics, warmUp: Double, startTime: Double? = nil) {
        self.map = map
        self.share = share
        self.topics = topics
        self.warmUp = warmUp
        self.startTime = startTime
        zoneNames = Dictionary(map.zones.map { ($0.key, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    /// A batch (or recorded reading) was taken: the first one starts the warm-up.
    mutating func batchTaken(now: Double) {
        if firstBatchTime == nil { firstBatchTime = now }
    }

    /// After the engine's update: its events on our floors, then the occupancy due: every zone's at the end of the
    /// warm-up, the changes after it, or before any batch the zones that cannot be known.
    mutating func tick(_ update: EngineUpdate, engine: LocatorEngine, now: Double) -> [Action] {
        var actions: [Action] = []
        for event in update.events where share.owns(floor: event.zone.floor) {
            actions += eventPublications(event)
        }
        // Events and occupancy first: they are what dashboards wait for; positions follow.
        if startTime == nil { startTime = now }
        if !isWarm, let firstBatchTime, now - firstBatchTime >= warmUp {
            isWarm = true
            actions += owned(engine.allOccupancy).map { .publish(occupancyPublication($0, now: now)) }
        } else if isWarm {
            for change in update.occupancyChanges where share.owns(floor: change.zone.floor) {
                actions.append(.publish(occupancyPublication(change, now: now)))
            }
        } else if firstBatchTime == nil, let startTime, now - startTime >= max(warmUp, map.model.agentTimeout) {
            // Not one batch since the start. A zone whose agents have all been silent for their timeout (a status
            // message counts as a sign of life) cannot be known: a running locator would have said so by now, and
            // the counts of the previous run must not stand. A zone is said unknown once; nothing else is said
            // before the warm-up that follows the first batch.
            let newlyUnknown = unheard(engine.allOccupancy).filter { !unheardZones.contains($0.zone) }
            unheardZones.formUnion(newlyUnknown.map(\.zone))
            actions += newlyUnknown.map { .publish(occupancyPublication($0, now: now)) }
        }
        return actions
    }

    /// Every (re)connection: the occupancy of every zone we publish once warm, or the zones said unknown before.
    func connected(engine: LocatorEngine, now: Double) -> [Action] {
        if isWarm {
            return owned(engine.allOccupancy).map { .publish(occupancyPublication($0, now: now)) }
        }
        guard !unheardZones.isEmpty else { return [] }
        return unheard(engine.allOccupancy).filter { unheardZones.contains($0.zone) }.map {
            .publish(occupancyPublication($0, now: now))
        }
    }

    /// A retained occupancy an earlier run (or an earlier map) published: cleared for a zone this map does not have,
    /// so that no dashboard keeps showing a room that is gone.
    func retainedOccupancy(floor: UInt16, zone: UInt16, payload: [UInt8]) -> [Action] {
        guard !payload.isEmpty, !map.zones.contains(where: { $0.key == ZoneKey(floor: floor, minor: zone) })
        else { return [] }
        // Split: a zone on another share's floor is that locator's to clear (it may run a newer map, in the middle
        // of a rolling update); one on a floor the map does not have, the site owner's.
        guard map.floor(major: floor) != nil ? share.owns(floor: floor) : share.ownsSite else { return [] }
        return [.publish(Self.clearing(topics.occupancy(floor: floor, zone: zone)))]
    }

    /// The clearing of the retained occupancy of each zone of this map that `newMap` does not have.
    func removedZones(in newMap: FloorMap) -> [Action] {
        let kept = Set(newMap.zones.map(\.key))
        return map.zones.filter { !kept.contains($0.key) }.map {
            .publish(Self.clearing(topics.occupancy(floor: $0.floor, zone: $0.minor)))
        }
    }

    private static func clearing(_ topic: Topic) -> Publication {
        Publication(topic: topic, payload: "", qos: .atLeastOnce, retain: true, priority: .urgent)
    }

    /// The zones this locator publishes, in map order.
    private func owned(_ all: [Occupancy]) -> [Occupancy] {
        share == nil ? all : all.filter { share.owns(floor: $0.zone.floor) }
    }

    /// The zones this locator publishes whose state is unknown (no online agent covers them).
    private func unheard(_ all: [Occupancy]) -> [Occupancy] {
        owned(all).filter { $0.state == .unknown }
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
            qos: .atLeastOnce,
            retain: true,
            priority: .urgent
        )
    }

    /// An event on the site's events topic, then on its zone's and its tag's (what Home Assistant's event entities
    /// and device triggers read).
    private func eventPublications(_ event: ZoneTransition) -> [Action] {
        let site = eventPublication(event)
        let topics = [
            site.topic, topics.zoneEvents(floor: event.zone.floor, zone: event.zone.minor),
            topics.tagEvents(tag: event.tag),
        ]
        return topics.map { .publish(Publication(topic: $0, payload: site.payload, qos: .atLeastOnce, retain: false)) }
    }

    private func eventPublication(_ event: ZoneTransition) -> Publication {
        let payload = ZoneEvent(
            time: event.time,
            tag: event.tag,
            name: map.knownTag(event.tag)?.name,
            floor: event.zone.floor,
            zone: event.zone.minor,
            zoneName: zoneNames[event.zone],
            kind: event.kind == .enter ? .enter : .exit
        )
        return Publication(topic: topics.events, payload: payload.payload, qos: .atLeastOnce, retain: false)
    }
}
