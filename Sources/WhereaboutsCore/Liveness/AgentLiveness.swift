/// Which agents are online: what each said of itself on its status topic, when each was last heard, and so which
/// zones some online agent still covers.
struct AgentLiveness: Sendable {
    /// Seconds of silence after which an agent counts as offline, when ``timesOut``.
    let timeout: Double
    /// Whether silence makes an agent offline. A replay of a readings file, which has no heartbeats, turns it off.
    let timesOut: Bool
    private var lastHeard: [Double?]
    private var reportedOnline: [Bool?]
    // Per zone, in map order: the agents on its floor inside it or within the coverage radius of its boundary.
    private let coverage: [[Int]]

    /// Every agent of the map unheard from, and the zones each covers.
    init(map: FloorMap, timesOut: Bool) {
        timeout = map.model.agentTimeout
        self.timesOut = timesOut
        lastHeard = Array(repeating: nil, count: map.agents.count)
        reportedOnline = Array(repeating: nil, count: map.agents.count)
        coverage = map.zones.map { zone in
            map.agents.indices.filter { index in
                let agent = map.agents[index]
                return agent.floor == zone.floor
                    && (zone.polygon.contains(agent.position)
                        || zone.polygon.distanceToBoundary(agent.position) <= map.model.coverageRadius)
            }
        }
    }

    /// Notes that an agent was heard from at `time` (a batch arrived, even an empty one). Earlier times are ignored.
    mutating func heard(_ agentIndex: Int, at time: Double) {
        guard lastHeard.indices.contains(agentIndex) else { return }
        if let last = lastHeard[agentIndex], last >= time { return }
        lastHeard[agentIndex] = time
    }

    /// Records what an agent said of itself (online, or offline through its last will).
    mutating func setStatus(_ agentIndex: Int, online: Bool) {
        guard reportedOnline.indices.contains(agentIndex) else { return }
        reportedOnline[agentIndex] = online
    }

    /// Whether an agent counts as online now: it said so, has not said otherwise, and has not fallen silent.
    func isOnline(_ agentIndex: Int, now: Double) -> Bool {
        guard reportedOnline.indices.contains(agentIndex) else { return false }
        if reportedOnline[agentIndex] == false { return false }
        guard timesOut else { return true }
        guard let heard = lastHeard[agentIndex] else { return false }
        return now - heard <= timeout
    }

    /// Whether some online agent covers the zone at `zoneIndex` in the map.
    func covers(zone zoneIndex: Int, now: Double) -> Bool {
        coverage.indices.contains(zoneIndex) && coverage[zoneIndex].contains { isOnline($0, now: now) }
    }
}
