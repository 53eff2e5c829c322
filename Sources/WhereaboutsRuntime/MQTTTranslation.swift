public import WhereaboutsMQTT
public import WhereaboutsWire

// The one place where our wire values become the MQTT client's: the client is an adapter that imports none of our
// pure modules, and the pure modules know no client.

extension MQTTQoS {
    /// The client's level for a publication's or a subscription's.
    public init(_ qos: QoS) {
        switch qos {
        case .atMostOnce: self = .atMostOnce
        case .atLeastOnce: self = .atLeastOnce
        }
    }
}

extension MQTTWill {
    /// The last will that says what `publication` says, as the broker will publish it: topic, payload, QoS and
    /// retain all from the publication (a session's ``BrokerSession/will``: its status `offline`, retained, QoS 1).
    public init(_ publication: Publication) {
        self.init(
            topic: publication.topic.name, payload: Array(publication.payload.utf8), qos: MQTTQoS(publication.qos),
            retain: publication.retain)
    }
}
