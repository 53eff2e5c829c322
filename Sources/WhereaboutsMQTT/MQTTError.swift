import CMosquitto

/// A libmosquitto status code, in the style of swift-system's `Errno`.
///
/// The raw value is the `MOSQ_ERR_*` constant the C library returned; the description is
/// `mosquitto_strerror`'s text followed by the code. Only failure codes are ever thrown.
/// A broker that answers CONNECT with a failure reason is reported separately, as
/// ``MQTTConnectionFailure/refused(_:)``, because it carries an MQTT reason code rather than a
/// library status.
public struct MQTTError: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
    /// The `MOSQ_ERR_*` value.
    public let rawValue: Int32

    /// Wraps a `MOSQ_ERR_*` value.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    init(_ code: mosq_err_t) {
        self.rawValue = Int32(code.rawValue)
    }

    /// Out of memory. The corresponding C error is `MOSQ_ERR_NOMEM`.
    public static var noMemory: MQTTError { .init(MOSQ_ERR_NOMEM) }

    /// The broker or the library saw a protocol violation, or the broker refused the connection with an
    /// MQTT v5 reason code. The corresponding C error is `MOSQ_ERR_PROTOCOL`.
    public static var protocolError: MQTTError { .init(MOSQ_ERR_PROTOCOL) }

    /// An argument was invalid: a topic with wildcards, an empty client id, a keepalive under 5 s, a client
    /// that has already run. The corresponding C error is `MOSQ_ERR_INVAL`.
    public static var invalidArgument: MQTTError { .init(MOSQ_ERR_INVAL) }

    /// The client is not connected to a broker, so nothing was queued. The corresponding C error is
    /// `MOSQ_ERR_NO_CONN`.
    public static var noConnection: MQTTError { .init(MOSQ_ERR_NO_CONN) }

    /// The broker refused the connection (MQTT 3.1.1 return codes). The corresponding C error is
    /// `MOSQ_ERR_CONN_REFUSED`.
    public static var connectionRefused: MQTTError { .init(MOSQ_ERR_CONN_REFUSED) }

    /// The connection was lost. The corresponding C error is `MOSQ_ERR_CONN_LOST`.
    public static var connectionLost: MQTTError { .init(MOSQ_ERR_CONN_LOST) }

    /// A TLS error, for example a server certificate that does not verify. The corresponding C error is
    /// `MOSQ_ERR_TLS`.
    public static var tls: MQTTError { .init(MOSQ_ERR_TLS) }

    /// The payload is larger than the protocol or the broker allows. The corresponding C error is
    /// `MOSQ_ERR_PAYLOAD_SIZE`.
    public static var payloadTooLarge: MQTTError { .init(MOSQ_ERR_PAYLOAD_SIZE) }

    /// The feature is not supported by the library build. The corresponding C error is
    /// `MOSQ_ERR_NOT_SUPPORTED`.
    public static var notSupported: MQTTError { .init(MOSQ_ERR_NOT_SUPPORTED) }

    /// A system call failed; see `errno`. The corresponding C error is `MOSQ_ERR_ERRNO`.
    public static var systemError: MQTTError { .init(MOSQ_ERR_ERRNO) }

    /// The host name could not be resolved. The corresponding C error is `MOSQ_ERR_EAI`.
    public static var lookupFailed: MQTTError { .init(MOSQ_ERR_EAI) }

    /// A string was not valid UTF-8. The corresponding C error is `MOSQ_ERR_MALFORMED_UTF8`.
    public static var malformedUTF8: MQTTError { .init(MOSQ_ERR_MALFORMED_UTF8) }

    /// The broker stopped answering within the keepalive interval. The corresponding C error is
    /// `MOSQ_ERR_KEEPALIVE`.
    public static var keepaliveTimeout: MQTTError { .init(MOSQ_ERR_KEEPALIVE) }

    /// The packet would exceed the broker's maximum packet size. The corresponding C error is
    /// `MOSQ_ERR_OVERSIZE_PACKET`.
    public static var oversizePacket: MQTTError { .init(MOSQ_ERR_OVERSIZE_PACKET) }

    /// The broker does not accept the requested QoS. The corresponding C error is
    /// `MOSQ_ERR_QOS_NOT_SUPPORTED`.
    public static var qosNotSupported: MQTTError { .init(MOSQ_ERR_QOS_NOT_SUPPORTED) }

    /// The broker does not accept retained messages. The corresponding C error is
    /// `MOSQ_ERR_RETAIN_NOT_SUPPORTED`.
    public static var retainNotSupported: MQTTError { .init(MOSQ_ERR_RETAIN_NOT_SUPPORTED) }

    /// The connection attempt did not finish (no CONNACK) in time. The corresponding C error is
    /// `MOSQ_ERR_TIMEOUT`.
    public static var timeout: MQTTError { .init(MOSQ_ERR_TIMEOUT) }

    /// `mosquitto_strerror`'s text and the numeric code, for example "The client is not currently
    /// connected. (MOSQ_ERR 4)".
    ///
    /// For ``systemError`` the text is fixed: `mosquitto_strerror` would read `errno` again, long after the
    /// failing call, so the client reports the system error's text separately, when it happened.
    public var description: String {
        let text = self == .systemError ? "A system call failed." : MosquittoHandle.errorText(rawValue)
        return "\(text) (MOSQ_ERR \(rawValue))"
    }
}
