import WhereaboutsCore
import WhereaboutsJSON

/// The agents as Home Assistant devices: one per agent of the map, under the site's device.
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
