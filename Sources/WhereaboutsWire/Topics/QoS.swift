/// MQTT's quality of service for a publication or a subscription: the two levels Whereabouts uses.
///
/// What a newer message soon replaces (a tag's position, the metrics) goes at most once; what someone waits on
/// (readings, occupancy, events, statuses, the lease) at least once. Exactly once (QoS 2) is not offered: its
/// four-way handshake buys nothing that the batches' deduplication by (agent, epoch, seq) does not already give.
/// The MQTT client has its own type (it imports none of our pure modules); the runtime maps one to the other.
public enum QoS: UInt8, Sendable, Hashable, CaseIterable {
    /// Fire and forget: lost if the connection or the broker is down.
    case atMostOnce = 0
    /// Acknowledged by the broker; may arrive more than once.
    case atLeastOnce = 1
}
