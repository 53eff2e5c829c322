/// An MQTT quality-of-service level.
public enum MQTTQoS: Int32, Sendable, Hashable, CaseIterable {
    /// Fire and forget: lost if the connection or the broker is busy or down.
    case atMostOnce = 0
    /// Acknowledged by the broker; may arrive more than once.
    case atLeastOnce = 1
    /// Four-way handshake; arrives once.
    case exactlyOnce = 2
}

/// A message received from the broker, copied out of libmosquitto's buffers.
public struct MQTTMessage: Sendable, Hashable {
    /// The topic the message was published to.
    public var topic: String
    /// The payload bytes, exactly as published.
    public var payload: [UInt8]
    /// The QoS it was delivered with (the lower of the publish and the subscription QoS).
    public var qos: MQTTQoS
    /// Whether the broker sent it from its retained store (for example on a new subscription).
    public var retain: Bool

    /// A message value; the client makes these, tests may too.
    public init(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}
