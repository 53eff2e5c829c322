/// An MQTT message to publish.
public struct Publication: Sendable, Hashable {
    /// Which publications leave first when more wait than the broker takes at once (a restart or a reconnect
    /// republishes every tag's state; a crowd moving makes many at once).
    ///
    /// A topic's publications must all have the same priority: only then do they stay in order.
    public enum Priority: Int, Sendable, Hashable, CaseIterable {
        /// What someone waits on: the standby lease, and zone occupancy.
        case urgent
        /// Events and everything not marked otherwise.
        case normal
        /// Each tag's own state (position, zone, location): many topics, each soon written again.
        case background
        /// The state of a tag the map does not name: leaves last, and is the first an outbox over its byte budget
        /// drops (``Outbox``'s shedding), so that a flood of new tag ids cannot crowd out the tags the site names, the
        /// zones, or the lease.
        case expendable
        /// After everything else: a clean stop's release of the lease, so that a standby takes over from the last word.
        case last
    }

    /// Where.
    public var topic: Topic
    /// What; an empty payload with `retain` clears a retained message.
    public var payload: String
    /// MQTT quality of service.
    public var qos: QoS
    /// Whether the broker keeps it for late subscribers.
    public var retain: Bool
    /// Whether it may leave before others waiting, or after them.
    public var priority: Priority

    public init(topic: Topic, payload: String, qos: QoS, retain: Bool, priority: Priority = .normal) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.priority = priority
    }
}
