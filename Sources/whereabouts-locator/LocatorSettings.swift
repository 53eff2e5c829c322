import CommandLineSupport
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsMQTT

/// The locator's settings, from flags, else environment variables.
struct LocatorSettings {
    static let usage = """
        usage: whereabouts-locator --map FILE --broker mqtt://HOST[:PORT] [options]

          --map FILE               floor map (env WHEREABOUTS_MAP)
        \(BrokerSettings.usage)
          --client-id ID           MQTT client id (default whereabouts-locator; env WHEREABOUTS_CLIENT_ID)
          --keepalive SECONDS      MQTT keepalive (default 30)
          --record FILE            append every accepted reading to FILE (JSON Lines; see docs/formats.md)
          --warm-up SECONDS        hold occupancy back this long after start (default 10)
          --update-interval S      coalesce engine updates this long at most (default 0.02)
          --metrics-interval S     seconds between metrics messages (default 10)
          --no-discovery           do not announce Home Assistant discovery configs
          --time-scale X           run the clock X times faster than real time from --time-origin, to follow
                                   an accelerated simulator (`whereabouts sim --speed X`; default 1)
          --time-origin UNIX       where the scaled clock starts (default: now)
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
    var updateInterval = 0.02
    var logLevel = Logger.Level.info
    var insecure = false
    var clock = ScaledClock()

    init(_ argumentList: [String]) throws(UsageError) {
        var arguments = Arguments(argumentList)
        if arguments.flag("help") { throw UsageError(Self.usage) }
        func setting(_ flag: String, _ variable: String) throws(UsageError) -> String? {
            try arguments.option(flag) ?? Environment.value(variable)
        }
        guard let mapPath = try setting("map", "WHEREABOUTS_MAP") else {
            throw UsageError("--map is required\n\(Self.usage)")
        }
        let brokerSettings = try BrokerSettings(&arguments, defaultUsername: "locator")
        self.mapPath = mapPath
        broker = brokerSettings.address
        insecure = brokerSettings.insecure
        let clientID = try setting("client-id", "WHEREABOUTS_CLIENT_ID") ?? "whereabouts-locator"
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
        clock = try ScaledClock(scale: try arguments.number("time-scale"), origin: try arguments.number("time-origin"))
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
        client = MQTTClientConfiguration(broker: brokerSettings, clientID: clientID, keepAlive: .seconds(keepAlive))
    }
}
