import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

/// The locator's Home Assistant discovery: the configs of the site, the map's zones and its known tags, announced on
/// every connection and to Home Assistant's birth message, and the leftovers removed.
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

    /// The discovery configs of the site, the map's zones and known tags (none when discovery is off): those this
    /// locator publishes, or with `ownedOnly` false those of every share of the site (to tell a leftover from another
    /// share's config). A zone's entities are available while its locator is online.
    private func configs(ownedOnly: Bool) -> [DiscoveryConfig] {
        guard isEnabled else { return [] }
        let siteName = map.site.name
        let site = !ownedOnly || share.ownsSite
        let availability = share.statusTopic(topics)
        var configs: [DiscoveryConfig] = site ? [.locator(topics: topics, siteName: siteName)] : []
        for zone in map.zones where !ownedOnly || share.owns(floor: zone.floor) {
            let floorName = map.floor(major: zone.floor)?.name
            configs.append(
                .zoneCount(
                    topics: topics, floor: zone.floor, zone: zone.minor, zoneName: zone.name, floorName: floorName,
                    siteName: siteName, availability: availability))
            configs.append(
                .zoneOccupied(
                    topics: topics, floor: zone.floor, zone: zone.minor, zoneName: zone.name, floorName: floorName,
                    siteName: siteName, availability: availability))
        }
        for tag in map.knownTags where site {
            configs.append(.tagZone(topics: topics, tag: tag.identity, tagName: tag.name))
            configs.append(.tagTracker(topics: topics, tag: tag.identity, tagName: tag.name))
        }
        return configs
    }
}
