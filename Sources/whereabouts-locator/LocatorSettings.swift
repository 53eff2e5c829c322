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
            pipeline.floors = try Self.floors(floorsText)
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
        lease = try Self.lease(settings, clientID: clientID, floors: pipeline.floors)
    }

    /// `--role` and `--lease-time`: the lease this locator competes for as one of a pair, or nil on its own.
    static func lease(
        _ settings: Settings, clientID: String, floors: [UInt16]?
    ) throws(SettingsError) -> LeaseKeeper.Configuration? {
        let leaseTime = try settings.number("lease-time", in: 1...60) ?? 3
        switch settings.value("role") ?? "single" {
        case "single":
            // A lease time on its own would be an operator's belief that this locator is one of a pair.
            if let (_, origin) = settings.lookup("lease-time") {
                throw .invalid(
                    "\(origin) is only for a pair of locators (--role auto); this one runs alone (--role single)")
            }
            return nil
        case "auto":
            // One lease per site: a pair of split locators would need one per share (docs/scale.md), not built yet.
            guard floors == nil else {
                throw .invalid("--role auto cannot be used with --floors yet: the lease is one per site, not per share")
            }
            // The account when one is named (the broker ties client ids to accounts), else the client id; with a
            // number of this process's own, so that two locators started under one name are still two holders.
            return LeaseKeeper.Configuration(
                name: settings.value("username") ?? clientID, process: UInt32.random(in: 0...UInt32.max),
                ttl: leaseTime)
        case let other: throw .invalid("--role must be single or auto, not \"\(other)\"")
        }
    }

    /// `1,2`: floor majors separated by commas, each 0…65535 in plain digits; the map is checked later.
    static func floors(_ text: String) throws(SettingsError) -> [UInt16] {
        var floors: [UInt16] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let digits = String(part.filter { $0 != " " })
            guard let major = UInt16(digits), String(major) == digits else {
                throw .invalid("--floors must list floor majors such as 1,2, not \"\(text)\"")
            }
            floors.append(major)
        }
        return floors
    }
}
