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

    /// Reads the settings from the arguments, the environment and the settings files.
    init(_ arguments: [String]) throws(SettingsError) {
        settings = try AgentSettings.parse(
            arguments: arguments, environment: Environment.values(AgentSettings.environmentKeys),
            readFile: SettingsFileReader.read)
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
