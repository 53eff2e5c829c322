import CommandLineSupport
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsMQTT

/// The locator's settings, from flags, else environment variables.
struct LocatorSettings {
    static let usage = """
        usage: whereabouts-locator --map FILE --broker mqtt://HOST[:PORT] [options]

          --map FILE               floor map (env WHEREABOUTS_MAP)
          --broker URL             mqtt://host[:port] or mqtts://host[:port] (env WHEREABOUTS_BROKER)
          --client-id ID           MQTT client id (default whereabouts-locator; env WHEREABOUTS_CLIENT_ID)
          --username NAME          broker account (env WHEREABOUTS_USERNAME)
          --password-file FILE     file holding the password (env WHEREABOUTS_PASSWORD_FILE;
                                   or the password itself in env WHEREABOUTS_PASSWORD)
          --ca-file FILE           CA certificate(s) to verify the broker (env WHEREABOUTS_CA_FILE)
          --cert-file FILE         client certificate (env WHEREABOUTS_CERT_FILE)
          --key-file FILE          client key (env WHEREABOUTS_KEY_FILE)
          --insecure               do not verify the broker's certificate (logged as a warning)
          --keepalive SECONDS      MQTT keepalive (default 30)
          --record FILE            append every accepted reading to FILE (JSON Lines; see docs/formats.md)
          --warm-up SECONDS        hold occupancy back this long after start (default 10)
          --update-interval S      coalesce engine updates this long at most (default 0.05)
          --metrics-interval S     seconds between metrics messages (default 10)
          --no-discovery           do not announce Home Assistant discovery configs
          --calibration MODE       guided: the map's radio constants (default); auto: also fit them from the
                                   agents' beacons; off: the map's defaults only (env WHEREABOUTS_CALIBRATION)
          --calibration-interval S seconds between automatic fits (default 600)
          --log-level LEVEL        debug, info, warning or error (default info; env WHEREABOUTS_LOG_LEVEL)

        exit status: 0 clean shutdown, 1 runtime failure, 2 bad usage or bad map
        """

    var mapPath: String
    var broker: BrokerAddress
    var client: MQTTClientConfiguration
    var recordPath: String?
    var pipeline = LocatorPipeline.Configuration()
    var updateInterval = 0.05
    var logLevel = Logger.Level.info
    var insecure = false

    init(_ argumentList: [String]) throws(UsageError) {
        var arguments = Arguments(argumentList)
        if arguments.flag("help") { throw UsageError(Self.usage) }
        func setting(_ flag: String, _ variable: String) throws(UsageError) -> String? {
            try arguments.option(flag) ?? Environment.value(variable)
        }
        guard let mapPath = try setting("map", "WHEREABOUTS_MAP") else {
            throw UsageError("--map is required\n\(Self.usage)")
        }
        guard let brokerText = try setting("broker", "WHEREABOUTS_BROKER") else {
            throw UsageError("--broker is required\n\(Self.usage)")
        }
        self.mapPath = mapPath
        broker = try BrokerAddress(brokerText)
        let clientID = try setting("client-id", "WHEREABOUTS_CLIENT_ID") ?? "whereabouts-locator"
        let username = try setting("username", "WHEREABOUTS_USERNAME")
        var password = Environment.value("WHEREABOUTS_PASSWORD")
        if let file = try setting("password-file", "WHEREABOUTS_PASSWORD_FILE") {
            do {
                password = try MQTTPasswordFile.read(path: file)
            } catch {
                throw UsageError("cannot read the password file \(file): \(error)")
            }
        }
        let caFile = try setting("ca-file", "WHEREABOUTS_CA_FILE")
        let certFile = try setting("cert-file", "WHEREABOUTS_CERT_FILE")
        let keyFile = try setting("key-file", "WHEREABOUTS_KEY_FILE")
        insecure = arguments.flag("insecure")
        let keepAlive = try arguments.number("keepalive") ?? 30
        guard (5...3600).contains(keepAlive) else { throw UsageError("--keepalive must be 5 to 3600 seconds") }
        recordPath = try arguments.option("record")
        if let warmUp = try arguments.number("warm-up") {
            guard warmUp >= 0 else { throw UsageError("--warm-up must not be negative") }
            pipeline.warmUp = warmUp
        }
        if let interval = try arguments.number("update-interval") {
            guard (0.001...10).contains(interval) else { throw UsageError("--update-interval must be 0.001 to 10 s") }
            updateInterval = interval
        }
        if let interval = try arguments.number("metrics-interval") {
            guard interval >= 0.1 else { throw UsageError("--metrics-interval must be at least 0.1 s") }
            pipeline.metricsInterval = interval
        }
        pipeline.homeAssistantDiscovery = !arguments.flag("no-discovery")
        if let modeText = try setting("calibration", "WHEREABOUTS_CALIBRATION") {
            guard let mode = CalibrationMode(rawValue: modeText) else {
                throw UsageError("--calibration must be off, guided or auto, not \"\(modeText)\"")
            }
            pipeline.calibration.mode = mode
        }
        if let interval = try arguments.number("calibration-interval") {
            guard (10...86_400).contains(interval) else {
                throw UsageError("--calibration-interval must be 10 to 86400 seconds")
            }
            pipeline.calibration.interval = interval
        }
        pipeline.recordsReadings = recordPath != nil
        if let levelText = try setting("log-level", "WHEREABOUTS_LOG_LEVEL") {
            guard let level = Logger.Level(levelText) else { throw UsageError("unknown log level \"\(levelText)\"") }
            logLevel = level
        }
        try arguments.finish()
        if (certFile == nil) != (keyFile == nil) { throw UsageError("--cert-file and --key-file go together") }
        let tls: MQTTTLSConfiguration? =
            broker.usesTLS || caFile != nil
            ? MQTTTLSConfiguration(caFile: caFile, certificateFile: certFile, keyFile: keyFile, insecure: insecure)
            : nil
        if tls == nil && insecure { throw UsageError("--insecure only makes sense with mqtts://") }
        client = MQTTClientConfiguration(
            host: broker.host,
            port: broker.port,
            clientID: clientID,
            username: username,
            password: password,
            tls: tls,
            keepAlive: .seconds(keepAlive)
        )
    }
}
