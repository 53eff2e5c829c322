/// An MQTT v5 reason code, as carried by CONNACK, PUBACK, SUBACK and DISCONNECT.
///
/// Values below 0x80 mean success (in a SUBACK, 0, 1 and 2 are the granted QoS); 0x80 and above are
/// failures. The description is `mosquitto_reason_string`'s text.
public struct MQTTReasonCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The reason code byte.
    public let rawValue: UInt8

    /// Wraps a reason code byte.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Success (or granted QoS 0 in a SUBACK). The corresponding C constant is `MQTT_RC_SUCCESS`.
    public static var success: MQTTReasonCode { .init(rawValue: 0x00) }
    /// Granted QoS 1 in a SUBACK. The corresponding C constant is `MQTT_RC_GRANTED_QOS1`.
    public static var grantedQoS1: MQTTReasonCode { .init(rawValue: 0x01) }
    /// Granted QoS 2 in a SUBACK. The corresponding C constant is `MQTT_RC_GRANTED_QOS2`.
    public static var grantedQoS2: MQTTReasonCode { .init(rawValue: 0x02) }
    /// Accepted, but nobody subscribes to the topic. The corresponding C constant is
    /// `MQTT_RC_NO_MATCHING_SUBSCRIBERS`.
    public static var noMatchingSubscribers: MQTTReasonCode { .init(rawValue: 0x10) }
    /// Unspecified error. The corresponding C constant is `MQTT_RC_UNSPECIFIED`.
    public static var unspecifiedError: MQTTReasonCode { .init(rawValue: 0x80) }
    /// The broker did not speak our protocol version. The corresponding C constant is
    /// `MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION`.
    public static var unsupportedProtocolVersion: MQTTReasonCode { .init(rawValue: 0x84) }
    /// The client identifier was refused. The corresponding C constant is `MQTT_RC_CLIENTID_NOT_VALID`.
    public static var clientIdentifierNotValid: MQTTReasonCode { .init(rawValue: 0x85) }
    /// Wrong username or password. The corresponding C constant is `MQTT_RC_BAD_USERNAME_OR_PASSWORD`.
    public static var badUserNameOrPassword: MQTTReasonCode { .init(rawValue: 0x86) }
    /// Not authorized (a CONNECT without an account, or a publish or subscribe the ACL forbids). The
    /// corresponding C constant is `MQTT_RC_NOT_AUTHORIZED`.
    public static var notAuthorized: MQTTReasonCode { .init(rawValue: 0x87) }
    /// The broker is unavailable. The corresponding C constant is `MQTT_RC_SERVER_UNAVAILABLE`.
    public static var serverUnavailable: MQTTReasonCode { .init(rawValue: 0x88) }
    /// The broker is busy. The corresponding C constant is `MQTT_RC_SERVER_BUSY`.
    public static var serverBusy: MQTTReasonCode { .init(rawValue: 0x89) }
    /// The client is banned. The corresponding C constant is `MQTT_RC_BANNED`.
    public static var banned: MQTTReasonCode { .init(rawValue: 0x8A) }
    /// The broker is shutting down. The corresponding C constant is `MQTT_RC_SERVER_SHUTTING_DOWN`.
    public static var serverShuttingDown: MQTTReasonCode { .init(rawValue: 0x8B) }
    /// The authentication method is not supported. The corresponding C constant is
    /// `MQTT_RC_BAD_AUTHENTICATION_METHOD`.
    public static var badAuthenticationMethod: MQTTReasonCode { .init(rawValue: 0x8C) }
    /// The broker saw no packet within the keepalive. The corresponding C constant is
    /// `MQTT_RC_KEEP_ALIVE_TIMEOUT`.
    public static var keepAliveTimeout: MQTTReasonCode { .init(rawValue: 0x8D) }
    /// Another connection with the same client id took the session over. The corresponding C constant is
    /// `MQTT_RC_SESSION_TAKEN_OVER`.
    public static var sessionTakenOver: MQTTReasonCode { .init(rawValue: 0x8E) }
    /// The topic filter is invalid. The corresponding C constant is `MQTT_RC_TOPIC_FILTER_INVALID`.
    public static var topicFilterInvalid: MQTTReasonCode { .init(rawValue: 0x8F) }
    /// The topic name is invalid. The corresponding C constant is `MQTT_RC_TOPIC_NAME_INVALID`.
    public static var topicNameInvalid: MQTTReasonCode { .init(rawValue: 0x90) }
    /// A packet exceeded the maximum size. The corresponding C constant is `MQTT_RC_PACKET_TOO_LARGE`.
    public static var packetTooLarge: MQTTReasonCode { .init(rawValue: 0x95) }
    /// A quota was exceeded. The corresponding C constant is `MQTT_RC_QUOTA_EXCEEDED`.
    public static var quotaExceeded: MQTTReasonCode { .init(rawValue: 0x97) }
    /// Disconnected by an administrator. The corresponding C constant is `MQTT_RC_ADMINISTRATIVE_ACTION`.
    public static var administrativeAction: MQTTReasonCode { .init(rawValue: 0x98) }
    /// The requested QoS is not supported. The corresponding C constant is `MQTT_RC_QOS_NOT_SUPPORTED`.
    public static var qosNotSupported: MQTTReasonCode { .init(rawValue: 0x9B) }
    /// Too many connection attempts. The corresponding C constant is `MQTT_RC_CONNECTION_RATE_EXCEEDED`.
    public static var connectionRateExceeded: MQTTReasonCode { .init(rawValue: 0x9F) }

    /// Whether the code reports a failure (0x80 and above).
    public var isFailure: Bool { rawValue >= 0x80 }

    /// Whether a CONNACK with this code means retrying with the same settings cannot succeed: the
    /// credentials, the client id or the protocol were refused, or the client is banned.
    public var isPermanentConnectRefusal: Bool {
        switch self {
        case .unsupportedProtocolVersion, .clientIdentifierNotValid, .badUserNameOrPassword, .notAuthorized,
            .banned, .badAuthenticationMethod:
            true
        default:
            false
        }
    }

    /// `mosquitto_reason_string`'s text and the code in hex, for example "Not authorized (0x87)".
    public var description: String {
        let hex = String(rawValue, radix: 16, uppercase: true)
        return "\(MosquittoHandle.reasonText(Int32(rawValue))) (0x\(rawValue < 0x10 ? "0" : "")\(hex))"
    }
}
