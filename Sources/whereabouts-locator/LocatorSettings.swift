import CommandLineSupport
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsMQTT
import WhereaboutsRuntime
import WhereaboutsSettings

/// The locator's settings: each from its flag, else the environment, else an `--env-file`, else
/// `/etc/whereabouts/locator.conf` (or `--config`), else the default.
struct LocatorSettings {
    var mapPath: String
    var broker: BrokerAddress
    var client: MQTTClientConfiguration
    var recordPath: String?
    /// Where the batch ledger is kept across restarts: `--state-dir`, else systemd's `STATE_DIRECTORY` (the unit's
    /// `StateDirectory=`); nil: in memory only.
    var stateDirectory: String?
    var pipeline = LocatorPipeline.Configuration()
    var updateInterval = 0.02
    var outboxBytes = LocatorService.defaultOutboxBytes
    var logLevel = Logger.Level.info
    var insecure = false
    var clock = ScaledClock()
    /// With `--role auto`: the lease that makes this locator one of a pair (its holder id is its `--username`, else
    /// its client id).
    var lease: LeaseKeeper.Configuration?
    /// Where the metrics endpoint listens (`--metrics-listen`); nil: none.
    var metricsListen: MetricsAddress?

    /// Reads this process's settings.
    init(_ arguments: [String]) throws(SettingsError) {
        try self.init(
            Settings(processArguments: arguments, interface: LocatorCommandLine.interface),
            systemdStateDirectory: Environment.value("STATE_DIRECTORY"))
    }

    /// `systemdStateDirectory`: systemd's `STATE_DIRECTORY` (colon-separated when the unit lists several; the first
    /// is taken), the default for `--state-dir`.
    init(_ settings: Settings, systemdStateDirectory: String? = nil) throws(SettingsError) {
        mapPath = try settings.required("map", "the floor map file")
        let brokerSettings = try BrokerSettings(settings, defaultUsername: "locator")
        broker = brokerSettings.address
        insecure = brokerSettings.insecure
        let clientID = settings.value("client-id") ?? "whereabouts-locator"
        guard (1...65535).contains(clientID.utf8.count) else { throw .invalid("--client-id must not be empty") }
        let keepAlive = try settings.number("keepalive", in: 5...3600) ?? 30
        recordPath = settings.value("record")
        stateDirectory =
            settings.value("state-dir") ?? systemdStateDirectory?.split(separator: ":").first.map(String.init)
        if let stateDirectory, !stateDirectory.hasPrefix("/") {
            throw .invalid("--state-dir must be an absolute path, not \"\(stateDirectory)\"")
        }
        if let warmUp = try settings.number("warm-up", in: 0...86_400) { pipeline.warmUp = warmUp }
        updateInterval = try settings.number("update-interval", in: 0.001...10) ?? updateInterval
        if let interval = try settings.number("estimate-interval", in: 0...10) {
            pipeline.engine.estimateInterval = interval
        }
        if let interval = try settings.number("still-estimate-interval", in: 0...10) {
            pipeline.engine.stillEstimateInterval = interval
        }
        try settings.applyTracker(to: &pipeline.engine)
        pipeline.engine.workers = try settings.workers()
        pipeline.engine.runner = .threads
        if let interval = try settings.number("metrics-interval", in: 0.1...86_400) {
            pipeline.metricsInterval = interval
        }
        if let listen = settings.value("metrics-listen") {
            guard let address = MetricsAddress(listen) else {
                throw .invalid("--metrics-listen must be PORT or HOST:PORT with an IPv4 HOST, not \"\(listen)\"")
            }
            metricsListen = address
        }
        outboxBytes = try settings.integer("outbox-bytes", in: 16_384...(1 << 40)) ?? outboxBytes
        pipeline.homeAssistantDiscovery = try !settings.switchValue("no-discovery")
        do {
            clock = try ScaledClock(
                scale: try settings.number("time-scale"), origin: try settings.number("time-origin"))
        } catch let error as UsageError {
            throw .invalid(error.message)
        } catch {
            throw .invalid("\(error)")
        }
        if let modeText = settings.value("calibration") {
            guard let mode = CalibrationMode(rawValue: modeText) else {
                throw .invalid("--calibration must be off, guided or auto, not \"\(modeText)\"")
            }
            pipeline.calibration.mode = mode
        }
        if let interval = try settings.number("calibration-interval", in: 10...86_400) {
            pipeline.calibration.interval = interval
        }
        if let floorsText = settings.value("floors") {
            pipeline.floors = try LocatorCommandLine.floors(floorsText)
            if let margin = try settings.number("floor-margin", in: 0...64) {
                guard margin == margin.rounded() else { throw .invalid("--floor-margin must be a whole number") }
                pipeline.floorMargin = Int(margin)
            }
            // Each share would fit its own constants from the beacons it hears, and only one may publish them.
            guard pipeline.calibration.mode != .auto else {
                throw .invalid("--calibration auto cannot be used with --floors: fit once, write the map, share it")
            }
        }
        pipeline.recordsReadings = recordPath != nil
        if let levelText = settings.value("log-level") {
            guard let level = Logger.Level(levelText) else {
                throw .invalid("--log-level must be debug, info, warning or error, not \"\(levelText)\"")
            }
            logLevel = level
        }
        client = MQTTClientConfiguration(broker: brokerSettings, clientID: clientID, keepAlive: .seconds(keepAlive))
        lease = try LocatorCommandLine.lease(
            settings, clientID: clientID, floors: pipeline.floors, process: UInt32.random(in: 0...UInt32.max))
    }
}
