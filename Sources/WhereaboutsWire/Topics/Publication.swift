/// An MQTT message to publish.
public struct Publication: Sendable, Hashable {
    /// Where.
    public var topic: Topic
    /// What; an empty payload with `retain` clears a retained message.
    public var payload: String
    /// MQTT quality of service, 0 or 1.
    public var qos: Int
    /// Whether the broker keeps it for late subscribers.
    public var retain: Bool

    public init(topic: Topic, payload: String, qos: Int, retain: Bool) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}
