import WhereaboutsCore
import WhereaboutsJSON

/// The agents as Home Assistant devices: one per agent of the map, under the site's device, with its connectivity
/// (its own status) and what the locator sees of it (``AgentActivity``): its last batch and readings a second.
/// (Scan restarts are counted only in the agent's own log and summary: no message carries them.)
extension DiscoveryConfig {
    /// `ON` unless the agent's status says `offline` (its last will): `degraded` (its journal cannot be written) is
    /// still connected.
    public static let agentConnectedTemplate =
        "{{ 'OFF' if value == '\(Availability.offline.payload)' else 'ON' }}"

    /// A `binary_sensor` (device class `connectivity`) on while the agent is online, read from the agent's own
    /// retained status, so it stays true while the locator is down (it does not follow the locator's availability).
    public static func agentStatus(
        topics: Topics, agent: AgentID, floorName: String?, siteName: String = "Whereabouts"
    ) -> DiscoveryConfig {
        DiscoveryConfig(
            component: .binarySensor, topics: topics, object: "agent_\(agent)_status", followsLocator: false
        ) { uniqueID in
            [
                ("name", "Status"), ("unique_id", .string(uniqueID.rawValue)),
                ("state_topic", .string(topics.agentStatus(agent: agent).name)),
                ("value_template", .string(agentConnectedTemplate)), ("device_class", "connectivity"),
                ("payload_on", "ON"), ("payload_off", "OFF"), ("entity_category", "diagnostic"),
                ("device", agentDevice(topics: topics, agent: agent, floorName: floorName, siteName: siteName)),
            ]
        }
    }

    /// When the locator last took a batch of the agent, as the ISO 8601 time a timestamp sensor wants; `None` before
    /// its first.
    public static let lastBatchTemplate =
        "{{ (value_json.last_batch | float) | timestamp_custom('%Y-%m-%dT%H:%M:%S+00:00', false) "
        + "if value_json is defined and value_json.last_batch is number else None }}"

    /// The readings a second the locator took from the agent over the last minute.
    public static let readingsRateTemplate =
        "{{ value_json.readings_per_s if value_json is defined and value_json.readings_per_s is number else None }}"

    /// The unit of an agent's reading rate.
    public static let readingsRateUnit = "readings/s"

    /// A timestamp `sensor`: when the locator last took a batch of the agent (from ``Topics/agentActivity(agent:)``,
    /// once a minute); it follows the locator's availability, which publishes it.
    public static func agentLastBatch(
        topics: Topics, agent: AgentID, floorName: String?, siteName: String = "Whereabouts",
        availability: Topic? = nil
    ) -> DiscoveryConfig {
        DiscoveryConfig(
            component: .sensor, topics: topics, object: "agent_\(agent)_last_batch", availability: availability
        ) { uniqueID in
            [
                ("name", "Last batch"), ("unique_id", .string(uniqueID.rawValue)),
                ("state_topic", .string(topics.agentActivity(agent: agent).name)),
                ("value_template", .string(lastBatchTemplate)), ("device_class", "timestamp"),
                ("entity_category", "diagnostic"),
                ("device", agentDevice(topics: topics, agent: agent, floorName: floorName, siteName: siteName)),
            ]
        }
    }

    /// A `sensor` of the readings a second the locator took from the agent over the last minute.
    public static func agentReadings(
        topics: Topics, agent: AgentID, floorName: String?, siteName: String = "Whereabouts",
        availability: Topic? = nil
    ) -> DiscoveryConfig {
        DiscoveryConfig(
            component: .sensor, topics: topics, object: "agent_\(agent)_readings", availability: availability
        ) { uniqueID in
            [
                ("name", "Readings"), ("unique_id", .string(uniqueID.rawValue)),
                ("state_topic", .string(topics.agentActivity(agent: agent).name)),
                ("value_template", .string(readingsRateTemplate)), ("unit_of_measurement", .string(readingsRateUnit)),
                ("state_class", "measurement"), ("icon", "mdi:access-point"), ("entity_category", "diagnostic"),
                ("device", agentDevice(topics: topics, agent: agent, floorName: floorName, siteName: siteName)),
            ]
        }
    }

    /// The device of an agent, named after its id (`Agent hall-1`).
    static func agentDevice(topics: Topics, agent: AgentID, floorName: String?, siteName: String) -> JSONValue {
        .object(
            JSONObject([
                ("identifiers", .array([.string("\(topics.discoveryNode)_agent_\(agent)")])),
                ("name", .string("Agent \(agent)")), ("manufacturer", "Whereabouts"),
                ("model", .string("Agent on \(floorName ?? "a floor"), \(siteName)")),
                ("via_device", .string(topics.discoveryNode.rawValue)),
            ]))
    }
}
