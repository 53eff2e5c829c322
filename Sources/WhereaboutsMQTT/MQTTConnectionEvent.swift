/// Something that happened to the client's connection or to a request it sent.
///
/// Events arrive in the order libmosquitto reported them, on ``MQTTClient/events``.
public enum MQTTConnectionEvent: Sendable, Hashable {
    /// The broker accepted the connection; `sessionPresent` says it still had our session (subscriptions
    /// and queued QoS 1/2 messages).
    case connected(sessionPresent: Bool)
    /// One connection attempt failed before the broker accepted it.
    case connectionFailed(MQTTConnectionFailure)
    /// The client will try to connect again after `delay`; `attempt` counts failures (and connections
    /// shorter than ``MQTTReconnectPolicy/stableConnection``) since the last stable connection, from 1.
    case reconnectScheduled(attempt: Int, delay: Duration)
    /// An established connection ended.
    case disconnected(MQTTDisconnectReason)
    /// The broker answered a SUBSCRIBE: one result per filter, the granted QoS (0–2) or a failure code.
    case subscribed(messageID: Int, results: [MQTTReasonCode])
    /// The broker answered an UNSUBSCRIBE.
    case unsubscribed(messageID: Int)
    /// A publish finished: for QoS 1 and 2 the broker acknowledged it with `reason` (for example
    /// ``MQTTReasonCode/notAuthorized`` when the ACL forbids the topic, in which case nobody receives it);
    /// for QoS 0 it was written to the socket (reported only with ``MQTTClientConfiguration/reportsQoS0Completions``).
    case acknowledged(messageID: Int, reason: MQTTReasonCode)
}

/// Why an established connection ended.
public enum MQTTDisconnectReason: Sendable, Hashable, CustomStringConvertible {
    /// ``MQTTClient/disconnect()`` or task cancellation: DISCONNECT was sent, so the broker discarded the will.
    case requested
    /// ``MQTTClient/abandonConnection()``: the socket was dropped without DISCONNECT, so the broker
    /// publishes the will.
    case abandoned
    /// The connection broke (socket closed, keepalive expired, protocol error).
    case connectionLost(MQTTError)
    /// The broker sent DISCONNECT with this reason (for example session taken over).
    case server(MQTTReasonCode)

    public var description: String {
        switch self {
        case .requested: "disconnected on request"
        case .abandoned: "connection abandoned without DISCONNECT"
        case .connectionLost(let error): "connection lost: \(error)"
        case .server(let reason): "disconnected by the broker: \(reason)"
        }
    }
}

/// Why one connection attempt failed.
public enum MQTTConnectionFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The broker answered CONNECT with a failure reason, such as
    /// ``MQTTReasonCode/badUserNameOrPassword`` or ``MQTTReasonCode/notAuthorized``.
    case refused(MQTTReasonCode)
    /// The attempt failed below MQTT: connection refused, TLS verification, timeout. `detail` is the
    /// system or libmosquitto error text when there is one, for example "certificate verify failed".
    case failed(MQTTError, detail: String?)

    public var description: String {
        switch self {
        case .refused(let reason):
            "the broker refused the connection: \(reason)"
        case .failed(let error, let detail?):
            "could not connect: \(error): \(detail)"
        case .failed(let error, nil):
            "could not connect: \(error)"
        }
    }
}
