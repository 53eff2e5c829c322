import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

/// What the locator sees of each agent of the map on the floors it owns, for Home Assistant's agent devices: when it
/// last took a batch of it and how many readings a second, published retained (``AgentActivity``) every
/// ``interval`` seconds.
///
/// Once a minute, not with every batch: Home Assistant's recorder writes a row per change, and a rate changes with
/// every batch.
struct AgentActivityPublisher: Sendable {
    /// Seconds between two reports.
    static let interval = 60.0

    private let topics: Topics
    private var map: FloorMap
    private var share: FloorShare?
    /// Per agent of the map, by index: when its last batch was taken, and the readings taken since the last report.
    private var lastBatch: [Double?]
    private var readings: [Int]
    private var lastReport: Double?

    init(map: FloorMap, share: FloorShare?, topics: Topics) {
        self.map = map
        self.share = share
        self.topics = topics
        lastBatch = Array(repeating: nil, count: map.agents.count)
        readings = Array(repeating: 0, count: map.agents.count)
    }

    /// Takes a new map: the agents are counted afresh.
    mutating func replaceMap(_ newMap: FloorMap, share newShare: FloorShare?) {
        self = AgentActivityPublisher(map: newMap, share: newShare, topics: topics)
    }

    /// A batch of the map's agent `agentIndex` was taken at `now`, with `accepted` readings.
    mutating func batchTaken(agentIndex: Int, accepted: Int, now: Double) {
        guard lastBatch.indices.contains(agentIndex) else { return }
        lastBatch[agentIndex] = now
        readings[agentIndex] += accepted
    }

    /// Every ``interval``: each owned agent's activity since the last report (the first report starts the count).
    mutating func tick(now: Double) -> [Action] {
        guard let lastReport else {
            self.lastReport = now
            return []
        }
        guard now - lastReport >= Self.interval else { return [] }
        let seconds = now - lastReport
        self.lastReport = now
        var actions: [Action] = []
        for (index, agent) in map.agents.enumerated() where share.owns(floor: agent.floor) {
            guard let id = AgentID(agent.id) else { continue }
            let rate = (Double(readings[index]) / seconds * 10).rounded() / 10
            let activity = AgentActivity(agent: id, time: now, lastBatch: lastBatch[index], readingsPerSecond: rate)
            actions.append(
                .publish(
                    Publication(
                        topic: topics.agentActivity(agent: id), payload: activity.payload, qos: .atLeastOnce,
                        retain: true, priority: .background)))
        }
        readings = Array(repeating: 0, count: readings.count)
        return actions
    }
}
