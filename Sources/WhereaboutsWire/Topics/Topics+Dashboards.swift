public import WhereaboutsCore

extension Topics {
    // MARK: - What a dashboard subscribes to

    /// `…/floors/+/zones/+/occupancy`: every zone's retained occupancy.
    public var allOccupancy: TopicFilter { TopicFilter(prefixLevels + ["floors", "+", "zones", "+", "occupancy"]) }

    /// Every locator output a dashboard reads, as the ACL's `dashboard` account may: occupancy, positions, events,
    /// the locator's status and metrics, and the agents' statuses.
    public var dashboardFilters: [TopicFilter] {
        [
            allOccupancy, allPositions, TopicFilter(prefixLevels + ["events"]),
            TopicFilter(prefixLevels + ["locator", "status"]), TopicFilter(prefixLevels + ["locator", "metrics"]),
            allAgentStatuses,
        ]
    }

    /// Identifies a topic a dashboard received, or returns nil for anything else.
    ///
    /// As strict as ``parse(_:)``: this site's exact prefix, the exact number of levels, numbers in range written
    /// canonically (`07` is not 7), a canonical tag identity and a valid agent id.
    public func parseOutput(_ topic: String) -> OutputTopic? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count >= 4, levels[0] == Self.root, levels[1] == Self.version, levels[2] == siteLevel
        else { return nil }
        let rest = levels.dropFirst(3).map(String.init)
        switch rest.count {
        case 1 where rest[0] == "events":
            return .events
        case 2 where rest[0] == "locator" && rest[1] == "status":
            return .locatorStatus
        case 2 where rest[0] == "locator" && rest[1] == "metrics":
            return .locatorMetrics
        case 3 where rest[0] == "agents" && rest[2] == "status":
            return AgentID(rest[1]).map { .agentStatus($0) }
        case 3 where rest[0] == "tags" && rest[2] == "position":
            guard let tag = TagIdentity(wire: rest[1]), tag.description == rest[1] else { return nil }
            return .position(tag)
        case 5 where rest[0] == "floors" && rest[2] == "zones" && rest[4] == "occupancy":
            guard let floor = Self.canonicalUInt16(rest[1]), let zone = Self.canonicalUInt16(rest[3]) else {
                return nil
            }
            return .occupancy(floor: floor, zone: zone)
        default:
            return nil
        }
    }

    private static func canonicalUInt16(_ text: String) -> UInt16? {
        guard let value = UInt16(text), String(value) == text else { return nil }
        return value
    }
}

/// A locator output topic, as ``Topics/parseOutput(_:)`` identified it.
public enum OutputTopic: Sendable, Hashable {
    /// A zone's retained occupancy.
    case occupancy(floor: UInt16, zone: UInt16)
    /// A tag's retained position (an empty payload clears it).
    case position(TagIdentity)
    /// Zone enter and exit events.
    case events
    /// The locator's retained `online`/`offline`.
    case locatorStatus
    /// The locator's counters.
    case locatorMetrics
    /// An agent's retained `online`/`offline`.
    case agentStatus(AgentID)
}
