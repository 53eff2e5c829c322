import CommandLineSupport
import Glibc
import WhereaboutsAgent
import WhereaboutsMQTT
import WhereaboutsWire

/// The settings plus what the shell derives from them: the broker address and the MQTT configuration.
struct AgentStartup {
    var settings: AgentSettings
    var broker: BrokerAddress
    var client: MQTTClientConfiguration

    /// Reads the settings from the arguments, the environment and the settings files.
    init(_ arguments: [String]) throws(AgentSettingsError) {
        var environment: [String: String] = [:]
        for key in AgentSettings.environmentKeys {
            if let value = Environment.value(key) { environment[key] = value }
        }
        settings = try AgentSettings.parse(arguments: arguments, environment: environment, readFile: Self.readFile)
        do {
            broker = try BrokerAddress(settings.broker)
        } catch {
            throw .invalid(error.message)
        }
        var password = settings.password
        if let file = settings.passwordFile {
            do {
                password = try MQTTPasswordFile.read(path: file)
            } catch {
                throw .invalid("\(error)")
            }
        }
        let tls: MQTTTLSConfiguration? =
            broker.usesTLS || settings.caFile != nil
            ? MQTTTLSConfiguration(
                caFile: settings.caFile, certificateFile: settings.certFile, keyFile: settings.keyFile,
                insecure: settings.insecure)
            : nil
        client = MQTTClientConfiguration(
            host: broker.host,
            port: broker.port,
            clientID: settings.agent.rawValue,
            username: settings.username,
            password: password,
            tls: tls,
            keepAlive: .seconds(settings.keepAlive),
            reconnect: MQTTReconnectPolicy(
                initialDelay: .seconds(min(1, settings.reconnectMaximum)),
                maximumDelay: .seconds(settings.reconnectMaximum)),
            // The agent only logs connection events it does not act on; acknowledgements must all arrive.
            eventBufferLimit: nil
        )
    }

    /// Reads a settings file whole, telling a missing file from an unreadable one.
    static func readFile(_ path: String) -> SettingsFile {
        if access(path, F_OK) != 0, errno == ENOENT { return .missing }
        do {
            let bytes = try FileAccess.read(path, limit: 1 << 20)
            guard let text = String(validating: bytes, as: UTF8.self) else { return .unreadable("not UTF-8 text") }
            return .text(text)
        } catch {
            return .unreadable(error.message)
        }
    }
}
