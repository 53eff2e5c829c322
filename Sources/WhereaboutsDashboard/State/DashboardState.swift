public import WhereaboutsCore
import WhereaboutsDrawing
public import WhereaboutsWire

/// What a live dashboard knows: the locator's retained outputs and recent events as received from the broker,
/// kept against the map and in bounded memory.
///
/// A value that takes broker messages and returns the change to send to the pages
/// (``ingest(topic:payload:now:)``), and draws the whole picture for a page that connects
/// (``snapshot(now:)``). Every change gets the next ``sequence`` number, so a page that receives a change it
/// already has in its snapshot can ignore it. Time is an input: `now` is the wall clock in Unix seconds, used for
/// the history and the readings rate (the payloads' own times may run on a simulated clock).
///
/// Broker messages are input like any other: payloads over ``maximumPayloadBytes``, malformed ones, zones and
/// agents not on the map, floors not on the map and tags beyond ``maximumTags`` are dropped and counted in
/// ``dropped``.
public struct DashboardState: Sendable {
    /// Why a message was not taken.
    public enum DropReason: String, Sendable, Hashable, CaseIterable, Comparable {
        /// Not a topic a dashboard reads.
        case unknownTopic = "unknown_topic"
        /// Over ``maximumPayloadBytes``.
        case oversized
        /// Not a valid payload for its topic.
        case malformed
        /// A zone, agent or floor the map does not have.
        case notOnMap = "not_on_map"
        /// A new tag while ``maximumTags`` are shown.
        case tooManyTags = "too_many_tags"

        public static func < (lhs: DropReason, rhs: DropReason) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// A tag as the page shows it.
    struct ShownTag: Sendable, Equatable {
        var position: TagPosition
        var label: String
        /// When the dashboard received the position.
        var seen: Double
    }

    /// An event as the page shows it.
    struct ShownEvent: Sendable, Equatable {
        var received: Double
        var event: ZoneEvent
        var label: String
        var zoneName: String
    }

    /// The largest payload read, bytes.
    public static let maximumPayloadBytes = 64 * 1024
    /// The most tags shown at once.
    public var maximumTags = 5000
    /// How many recent events a page gets in its snapshot.
    public static let recentEventCount = 20

    /// The map the dashboard draws.
    public let map: FloorMap
    /// The site's topics.
    public let topics: Topics
    /// The number of the last change.
    public private(set) var sequence: UInt64 = 0
    /// Messages not taken, by reason.
    public private(set) var dropped: [DropReason: Int] = [:]

    /// When the simulation feeding the broker ends (Unix seconds), if the dashboard was told: after it, the
    /// dashboard says the simulation ended rather than that the agents fell silent.
    public var simulationEnd: Double?

    private var tags: [TagIdentity: ShownTag] = [:]
    private var occupancy: [ZoneKey: ZoneOccupancy] = [:]
    /// When each zone's occupancy was received, and when it became unknown.
    var occupancySeen: [ZoneKey: Double] = [:]
    var unknownSince: [ZoneKey: Double] = [:]
    var events: [ShownEvent] = []
    private var locatorStatus: Availability?
    /// When the locator took its status, and when its last metrics arrived.
    var locatorSince: Double?
    private var metricsSeen: Double?
    private var metrics: LocatorMetrics?
    private var previousMetrics: (received: Double, accepted: Int)?
    private var readingsPerSecond: Double?
    private var agentStatus: [String: Availability] = [:]
    /// When each agent took its status.
    var agentSince: [String: Double] = [:]
    var histories: [ZoneKey: ZoneHistory] = [:]
    /// `web`'s broker link; nil when nobody tracks it (the state fed by hand).
    private var broker: BrokerLink?
    /// The last change of each status (the locator's, an agent's): what it was before, since when, and when it changed.
    private var lastStatusChange: [Subject: (previous: Availability?, previousSince: Double?, at: Double)] = [:]
    /// The source last announced to the pages.
    private var announcedSource: DashboardSource?
    /// The latest clock reading the state was given.
    private var clock = 0.0
    /// When a value read back from a saved state was received, by its subject's ``Subject/savedName`` and the
    /// payload's own time: the same retained payload delivered again after a restart keeps its age.
    var restoredSeen: [String: (updated: Double, seen: Double)] = [:]
    /// The same for statuses, which carry no time of their own: a status equal to the saved one keeps its time.
    var restoredStatus: [String: (status: Availability, since: Double)] = [:]
    let zoneNames: [ZoneKey: String]
    private let floors: Set<UInt16>
    private let agentIDs: Set<String>
    private let renderer = MapRenderer()

    /// What the page and the terminal call a tag that its payload gives no name: the map's name for it, else
    /// `major-minor` for a beacon, else its identity's tail (``MapRenderer/label(for:map:)``).
    public func label(for tag: TagIdentity) -> String {
        renderer.label(for: tag, map: map)
    }

    /// An empty dashboard for a map: nothing received yet.
    public init(map: FloorMap) {
        self.map = map
        topics = Topics(site: map.site.uuid)
        var names: [ZoneKey: String] = [:]
        for zone in map.zones { names[zone.key] = zone.name }
        zoneNames = names
        floors = Set(map.floors.map(\.major))
        agentIDs = Set(map.agents.map(\.id))
    }

    /// The number of tags shown.
    public var tagCount: Int { tags.count }

    /// A zone's history, if the zone is on the map.
    public func history(of zone: ZoneKey, now: Double) -> ZoneHistory? {
        guard zoneNames[zone] != nil else { return nil }
        var history = histories[zone] ?? ZoneHistory()
        history.prune(now: now)
        return history
    }

    /// The retained occupancy received for a zone, if any.
    public func occupancy(of zone: ZoneKey) -> ZoneOccupancy? { occupancy[zone] }

    /// The locator's last status, if it has said.
    public var locator: Availability? { locatorStatus }

    /// The locator's last metrics, if any arrived.
    public var locatorMetrics: LocatorMetrics? { metrics }

    /// The last ``recentEventCount`` events on the map's zones, oldest first, as received.
    public var recentEvents: [ZoneEvent] { events.map(\.event) }

    // MARK: - Taking messages

    /// Takes one broker message; returns the change for the pages, or nil when nothing visible changed (or the
    /// message was dropped).
    public mutating func ingest(topic: String, payload: [UInt8], now: Double) -> DashboardChange? {
        guard let output = topics.parseOutput(topic) else { return drop(.unknownTopic) }
        guard payload.count <= Self.maximumPayloadBytes else { return drop(.oversized) }
        clock = max(clock, now)
        switch output {
        case .position(let tag):
            return ingestPosition(tag: tag, payload: payload, now: now)
        case .occupancy(let floor, let zone):
            return ingestOccupancy(key: ZoneKey(floor: floor, minor: zone), payload: payload, now: now)
        case .events:
            return ingestEvent(payload: payload, now: now)
        case .locatorStatus:
            guard let status = Availability(payload: payload) else { return drop(.malformed) }
            if isShutdownWill(status) { return nil }
            if locatorStatus != status || locatorSince == nil {
                lastStatusChange[.locator] = (locatorStatus, locatorSince, now)
                locatorSince = restoredSince(of: .locator, status: status) ?? now
            }
            locatorStatus = status
            return change(.locator(locatorView))
        case .locatorMetrics:
            guard let text = String(validating: payload, as: UTF8.self), let value = try? LocatorMetrics(payload: text)
            else { return drop(.malformed) }
            if let previous = previousMetrics, now > previous.received, value.readingsAccepted >= previous.accepted {
                readingsPerSecond = Double(value.readingsAccepted - previous.accepted) / (now - previous.received)
            }
            previousMetrics = (now, value.readingsAccepted)
            metrics = value
            metricsSeen = now
            return change(.locator(locatorView))
        case .agentStatus(let agent):
            guard agentIDs.contains(agent.rawValue) else { return drop(.notOnMap) }
            guard let status = Availability(payload: payload) else { return drop(.malformed) }
            guard agentStatus[agent.rawValue] != status, !isShutdownWill(status) else { return nil }
            lastStatusChange[.agent(agent.rawValue)] = (agentStatus[agent.rawValue], agentSince[agent.rawValue], now)
            agentStatus[agent.rawValue] = status
            let since = restoredSince(of: .agent(agent.rawValue), status: status) ?? now
            agentSince[agent.rawValue] = since
            return change(.agent(id: agent.rawValue, online: status.isAvailable, since: since))
        }
    }

    private mutating func ingestPosition(tag: TagIdentity, payload: [UInt8], now: Double) -> DashboardChange? {
        // An empty retained payload is the locator clearing a tag it lost.
        if payload.isEmpty {
            guard tags.removeValue(forKey: tag) != nil else { return nil }
            return change(.tagRemoved(id: tag.description))
        }
        guard let text = String(validating: payload, as: UTF8.self), let position = try? TagPosition(payload: text),
            position.tag == tag, position.x.isFinite, position.y.isFinite, position.accuracy.isFinite
        else { return drop(.malformed) }
        guard floors.contains(position.floor) else { return drop(.notOnMap) }
        guard tags[tag] != nil || tags.count < maximumTags else { return drop(.tooManyTags) }
        // The same retained position delivered again (a new broker session) keeps its age, as after a restart.
        let held = tags[tag].flatMap { $0.position.updated == position.updated ? $0.seen : nil }
        let seen = held ?? restoredTime(of: .tag(tag), updated: position.updated) ?? now
        let shown = ShownTag(
            position: position, label: position.name ?? renderer.label(for: tag, map: map), seen: seen)
        tags[tag] = shown
        return change(.tag(tagView(shown)))
    }

    private mutating func ingestOccupancy(key: ZoneKey, payload: [UInt8], now: Double) -> DashboardChange? {
        guard zoneNames[key] != nil else { return drop(.notOnMap) }
        guard let text = String(validating: payload, as: UTF8.self), let value = try? ZoneOccupancy(payload: text),
            value.floor == key.floor, value.zone == key.minor, value.site == map.site.uuid
        else { return drop(.malformed) }
        let held = occupancy[key]?.updated == value.updated ? occupancySeen[key] : nil
        let seen = held ?? restoredTime(of: .zone(key), updated: value.updated) ?? now
        if value.state == .unknown {
            if occupancy[key]?.state != .unknown || unknownSince[key] == nil { unknownSince[key] = seen }
        } else {
            unknownSince[key] = nil
        }
        occupancy[key] = value
        occupancySeen[key] = seen
        histories[key, default: ZoneHistory()].record(value, now: now)
        return change(.zone(zoneView(key)))
    }

    private mutating func ingestEvent(payload: [UInt8], now: Double) -> DashboardChange? {
        guard let text = String(validating: payload, as: UTF8.self), let event = try? ZoneEvent(payload: text) else {
            return drop(.malformed)
        }
        let key = ZoneKey(floor: event.floor, minor: event.zone)
        guard let zoneName = zoneNames[key] else { return drop(.notOnMap) }
        let shown = ShownEvent(
            received: now, event: event, label: event.name ?? renderer.label(for: event.tag, map: map),
            zoneName: zoneName)
        events.append(shown)
        if events.count > Self.recentEventCount { events.removeFirst(events.count - Self.recentEventCount) }
        histories[key, default: ZoneHistory()].record(event.kind, label: shown.label, now: now)
        return change(.event(eventView(shown)))
    }

    private mutating func drop(_ reason: DropReason) -> DashboardChange? {
        dropped[reason, default: 0] += 1
        return nil
    }

    private mutating func change(_ kind: DashboardChange.Kind) -> DashboardChange {
        sequence += 1
        return DashboardChange(sequence: sequence, kind: kind)
    }

    // MARK: - Liveness

    /// Takes a change of `web`'s broker link; returns the change for the pages if the source changed.
    ///
    /// Back after a loss on a new session, the locator's last status is forgotten until the broker delivers its
    /// retained one again: a broker that restarted without its store may not have it, and the locator may not have
    /// reconnected yet, so the old word would claim a locator nobody has heard since.
    ///
    /// A broker that shuts down sends the last wills of its clients as it closes their connections (mosquitto does
    /// on SIGTERM), so `offline` statuses received within ``shutdownWillWindow`` of the loss, before or after it, are
    /// not taken: the locator and the agents are shown as last heard before, greyed, rather than gone. The returned
    /// changes put those statuses back on the pages, then say the source.
    public mutating func brokerLink(_ link: BrokerLink, now: Double) -> [DashboardChange] {
        clock = max(clock, now)
        var changes: [DashboardChange] = []
        if case .lost = broker, case .connected(sessionKept: false) = link {
            locatorStatus = nil
            locatorSince = nil
            changes.append(change(.locator(locatorView)))
        }
        if case .connected = broker, case .lost(let since) = link { changes += forgetShutdownWills(before: since) }
        // Losing a link that was never up is still connecting; losing it again keeps the first loss's time.
        switch (broker, link) {
        case (.connecting, .lost), (.lost, .lost): break
        default: broker = link
        }
        return changes + [refreshSource(now: now)].compactMap { $0 }
    }

    /// How near a broker's loss an `offline` status is taken for a will sent by the broker shutting down, seconds.
    public static let shutdownWillWindow = 2.0

    /// Whether an `offline` status arrives from a connection already lost moments ago: a will the broker sent as it
    /// shut down, handed over after the loss was.
    private func isShutdownWill(_ status: Availability) -> Bool {
        guard status == .offline, case .lost(let since) = broker else { return false }
        return clock - since <= Self.shutdownWillWindow
    }

    /// Puts back the statuses that turned `offline` in the moments before the broker was lost at `since`.
    private mutating func forgetShutdownWills(before since: Double) -> [DashboardChange] {
        var changes: [DashboardChange] = []
        for (subject, last) in lastStatusChange where since - last.at <= Self.shutdownWillWindow {
            switch subject {
            case .locator where locatorStatus == .offline:
                (locatorStatus, locatorSince) = (last.previous, last.previousSince)
                changes.append(change(.locator(locatorView)))
            case .agent(let agent) where agentStatus[agent] == .offline:
                guard let previous = last.previous else { continue }
                (agentStatus[agent], agentSince[agent]) = (previous, last.previousSince)
                changes.append(
                    change(.agent(id: agent, online: previous.isAvailable, since: last.previousSince ?? since)))
            default: break
            }
        }
        lastStatusChange = [:]
        return changes
    }

    /// Whether what the dashboard shows is current, at `now`.
    public func source(now: Double) -> DashboardSource {
        DashboardSource.of(
            broker: broker, simulationEnd: simulationEnd,
            locator: locatorStatus.map { ($0, locatorSince ?? now) }, now: now)
    }

    /// Returns the change for the pages when the source differs from the one last announced (a locator status, the
    /// broker link, or the clock passing the simulation's end changed it); nil otherwise.
    public mutating func refreshSource(now: Double) -> DashboardChange? {
        clock = max(clock, now)
        let current = source(now: now)
        guard current != announcedSource else { return nil }
        announcedSource = current
        return change(.source(sourceView(current, now: now)))
    }

    /// Each tag's receive time with its payload's own time, then each zone's in the map's order, for the saved state.
    var receiveTimes: [(subject: Subject, updated: Double, seen: Double)] {
        let tagTimes = tags.values.sorted { $0.position.tag < $1.position.tag }.map {
            (Subject.tag($0.position.tag), $0.position.updated, $0.seen)
        }
        return tagTimes
            + map.zones.compactMap { zone in
                guard let value = occupancy[zone.key], let seen = occupancySeen[zone.key] else { return nil }
                return (.zone(zone.key), value.updated, seen)
            }
    }

    /// Each agent's last status.
    var agentStatuses: [String: Availability] { agentStatus }

    private func restoredTime(of subject: Subject, updated: Double) -> Double? {
        guard let saved = restoredSeen[subject.savedName], saved.updated == updated else { return nil }
        return saved.seen
    }

    private func restoredSince(of subject: Subject, status: Availability) -> Double? {
        guard let saved = restoredStatus[subject.savedName], saved.status == status else { return nil }
        return saved.since
    }

    // MARK: - What the page reads

    /// The whole picture for a page that connects: site, locator, agents, every zone, every tag, recent events,
    /// whether it is current, and the dashboard's clock (`now`, else the latest time it was given).
    public func snapshot(now: Double? = nil) -> DashboardSnapshot {
        let now = now ?? clock
        let agents = map.agents.map { agent in (key: agent.id, value: agentStatus[agent.id].map { $0.isAvailable }) }
        return DashboardSnapshot(
            sequence: sequence, site: map.site.name, locator: locatorView, agents: PageMap(agents),
            zones: map.zones.map { zoneView($0.key) },
            tags: tags.values.sorted { $0.position.tag < $1.position.tag }.map(tagView),
            events: events.map(eventView),
            agentsSince: PageMap(map.agents.map { (key: $0.id, value: agentSince[$0.id]) }),
            source: sourceView(source(now: now), now: now))
    }

    private func sourceView(_ source: DashboardSource, now: Double) -> SourceView {
        SourceView(state: source.name, since: source.since, sentence: source.sentence, now: now)
    }

    private var locatorView: LocatorView {
        LocatorView(
            status: locatorStatus?.rawValue ?? "unknown",
            metrics: metrics.map { metrics in
                LocatorFigures(
                    readingsPerSecond: readingsPerSecond.map { ($0 * 10).rounded() / 10 },
                    readingsAccepted: metrics.readingsAccepted,
                    readingsRejected: metrics.readingsRejected.values.reduce(0, +), tagsTracked: metrics.tagsTracked,
                    agentsOnline: metrics.agentsOnline, agentsTotal: map.agents.count, latencyP50: metrics.latencyP50,
                    latencyP99: metrics.latencyP99, inputLagP50: metrics.inputLagP50)
            }, since: locatorSince, seen: metricsSeen)
    }

    /// A zone's name on the map; one not on it (a tag's share in a zone the map lost) is `zone <minor>`.
    private func zoneName(_ key: ZoneKey) -> String { zoneNames[key] ?? "zone \(key.minor)" }

    private func zoneView(_ key: ZoneKey) -> ZoneView {
        var view = ZoneView(
            key: key.pageKey, floor: key.floor, zone: key.minor, name: zoneName(key),
            // Not yet published (the locator is warming up or away): neither empty nor unknown.
            state: "pending", count: nil, members: [], seen: occupancySeen[key], unknownSince: unknownSince[key])
        if let value = occupancy[key] {
            view.state = value.state.rawValue
            view.count = value.count
            view.members = value.tags.map {
                ZoneMemberView(label: $0.name ?? renderer.label(for: $0.id, map: map), p: $0.probability)
            }
        }
        return view
    }

    private func tagView(_ tag: ShownTag) -> TagView {
        let position = tag.position
        let shares = position.zones.map { share in
            ZoneShareView(name: zoneName(ZoneKey(floor: position.floor, minor: share.zone)), p: share.probability)
        }
        return TagView(
            id: position.tag.description, label: tag.label, floor: position.floor, x: position.x, y: position.y,
            accuracy: max(position.accuracy, 0),
            // The map's name, as the zone shares beside it, the zone list and the events have it.
            zone: position.zone.map { zoneName(ZoneKey(floor: position.floor, minor: $0)) },
            zoneKey: position.zone.map { ZoneKey(floor: position.floor, minor: $0).pageKey }, p: position.probability,
            zones: shares,
            seen: tag.seen)
    }

    private func eventView(_ shown: ShownEvent) -> EventView {
        EventView(
            time: shown.received, tag: shown.event.tag.description, label: shown.label, zone: shown.zoneName,
            key: ZoneKey(floor: shown.event.floor, minor: shown.event.zone).pageKey, kind: shown.event.kind.rawValue)
    }
}
