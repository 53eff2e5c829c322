public import WhereaboutsCore
public import WhereaboutsJSON
public import WhereaboutsWire

/// The tags the agents heard lately, so that the operator can pick the survey tag from a list instead of typing its
/// identity (a phone's iBeacon app shows a UUID that is tedious to copy).
///
/// Fed with every readings batch the broker brings, checked as the locator checks them (but from any agent of the
/// site: the map being drawn may not list them all yet, and the broker's ACL lets an agent speak only for itself);
/// keeps, per tag, when it was last heard, by how many agents and how loud. Bounded: at most ``capacity`` tags, the
/// least recently heard forgotten first.
public struct SurveyTagsHeard: Sendable {
    /// One tag.
    public struct Tag: Sendable, Equatable {
        public var tag: TagIdentity
        /// When it was last heard (the readings' time).
        public var lastHeard: Double
        /// Readings of it so far.
        public var readings: Int
        /// The agents that heard it, and the strongest RSSI each heard last.
        public var agents: [AgentID: Double]
    }

    /// The most tags kept.
    public let capacity: Int
    private let topics: Topics
    private let decoder = BatchDecoder()
    private var tags: [TagIdentity: Tag] = [:]

    /// A table for a site.
    public init(site: BeaconUUID, capacity: Int = 200) {
        topics = Topics(site: site)
        self.capacity = max(capacity, 1)
    }

    /// Takes a broker message; anything but a sound readings batch is ignored.
    public mutating func take(topic: String, payload: [UInt8], now: Double) {
        guard case .readings(let agent) = topics.parse(topic),
            case .decoded(let batch) = decoder.decode(
                payload, topicAgent: agent, isKnownAgent: { _ in true }, now: now)
        else { return }
        for reading in batch.accepted {
            var entry = tags[reading.tag] ?? Tag(tag: reading.tag, lastHeard: reading.time, readings: 0, agents: [:])
            entry.lastHeard = max(entry.lastHeard, reading.time)
            entry.readings += 1
            entry.agents[batch.agent] = reading.rssi
            tags[reading.tag] = entry
        }
        if tags.count > capacity {
            let oldest = tags.values.sorted { $0.lastHeard < $1.lastHeard }.prefix(tags.count - capacity)
            for tag in oldest { tags[tag.tag] = nil }
        }
    }

    /// The tags heard within `seconds` before `now`, the loudest first (the one in the operator's hand, near an
    /// agent, tops the list).
    public func recent(now: Double, within seconds: Double = 60) -> [Tag] {
        tags.values.filter { now - $0.lastHeard <= seconds }
            .sorted {
                ($0.agents.values.max() ?? -200, $0.tag.description) > (
                    $1.agents.values.max() ?? -200, $1.tag.description
                )
            }
    }

    /// The list for the page: `[{"tag": "ibeacon-…", "agents": 3, "rssi": -61, "age": 1.2, "readings": 40}]`
    /// (`rssi` the strongest agent's last, `age` seconds since last heard).
    public func json(now: Double, within seconds: Double = 60) -> JSONValue {
        .array(
            recent(now: now, within: seconds).prefix(50).map { tag in
                .object(
                    JSONObject([
                        ("tag", .string(tag.tag.description)), ("agents", .number(Double(tag.agents.count))),
                        ("rssi", .number((tag.agents.values.max() ?? 0).rounded(toDecimals: 1))),
                        ("age", .number(max(now - tag.lastHeard, 0).rounded(toDecimals: 1))),
                        ("readings", .number(Double(tag.readings))),
                    ]))
            })
    }
}
