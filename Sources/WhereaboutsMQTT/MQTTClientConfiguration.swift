/// Everything ``MQTTClient`` needs to know to connect, fixed for the client's lifetime.
///
/// The defaults suit an agent: MQTT v5, a persistent session (clean start off, one hour session
/// expiry), 30 s keepalive, reconnect backoff from 1 s to 30 s.
public struct MQTTClientConfiguration: Sendable {
    /// The broker's host name or address.
    public var host: String
    /// The broker's TCP port (1883 plain, 8883 TLS by convention).
    public var port: Int
    /// The client identifier; with a persistent session it names the session, so it must be stable and unique.
    public var clientID: String
    /// The username, or `nil` for an anonymous connection.
    public var username: String?
    /// The password (the value, not a path; see ``MQTTPasswordFile`` to read one from a file).
    public var password: String?
    /// TLS settings, or `nil` for plain TCP.
    public var tls: MQTTTLSConfiguration?
    /// The keepalive interval; libmosquitto requires at least 5 s. A silent broker is detected after about 1.5×.
    public var keepAlive: Duration
    /// The message the broker publishes if this client disappears without DISCONNECT.
    public var will: MQTTWill?
    /// Whether each connection starts a fresh session. `false` (the default) keeps subscriptions and QoS 1
    /// messages queued at the broker while the client is away.
    public var cleanStart: Bool
    /// How long the broker keeps the session after the connection ends (MQTT v5 session expiry interval).
    public var sessionExpiry: Duration
    /// The reconnect backoff.
    public var reconnect: MQTTReconnectPolicy
    /// How long one connection attempt may take, from TCP connect to CONNACK, before it is abandoned.
    public var connectTimeout: Duration
    /// How many connection events to keep when nobody reads ``MQTTClient/events``: `nil` (the default)
    /// keeps all, so no acknowledgement is ever lost; a number keeps only the newest, for callers that
    /// only log events.
    public var eventBufferLimit: Int?
    /// The most received messages held for the consumer: when the inbox is full, libmosquitto's thread waits in
    /// the message callback until the consumer takes one, so it reads (and acknowledges) nothing more meanwhile.
    /// libmosquitto acknowledges a QoS 1 message before its callback runs, so this bounds what a crash of the
    /// consumer can lose to the inbox plus one. `nil` (the default) never waits.
    public var inboxLimit: Int?
    /// MQTT v5 receive maximum: the most QoS 1/2 messages the broker may have sent this client and not had
    /// acknowledged. `nil` leaves the broker's default.
    public var receiveMaximum: Int?
    /// Payloads longer than this are cut to `payloadLimit + 1` bytes in the callback, before being copied whole:
    /// a size check downstream still sees them as too large, and one huge message never costs its size in memory.
    /// `nil` copies every payload whole.
    public var payloadLimit: Int?
    /// MQTT v5 maximum packet size, in bytes: the largest packet the broker may send this client. A conforming broker
    /// drops a larger message for this client instead of sending it (mosquitto does), so that it is never read, let
    /// alone copied: libmosquitto itself reads any packet whole into memory, twice, before the message callback can
    /// look at its length. `nil` (the default) sets no limit.
    public var maximumPacketSize: Int?
    /// Whether ``MQTTConnectionEvent/acknowledged(messageID:reason:)`` also reports QoS 0 publishes written to
    /// the socket (the default), or only QoS 1 and 2 ones the broker acknowledged. A client that publishes
    /// thousands of QoS 0 messages a second and does not wait for them (the locator's positions) turns it off: each
    /// report is an event to carry to the consumer and a wake-up of its task.
    public var reportsQoS0Completions = true

    /// A configuration with the defaults described on the type.
    public init(
        host: String,
        port: Int = 1883,
        clientID: String,
        username: String? = nil,
        password: String? = nil,
        tls: MQTTTLSConfiguration? = nil,
        keepAlive: Duration = .seconds(30),
        will: MQTTWill? = nil,
        cleanStart: Bool = false,
        sessionExpiry: Duration = .seconds(3600),
        reconnect: MQTTReconnectPolicy = MQTTReconnectPolicy(),
        connectTimeout: Duration = .seconds(15),
        eventBufferLimit: Int? = nil,
        inboxLimit: Int? = nil,
        receiveMaximum: Int? = nil,
        payloadLimit: Int? = nil
    ) {
        self.inboxLimit = inboxLimit
        self.receiveMaximum = receiveMaximum
        self.payloadLimit = payloadLimit
        self.host = host
        self.port = port
        self.clientID = clientID
        self.username = username
        self.password = password
        self.tls = tls
        self.keepAlive = keepAlive
        self.will = will
        self.cleanStart = cleanStart
        self.sessionExpiry = sessionExpiry
        self.reconnect = reconnect
        self.connectTimeout = connectTimeout
        self.eventBufferLimit = eventBufferLimit
    }
}

/// TLS settings: whom to trust, and optionally who we are.
///
/// The server's certificate chain and host name are verified unless ``insecure`` is set.
public struct MQTTTLSConfiguration: Sendable, Hashable {
    /// A PEM file of CA certificates to trust; `nil` trusts the system store in `/etc/ssl/certs`.
    public var caFile: String?
    /// A PEM client certificate, for brokers that require one; needs ``keyFile``.
    public var certificateFile: String?
    /// The PEM private key of ``certificateFile`` (unencrypted).
    public var keyFile: String?
    /// Skips all verification of the server: chain and host name. Only for tests and first setup.
    public var insecure: Bool

    /// TLS settings; verification is on unless `insecure` is `true`.
    public init(caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil, insecure: Bool = false) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.insecure = insecure
    }
}

/// A last will: published by the broker when the client vanishes without DISCONNECT.
public struct MQTTWill: Sendable, Hashable {
    /// The topic to publish to.
    public var topic: String
    /// The payload (at most 65535 bytes).
    public var payload: [UInt8]
    /// The QoS of the will message.
    public var qos: MQTTQoS
    /// Whether the broker retains it (so later subscribers see the client is gone).
    public var retain: Bool

    /// A will message.
    public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}
