public import CommandLineSupport

extension MQTTClientConfiguration {
    /// A configuration from the broker settings every executable reads the same way.
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
