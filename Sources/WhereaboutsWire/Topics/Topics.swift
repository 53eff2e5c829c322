public import WhereaboutsCore

/// Builds every MQTT topic of one Whereabouts site, and parses the topics the locator receives.
///
/// All topics live under `whereabouts/v1/<site>`, where `<site>` is the site's proximity UUID in lower case:
///
/// | Topic | Publisher | Flags |
/// |---|---|---|
/// | `…/agents/<agent>/readings` | agent | QoS 1 |
/// | `…/agents/<agent>/status` | agent | retained `online`/`degraded`/`offline`, `offline` is the last will |
/// | `…/agents/<agent>/gatt/requests` | the operator account only | QoS 1 ``GATTJobRequest`` (Topics+GATT.swift) |
/// | `…/agents/<agent>/gatt/results` | agent | QoS 1 ``GATTJobResult``, one per request |
/// | `…/floors/<major>/zones/<minor>/occupancy` | locator | retained |
/// | `…/tags/<tag>/position` | locator | retained |
/// | `…/tags/<tag>/zone` | locator | retained, changes only with the tag's zone or its state |
/// | `…/tags/<tag>/location` | locator | retained plain text for Home Assistant's device tracker |
/// | `…/tags/<tag>/battery` | locator | retained millivolts, when a named tag reports its battery |
/// | `…/tags/<tag>/battery_level` | locator | retained percent, from a GATT job's result for a named tag |
/// | `…/events` | locator | QoS 1 |
/// | `…/floors/<major>/zones/<minor>/events`, `…/tags/<tag>/events` | locator | QoS 1, the events of one zone or tag |
/// | `…/locator/status` | locator | retained `online`/`offline`, last will |
/// | `…/locator/metrics` | locator | every 10 s |
/// | `…/locator/agents/<agent>/activity` | locator | retained ``AgentActivity``, once a minute |
/// | `…/locator/lease` | locator (`--role auto`) | retained ``LocatorLease``: which locator is active |
/// | `…/locator/floors-<a>-<b>/status`, `…/metrics` | a locator owning floors a, b of a split site | as above |
/// | `…/calibration` | locator | retained |
///
/// Home Assistant's discovery topics sit outside the prefix: `homeassistant/<component>/<node>/<object>/config`
/// and the birth topic `homeassistant/status`. The locator reads back its own discovery configs (those under its
/// node) at start, to remove the ones the map no longer has.
public struct Topics: Sendable, Hashable {
    /// The first level of every Whereabouts topic.
    public static let root = "whereabouts"
    /// The wire format version, the second level.
    public static let version = "v1"

    /// The site the topics belong to.
    public let site: BeaconUUID

    /// `whereabouts/v1/<site>`, the prefix of every topic of the site.
    public let prefix: String

    /// The site's level, its UUID in lower case (written once: topics are built and parsed per message).
    let siteLevel: String

    /// Topics of one site.
    public init(site: BeaconUUID) {
        self.site = site
        siteLevel = site.description
        prefix = "\(Self.root)/\(Self.version)/\(siteLevel)"
    }

    var prefixLevels: [String] { [Self.root, Self.version, siteLevel] }

    /// `…/tags/<tag>/<last>`, joined once: the locator names tags in a few topics per estimate.
    private func tagTopic(_ tag: TagIdentity, _ last: StaticString) -> Topic {
        Topic(name: prefix + "/tags/" + tag.description + "/" + last.description)
    }

    // MARK: - Agents

    /// `…/agents/<agent>/readings`: the agent's reading batches (QoS 1, not retained).
    public func readings(agent: AgentID) -> Topic {
        Topic(prefixLevels + ["agents", agent.rawValue, "readings"])
    }

    /// `…/agents/<agent>/status`: retained `online` (`degraded` while its journal cannot be written), and `offline`
    /// as the agent's last will.
    public func agentStatus(agent: AgentID) -> Topic {
        Topic(prefixLevels + ["agents", agent.rawValue, "status"])
    }

    /// `…/agents/+/readings`: what the locator subscribes to for readings.
    public var allReadings: TopicFilter { TopicFilter(prefixLevels + ["agents", "+", "readings"]) }

    /// `…/agents/+/status`: what the locator subscribes to for agent availability.
    public var allAgentStatuses: TopicFilter { TopicFilter(prefixLevels + ["agents", "+", "status"]) }

    // MARK: - Locator outputs

    /// `…/floors/<major>/zones/<minor>/occupancy`: a zone's retained occupancy.
    public func occupancy(floor: UInt16, zone: UInt16) -> Topic {
        Topic(prefixLevels + ["floors", String(floor), "zones", String(zone), "occupancy"])
    }

    /// `…/tags/<tag>/position`: a tag's retained position.
    public func position(tag: TagIdentity) -> Topic {
        tagTopic(tag, "position")
    }

    /// `…/tags/+/position`: every tag's position, what a restarted locator reads back to clear stale ones.
    public var allPositions: TopicFilter { TopicFilter(prefixLevels + ["tags", "+", "position"]) }

    /// `…/tags/<tag>/zone`: a tag's retained zone summary, published again only when the zone or its state changes.
    public func tagZone(tag: TagIdentity) -> Topic {
        tagTopic(tag, "zone")
    }

    /// `…/tags/+/zone`: every tag's zone summary, read back at start like the positions.
    public var allTagZones: TopicFilter { TopicFilter(prefixLevels + ["tags", "+", "zone"]) }

    /// `…/tags/<tag>/location`: plain text for Home Assistant's device tracker: the zone's name, `home` (heard, in
    /// no zone), `not_home` (lost) or `None` (cannot be known: its agents are offline).
    public func tagLocation(tag: TagIdentity) -> Topic {
        tagTopic(tag, "location")
    }

    /// `…/tags/<tag>/battery`: a named tag's retained battery voltage, plain text in millivolts (Eddystone-TLM).
    public func tagBattery(tag: TagIdentity) -> Topic {
        tagTopic(tag, "battery")
    }

    /// `…/tags/<tag>/battery_level`: a named tag's retained battery level, plain text in percent (0-100), from the
    /// Battery Level characteristic a GATT job read (``GATTJobResult``). Beside ``tagBattery(tag:)``, which keeps
    /// the Eddystone-TLM voltage: a tag may report either, or both.
    public func tagBatteryLevel(tag: TagIdentity) -> Topic {
        tagTopic(tag, "battery_level")
    }

    /// `…/events`: zone enter and exit events (QoS 1, not retained).
    public var events: Topic { Topic(prefixLevels + ["events"]) }

    /// `…/floors/<major>/zones/<minor>/events`: the same events of one zone, for Home Assistant's event entity of the
    /// zone (a topic per zone, so that Home Assistant renders no template for the events of other zones).
    public func zoneEvents(floor: UInt16, zone: UInt16) -> Topic {
        Topic(prefixLevels + ["floors", String(floor), "zones", String(zone), "events"])
    }

    /// `…/tags/<tag>/events`: the same events of one tag, for its event entity and device triggers.
    public func tagEvents(tag: TagIdentity) -> Topic {
        tagTopic(tag, "events")
    }

    /// `…/locator/status`: retained `online`/`offline`, `offline` being the locator's last will.
    public var locatorStatus: Topic { Topic(prefixLevels + ["locator", "status"]) }

    /// `…/locator/lease`: the retained ``LocatorLease`` that names the active locator of a pair (`--role auto`).
    public var locatorLease: Topic { Topic(prefixLevels + ["locator", "lease"]) }

    /// The subscription to ``locatorLease``.
    public var locatorLeaseFilter: TopicFilter { TopicFilter(prefixLevels + ["locator", "lease"]) }

    /// The subscription to ``locatorStatus`` (a locator of a pair answers the other's `offline`).
    public var locatorStatusFilter: TopicFilter { TopicFilter(prefixLevels + ["locator", "status"]) }

    /// `…/locator/agents/<agent>/activity`: the retained ``AgentActivity`` of one agent, once a minute.
    public func agentActivity(agent: AgentID) -> Topic {
        Topic(prefixLevels + ["locator", "agents", agent.rawValue, "activity"])
    }

    /// `…/locator/metrics`: counters published every 10 s.
    public var locatorMetrics: Topic { Topic(prefixLevels + ["locator", "metrics"]) }

    /// `floors-1-2`: the name of the share of a site split between locators that owns these floors (sorted, without
    /// duplicates), as it appears in the share's topics.
    public static func shareName(floors: [UInt16]) -> String {
        "floors-" + Set(floors).sorted().map(String.init).joined(separator: "-")
    }

    /// `…/locator/floors-<a>-<b>/status`: the retained `online`/`offline` of the locator that owns these floors of
    /// a split site, when it does not own the site-wide outputs (that one keeps ``locatorStatus``).
    public func locatorStatus(shareOf floors: [UInt16]) -> Topic {
        Topic(prefixLevels + ["locator", Self.shareName(floors: floors), "status"])
    }

    /// `…/locator/floors-<a>-<b>/metrics`: that locator's counters.
    public func locatorMetrics(shareOf floors: [UInt16]) -> Topic {
        Topic(prefixLevels + ["locator", Self.shareName(floors: floors), "metrics"])
    }

    /// `…/calibration`: the retained calibration constants in force.
    public var calibration: Topic { Topic(prefixLevels + ["calibration"]) }

    // MARK: - Home Assistant

    /// The first level of Home Assistant's discovery topics (its default discovery prefix).
    public static let homeAssistantPrefix = "homeassistant"

    /// `homeassistant/status`, where Home Assistant publishes `online` when it starts (its birth message).
    public static var homeAssistantStatus: Topic { Topic([homeAssistantPrefix, "status"]) }

    /// The subscription to Home Assistant's birth and last-will messages.
    public static var homeAssistantStatusFilter: TopicFilter { TopicFilter([homeAssistantPrefix, "status"]) }

    /// `homeassistant/<component>/<node>/<object>/config`: one retained discovery config.
    public static func discovery(component: DiscoveryComponent, node: DiscoveryID, object: DiscoveryID) -> Topic {
        Topic([homeAssistantPrefix, component.rawValue, node.rawValue, object.rawValue, "config"])
    }

    /// The discovery node id of the site: `whereabouts_<32 hex digits of the site UUID>`.
    public var discoveryNode: DiscoveryID {
        DiscoveryID(assembled: "whereabouts_" + site.description.filter { $0 != "-" })
    }

    /// `homeassistant/+/<node>/+/config`: every discovery config of this site, what the locator reads back at
    /// start to learn which configs an earlier run (or an earlier map) left.
    public var allDiscoveryConfigs: TopicFilter {
        TopicFilter([Self.homeAssistantPrefix, "+", discoveryNode.rawValue, "+", "config"])
    }

    // MARK: - Parsing

    /// Identifies a topic the locator received, or returns nil for anything else.
    ///
    /// Strict: the exact prefix of this site, the exact number of levels, a valid agent id and a known last
    /// level. Nothing is guessed or normalised, so `…/agents/a/../b/readings` or `…/agents/a+/readings` is nil.
    public func parse(_ topic: String) -> ReceivedTopic? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        if levels.count == 2, levels[0] == Self.homeAssistantPrefix, levels[1] == "status" {
            return .homeAssistantStatus
        }
        if levels.count == 5, levels[0] == Self.homeAssistantPrefix, levels[4] == "config",
            let component = DiscoveryComponent(rawValue: String(levels[1])),
            levels[2] == discoveryNode.rawValue, let object = DiscoveryID(String(levels[3]))
        {
            return .discoveryConfig(Self.discovery(component: component, node: discoveryNode, object: object))
        }
        if levels.count == 8, levels[0] == Self.root, levels[1] == Self.version, levels[2] == siteLevel,
            levels[3] == "floors", levels[5] == "zones", levels[7] == "occupancy",
            let floor = UInt16(String(levels[4])), String(floor) == levels[4],
            let zone = UInt16(String(levels[6])), String(zone) == levels[6]
        {
            return .occupancy(floor: floor, zone: zone)
        }
        if levels.count == 5, levels[0] == Self.root, levels[1] == Self.version, levels[2] == siteLevel,
            levels[3] == "locator"
        {
            switch levels[4] {
            case "lease": return .locatorLease
            case "status": return .locatorStatus
            default: return nil
            }
        }
        if levels.count == 7, levels[0] == Self.root, levels[1] == Self.version, levels[2] == siteLevel,
            levels[3] == "agents", levels[5] == "gatt", levels[6] == "results"
        {
            // The agent level is checked like a readings topic's; a result under an invalid one is nothing ours.
            return AgentID(String(levels[4])).map { .gattResult($0) }
        }
        guard levels.count == 6, levels[0] == Self.root, levels[1] == Self.version, levels[2] == siteLevel
        else { return nil }
        // Only the spelling this side writes (lower-case hex): another spelling names the same tag on a topic nobody
        // reads, and clearing it on ours would leave it retained for good.
        if levels[3] == "tags", let tag = TagIdentity(wire: String(levels[4])), tag.description == levels[4] {
            switch levels[5] {
            case "position": return .position(tag)
            case "zone": return .tagZone(tag)
            default: return nil
            }
        }
        guard levels[3] == "agents", let agent = AgentID(String(levels[4])) else { return nil }
        switch levels[5] {
        case "readings": return .readings(agent)
        case "status": return .agentStatus(agent)
        default: return nil
        }
    }
}

/// A topic the locator receives, as ``Topics/parse(_:)`` identified it.
public enum ReceivedTopic: Sendable, Hashable {
    /// An agent's reading batch.
    case readings(AgentID)
    /// An agent's `online`/`offline` status.
    case agentStatus(AgentID)
    /// An agent's answer to a GATT job (the locator takes the battery levels from it).
    case gattResult(AgentID)
    /// A tag's retained position (the locator reads back what an earlier run left).
    case position(TagIdentity)
    /// A tag's retained zone summary (read back at start, like the positions).
    case tagZone(TagIdentity)
    /// A zone's retained occupancy (read back at start: a zone the map no longer has is cleared).
    case occupancy(floor: UInt16, zone: UInt16)
    /// Home Assistant's birth or death message.
    case homeAssistantStatus
    /// The lease that names the active locator of a pair (read by `--role auto`).
    case locatorLease
    /// The site's locator status (read by `--role auto`, to answer another locator's `offline`).
    case locatorStatus
    /// A retained discovery config of this site's node, rebuilt from its validated levels (read back at start).
    case discoveryConfig(Topic)
}

/// The Home Assistant entity kinds Whereabouts announces.
public enum DiscoveryComponent: String, Sendable, Hashable, CaseIterable {
    /// A value such as a zone's head count or a tag's zone name.
    case sensor
    /// An on/off value such as "zone occupied".
    case binarySensor = "binary_sensor"
    /// A tracked device.
    case deviceTracker = "device_tracker"
    /// A stream of events (a zone's or a tag's enter and exit).
    case event
    /// A device trigger Home Assistant offers in its automation editor ("Alice: Kitchen entered").
    case deviceAutomation = "device_automation"
}
