import WhereaboutsCore
import WhereaboutsDrawing
public import WhereaboutsJSON
import WhereaboutsWire

/// What `web` keeps in its state directory so that a restart does not empty the page: the recent events, every
/// zone's last hour, and when each retained value was received.
///
/// Neither events nor the hours can be read back from the broker: events are not retained, the hours are the
/// dashboard's own aggregate of occupancy changes, and the dashboard's account may not publish. The receive times
/// are kept with the payload's own time (or, for a bare status, the status), so that the same retained value
/// delivered again after the restart keeps its age instead of looking new.
extension DashboardState {
    /// What the state keeps a receive time or a status for, named in the saved state by ``savedName``.
    enum Subject: Hashable, Sendable {
        case locator
        case agent(String)
        case tag(TagIdentity)
        case zone(ZoneKey)

        /// `locator`, `agent <id>`, `tag <identity>`, `zone <floor>-<zone>`: its entry's name in the saved state's
        /// `statuses` (the locator, agents) or `seen` (tags, zones).
        var savedName: String {
            switch self {
            case .locator: "locator"
            case .agent(let id): "agent " + id
            case .tag(let tag): "tag " + tag.description
            case .zone(let key): "zone " + key.pageKey
            }
        }
    }

    /// The saved state's format; another version is not read.
    public static let savedStateVersion = 1

    /// The state to save, at `now` (which prunes the hours to the last one).
    ///
    /// It holds no time of its own (when it was saved): the same state saved later is the same text, so that `web`
    /// writes its file only when what it holds changed.
    public func savedState(now: Double) -> JSONValue {
        let histories = map.zones.compactMap { zone -> JSONValue? in
            guard let history = history(of: zone.key, now: now),
                !history.samples.isEmpty || !history.crossings.isEmpty
            else { return nil }
            return [
                "zone": .string(zone.key.pageKey),
                "samples": .array(
                    history.samples.map { [.number($0.time), .string($0.state.rawValue), .number(Double($0.count))] }),
                "crossings": .array(
                    history.crossings.map { [.number($0.time), .string($0.label), .string($0.kind.rawValue)] }),
            ]
        }
        let seen: [JSONValue] = receiveTimes.map {
            [.string($0.subject.savedName), .number($0.updated), .number($0.seen)]
        }
        var statuses: [JSONValue] = []
        if let locator, let since = locatorSince {
            statuses.append([.string(Subject.locator.savedName), .string(locator.rawValue), .number(since)])
        }
        for (agent, status) in agentStatuses.sorted(by: { $0.key < $1.key }) {
            if let since = agentSince[agent] {
                statuses.append([.string(Subject.agent(agent).savedName), .string(status.rawValue), .number(since)])
            }
        }
        return [
            "version": .number(Double(Self.savedStateVersion)), "site": .string(map.site.uuid.description),
            "events": .array(
                events.map {
                    ["received": .number($0.received), "event": $0.event.json, "label": .string($0.label)]
                }),
            "histories": .array(histories), "seen": .array(seen), "statuses": .array(statuses),
        ]
    }

    /// Reads back a saved state at `now`: events, hours and receive times for this map's site and zones; anything
    /// else in it (another site, zones no longer on the map, malformed entries) is skipped. Returns false when the
    /// whole state is not one this version wrote for this site.
    @discardableResult
    public mutating func restore(_ saved: JSONValue, now: Double) -> Bool {
        guard let object = saved.object, object["version"]?.integer == Self.savedStateVersion,
            object["site"]?.string == map.site.uuid.description
        else { return false }
        for entry in object["events"]?.array ?? [] {
            guard let fields = entry.object, let received = fields["received"]?.double,
                let eventJSON = fields["event"], let event = try? ZoneEvent(json: eventJSON),
                let label = fields["label"]?.string,
                let zoneName = zoneNames[ZoneKey(floor: event.floor, minor: event.zone)]
            else { continue }
            events.append(ShownEvent(received: received, event: event, label: label, zoneName: zoneName))
        }
        if events.count > Self.recentEventCount { events.removeFirst(events.count - Self.recentEventCount) }
        for entry in object["histories"]?.array ?? [] {
            guard let fields = entry.object, let name = fields["zone"]?.string, let key = ZoneKey(pageKey: name),
                zoneNames[key] != nil
            else { continue }
            let samples = (fields["samples"]?.array ?? []).compactMap { sample -> ZoneHistory.Sample? in
                guard let parts = sample.array, parts.count == 3, let time = parts[0].double,
                    let state = parts[1].string.flatMap(ZoneOccupancy.State.init(rawValue:)),
                    let count = parts[2].integer, count >= 0
                else { return nil }
                return ZoneHistory.Sample(time: time, state: state, count: count)
            }
            let crossings = (fields["crossings"]?.array ?? []).compactMap { crossing -> ZoneHistory.Crossing? in
                guard let parts = crossing.array, parts.count == 3, let time = parts[0].double,
                    let label = parts[1].string, let kind = parts[2].string.flatMap(ZoneEvent.Kind.init(rawValue:))
                else { return nil }
                return ZoneHistory.Crossing(time: time, label: label, kind: kind)
            }
            histories[key] = ZoneHistory(samples: samples, crossings: crossings, now: now)
        }
        for entry in object["seen"]?.array ?? [] {
            guard let parts = entry.array, parts.count == 3, let key = parts[0].string,
                let updated = parts[1].double, let seen = parts[2].double, seen <= now
            else { continue }
            restoredSeen[key] = (updated, seen)
        }
        for entry in object["statuses"]?.array ?? [] {
            guard let parts = entry.array, parts.count == 3, let key = parts[0].string,
                let status = parts[1].string.flatMap(Availability.init(rawValue:)), let since = parts[2].double,
                since <= now
            else { continue }
            restoredStatus[key] = (status, since)
        }
        return true
    }
}
