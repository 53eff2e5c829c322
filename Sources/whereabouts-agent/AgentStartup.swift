import CommandLineSupport
import WhereaboutsAgent
import WhereaboutsMQTT
import WhereaboutsSettings
import WhereaboutsWire

/// The settings plus what the shell derives from them: the broker address and the MQTT configuration.
struct AgentStartup {
    var settings: AgentSettings
    var broker: BrokerAddress
    var client: MQTTClientConfiguration

    /// Derives the broker and the client's configuration from the settings.
    init(_ settings: AgentSettings) throws(SettingsError) {
        self.settings = settings
        let brokerSettings: BrokerSettings
        do {
            brokerSettings = try BrokerSettings(
                broker: settings.broker, username: settings.username, password: settings.password,
                passwordFile: settings.passwordFile, caFile: settings.caFile, certificateFile: settings.certFile,
                keyFile: settings.keyFile, insecure: settings.insecure)
        } catch {
            throw .invalid(error.description)
        }
        broker = brokerSettings.address
        client = MQTTClientConfiguration(
            broker: brokerSettings, clientID: settings.agent.rawValue, keepAlive: .seconds(settings.keepAlive))
        client.reconnect = MQTTReconnectPolicy(
            initialDelay: .seconds(min(1, settings.reconnectMaximum)), maximumDelay: .seconds(settings.reconnectMaximum)
        )
        // The agent only logs connection events it does not act on; acknowledgements must all arrive.
        client.eventBufferLimit = nil
    }
}
