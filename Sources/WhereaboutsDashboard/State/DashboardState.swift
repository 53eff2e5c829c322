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

    private var tags: [TagIdentity: ShownTag] = [:]
    private var occupancy: [ZoneKey: ZoneOccupancy] = [:]
    private var events: [ShownEvent] = []
    private var locatorStatus: Availability?
    private var metrics: LocatorMetrics?
    private var previousMetrics: (received: Double, accepted: Int)?
    private var readingsPerSecond: Double?
    private var agentStatus: [String: Availability] = [:]
    private var histories: [ZoneKey: ZoneHistory] = [:]
    private let zoneNames: [ZoneKey: String]
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
        switch output {
        case .position(let tag):
            return ingestPosition(tag: tag, payload: payload)
        case .occupancy(let floor, let zone):
            return ingestOccupancy(key: ZoneKey(floor: floor, minor: zone), payload: payload, now: now)
        case .events:
            return ingestEvent(payload: payload, now: now)
        case .locatorStatus:
            guard let status = Availability(payload: payload) else { return drop(.malformed) }
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
            return change(.locator(locatorView))
        case .agentStatus(let agent):
            guard agentIDs.contains(agent.rawValue) else { return drop(.notOnMap) }
            guard let status = Availability(payload: payload) else { return drop(.malformed) }
            guard agentStatus[agent.rawValue] != status else { return nil }
            agentStatus[agent.rawValue] = status
            return change(.agent(id: agent.rawValue, online: status.isAvailable))
        }
    }

    private mutating func ingestPosition(tag: TagIdentity, payload: [UInt8]) -> DashboardChange? {
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
        let shown = ShownTag(position: position, label: position.name ?? renderer.label(for: tag, map: map))
        tags[tag] = shown
        return change(.tag(tagView(shown)))
    }

    private mutating func ingestOccupancy(key: ZoneKey, payload: [UInt8], now: Double) -> DashboardChange? {
        guard zoneNames[key] != nil else { return drop(.notOnMap) }
        guard let text = String(validating: payload, as: UTF8.self), let value = try? ZoneOccupancy(payload: text),
            value.floor == key.floor, value.zone == key.minor, value.site == map.site.uuid
        else { return drop(.malformed) }
        occupancy[key] = value
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

    // MARK: - What the page reads

    /// The whole picture for a page that connects: site, locator, agents, every zone, every tag, recent events.
    public func snapshot() -> DashboardSnapshot {
        let agents = map.agents.map { agent in (key: agent.id, value: agentStatus[agent.id].map { $0.isAvailable }) }
        return DashboardSnapshot(
            sequence: sequence, site: map.site.name, locator: locatorView, agents: PageMap(agents),
            zones: map.zones.map { zoneView($0.key) },
            tags: tags.values.sorted { $0.position.tag < $1.position.tag }.map(tagView),
            events: events.map(eventView))
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
            })
    }

    private func zoneView(_ key: ZoneKey) -> ZoneView {
        var view = ZoneView(
            key: "\(key.floor)-\(key.minor)", floor: key.floor, zone: key.minor, name: zoneNames[key] ?? "zone \(key)",
            // Not yet published (the locator is warming up or away): neither empty nor unknown.
            state: "pending", count: nil, members: [])
        if let value = occupancy[key] {
            view.state = value.state.rawValue
            view.count = value.count
            view.members = value.tags.map { $0.name ?? renderer.label(for: $0.id, map: map) }
        }
        return view
    }

    private func tagView(_ tag: ShownTag) -> TagView {
        let position = tag.position
        return TagView(
            id: position.tag.description, label: tag.label, floor: position.floor, x: position.x, y: position.y,
            accuracy: max(position.accuracy, 0), zone: position.zoneName)
    }

    private func eventView(_ shown: ShownEvent) -> EventView {
        EventView(
            time: shown.received, tag: shown.event.tag.description, label: shown.label, zone: shown.zoneName,
            key: "\(shown.event.floor)-\(shown.event.zone)", kind: shown.event.kind.rawValue)
    }
}
