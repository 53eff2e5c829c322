/// How to reach and log in to the broker: the values every executable reads the same way (their flags and
/// `WHEREABOUTS_*` names are the shells' business), turned here into a client configuration.
public struct BrokerSettings: Sendable, Hashable {
    /// The broker's address.
    public var address: BrokerAddress
    /// The account, if any.
    public var username: String?
    /// The password itself (see ``MQTTPasswordFile`` to read one from a file).
    public var password: String?
    /// CA certificate(s) to verify the broker with.
    public var caFile: String?
    /// The client certificate, for brokers that want one; needs ``keyFile``.
    public var certificateFile: String?
    /// The client certificate's key.
    public var keyFile: String?
    /// Skip verifying the broker's certificate (the executables warn when this is set).
    public var insecure: Bool
    /// Whether to use TLS at all: an `mqtts://` address, or a CA file given.
    public var usesTLS: Bool { address.usesTLS || caFile != nil }

    public init(
        address: BrokerAddress, username: String? = nil, password: String? = nil, caFile: String? = nil,
        certificateFile: String? = nil, keyFile: String? = nil, insecure: Bool = false
    ) {
        self.address = address
        self.username = username
        self.password = password
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.insecure = insecure
    }
}

extension MQTTClientConfiguration {
    /// A configuration from the broker settings, with the other defaults of
    /// ``init(host:port:clientID:username:password:tls:keepAlive:will:cleanStart:sessionExpiry:reconnect:connectTimeout:eventBufferLimit:)``.
    public init(broker: BrokerSettings, clientID: String, keepAlive: Duration = .seconds(30), will: MQTTWill? = nil) {
        let tls =
            broker.usesTLS
            ? MQTTTLSConfiguration(
                caFile: broker.caFile,
                certificateFile: broker.certificateFile,
                keyFile: broker.keyFile,
                insecure: broker.insecure
            ) : nil
        self.init(
            host: broker.address.host,
            port: broker.address.port,
            clientID: clientID,
            username: broker.username,
            password: broker.password,
            tls: tls,
            keepAlive: keepAlive,
            will: will
        )
    }
}
