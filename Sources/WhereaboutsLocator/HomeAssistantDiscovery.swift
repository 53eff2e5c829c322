import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

/// The locator's Home Assistant discovery: the configs of the site, the map's zones, agents and known tags
/// (``DiscoveryConfig``), announced on every connection and to Home Assistant's birth message, and the leftovers
/// removed.
///
/// Configs that the map no longer has are removed, whether the map changed under a running locator
/// (``replaceMap(_:share:)``) or while it was stopped (an earlier run's retained config, read back at start:
/// ``retainedConfig(_:payload:)``), so that Home Assistant drops the entity instead of keeping it with an old state.
/// With discovery off it announces and removes nothing.
struct HomeAssistantDiscovery: Sendable {
    /// The most unmapped tags logged one by one.
    static let unmappedLogLimit = 20

    /// Whether configs are announced at all.
    let isEnabled: Bool
    private let topics: Topics
    private var map: FloorMap
    private var share: FloorShare?
    /// The discovery config topics of the map, every share's, to tell ours from leftovers.
    private var configTopics: Set<Topic> = []
    /// Tracked tags the map does not name, already logged as invisible to Home Assistant (bounded).
    private var unmappedLogged: Set<TagIdentity> = []

    init(map: FloorMap, share: FloorShare?, topics: Topics, isEnabled: Bool) {
        self.map = map
        self.share = share
        self.topics = topics
        self.isEnabled = isEnabled
        configTopics = Set(configs(ownedOnly: false).map(\.topic))
    }

    /// The configs this locator publishes, retained: on every connection, and when Home Assistant says `online`.
    var announcements: [Action] {
        configs(ownedOnly: true).map {
            .publish(Publication(topic: $0.topic, payload: $0.payload, qos: .atLeastOnce, retain: true))
        }
    }

    /// One of our config topics, retained by an earlier run (ours are not sent back to us): removed when the map no
    /// longer has it.
    func retainedConfig(_ topic: Topic, payload: [UInt8]) -> [Action] {
        guard isEnabled, !payload.isEmpty, !configTopics.contains(topic) else { return [] }
        return [.publish(Publication(topic: topic, payload: "", qos: .atLeastOnce, retain: true))]
    }

    /// Takes a new map (and the share it gives); returns the removal of every config the old map had and the new one
    /// has not, by topic.
    mutating func replaceMap(_ newMap: FloorMap, share newShare: FloorShare?) -> [Action] {
        let oldConfigs = configTopics
        map = newMap
        share = newShare
        configTopics = Set(configs(ownedOnly: false).map(\.topic))
        return oldConfigs.subtracting(configTopics).sorted(by: { $0.name < $1.name }).map {
            .publish(Publication(topic: $0, payload: "", qos: .atLeastOnce, retain: true))
        }
    }

    /// Says once (for the first few such tags) that a tracked tag is not in the map, so Home Assistant does not
    /// show it, and how to add it.
    mutating func noteTracked(_ tag: TagIdentity, actions: inout [Action]) {
        guard isEnabled, map.knownTag(tag) == nil, unmappedLogged.count < Self.unmappedLogLimit,
            unmappedLogged.insert(tag).inserted
        else { return }
        actions.append(
            .log(
                .info,
                "tag \(tag) is tracked but not in the map's \"tags\", so Home Assistant does not show it: add "
                    + "{\"id\": \"\(tag)\", \"name\": \"…\"} to the map and reload the locator (SIGHUP)"))
    }

    /// The discovery configs of the site, the map's zones, agents and known tags (none when discovery is off): those
    /// this locator publishes, or with `ownedOnly` false those of every share of the site (to tell a leftover from
    /// another share's config). A zone's entities are available while its locator is online.
    private func configs(ownedOnly: Bool) -> [DiscoveryConfig] {
        guard isEnabled else { return [] }
        let siteName = map.site.name
        let site = !ownedOnly || share.ownsSite
        let availability = share.statusTopic(topics)
        var configs: [DiscoveryConfig] = site ? [.locator(topics: topics, siteName: siteName)] : []
        for zone in map.zones where !ownedOnly || share.owns(floor: zone.floor) {
            let floorName = map.floor(major: zone.floor)?.name
            let (floor, minor, name) = (zone.floor, zone.minor, zone.name)
            configs.append(
                .zoneCount(
                    topics: topics, floor: floor, zone: minor, zoneName: name, floorName: floorName,
                    siteName: siteName, availability: availability))
            configs.append(
                .zoneOccupied(
                    topics: topics, floor: floor, zone: minor, zoneName: name, floorName: floorName,
                    siteName: siteName, availability: availability))
            configs.append(
                .zoneEvents(
                    topics: topics, floor: floor, zone: minor, zoneName: name, floorName: floorName,
                    siteName: siteName, availability: availability))
        }
        for agent in map.agents where !ownedOnly || share.owns(floor: agent.floor) {
            guard let id = AgentID(agent.id) else { continue }
            let floorName = map.floor(major: agent.floor)?.name
            configs.append(.agentStatus(topics: topics, agent: id, floorName: floorName, siteName: siteName))
            configs.append(
                .agentLastBatch(
                    topics: topics, agent: id, floorName: floorName, siteName: siteName, availability: availability))
            configs.append(
                .agentReadings(
                    topics: topics, agent: id, floorName: floorName, siteName: siteName, availability: availability))
        }
        for tag in map.knownTags where site {
            configs += tagConfigs(tag.identity, name: tag.name)
        }
        return configs
    }

    /// A named tag's configs: its zone sensor, tracker, event entity and battery sensors, and its device triggers, one per zone and
    /// way (its unique ids depend only on the site and the tag, so a tag taken out of the map and put back gets its
    /// entities, and so its person, back).
    private func tagConfigs(_ tag: TagIdentity, name: String?) -> [DiscoveryConfig] {
        var configs: [DiscoveryConfig] = [
            .tagZone(topics: topics, tag: tag, tagName: name), .tagTracker(topics: topics, tag: tag, tagName: name),
            .tagEvents(topics: topics, tag: tag, tagName: name), .tagBattery(topics: topics, tag: tag, tagName: name),
            .tagBatteryLevel(topics: topics, tag: tag, tagName: name),
        ]
        for zone in map.zones {
            for kind in ZoneEvent.Kind.allCases {
                configs.append(
                    .tagZoneTrigger(
                        topics: topics, tag: tag, tagName: name, floor: zone.floor, zone: zone.minor,
                        zoneName: zone.name, kind: kind))
            }
        }
        return configs
    }
}
