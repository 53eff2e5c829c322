extension Topics {
    // MARK: - GATT jobs

    /// `…/agents/<agent>/gatt/requests`: GATT jobs for one agent (``GATTJobRequest``, QoS 1, not retained). Only the
    /// operator account may publish here; the agent reads its own (deploy/mosquitto/whereabouts.acl).
    public func gattRequests(agent: AgentID) -> Topic {
        Topic(prefixLevels + ["agents", agent.rawValue, "gatt", "requests"])
    }

    /// `…/agents/<agent>/gatt/results`: the agent's answer to each job (``GATTJobResult``, QoS 1, not retained).
    public func gattResults(agent: AgentID) -> Topic {
        Topic(prefixLevels + ["agents", agent.rawValue, "gatt", "results"])
    }

    /// `…/agents/+/gatt/results`: every agent's job results, what an operator's tool may subscribe to.
    public var allGATTResults: TopicFilter { TopicFilter(prefixLevels + ["agents", "+", "gatt", "results"]) }
}
