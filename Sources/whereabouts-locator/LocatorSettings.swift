import CommandLineSupport
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsMQTT
import WhereaboutsRuntime
import WhereaboutsSettings

/// The locator's settings: each from its flag, else the environment, else an `--env-file`, else
/// `/etc/whereabouts/locator.conf` (or `--config`), else the default.
struct LocatorSettings {
    /// The default configuration file; a missing one is fine.
    static let defaultConfigPath = "/etc/whereabouts/locator.conf"

    static let usage = """
        usage: whereabouts-locator --map FILE --broker mqtt://HOST[:PORT] [options]

        Every option can also be set in the environment, an --env-file or /etc/whereabouts/locator.conf, with the
        WHEREABOUTS_* name shown or, where none is shown, the flag's name in capitals after WHEREABOUTS_ (such as
        WHEREABOUTS_KEEPALIVE); precedence: flag > environment > env file > locator.conf > default.

          --map FILE               floor map (env WHEREABOUTS_MAP)
        \(BrokerSettings.usage)
          --client-id ID           MQTT client id (default whereabouts-locator; env WHEREABOUTS_CLIENT_ID)
          --keepalive SECONDS      MQTT keepalive (default 30)
          --record FILE            append every accepted reading to FILE (JSON Lines; see docs/formats.md)
          --state-dir DIR          keep the ledger of batches taken here across restarts, so that a batch the
                                   broker delivers again after a stop is not taken twice (an absolute path,
                                   created if missing; default: systemd's $STATE_DIRECTORY; unset: memory only;
                                   env WHEREABOUTS_STATE_DIR)
          --warm-up SECONDS        hold occupancy back this long after the first batch (default 10)
          --update-interval S      coalesce engine updates this long at most (default 0.02)
          --estimate-interval S    estimate each tag again at most this often; its readings in between wait in
                                   its filters (default 0.5; 0: a moving tag at every update; the grid
                                   filter estimates a moving tag as often as a still one)
          --still-estimate-interval S
                                   the same for a tag standing still (default 1; at most as often as
                                   --estimate-interval; 0: as often as a moving tag; both 0: every tag at
                                   every update)
          --positioning MODE       grid: a Bayes filter over the floor's cells (default); trilateration:
                                   ranges and a Kalman track
          --lag SECONDS            report each tag's position this much later, smoothed with the readings
                                   that came since (0-10; grid filter only; default 0: no delay)
          --workers N              threads an update may split its estimates among (default: the cores online;
                                   the estimates are the same with any number)
          --metrics-interval S     seconds between metrics messages (default 10)
          --no-discovery           do not announce Home Assistant discovery configs
          --time-scale X           run the clock X times faster than real time from --time-origin, to follow
                                   an accelerated simulator (`whereabouts sim --speed X`; default 1)
          --time-origin UNIX       where the scaled clock starts (default: now)
          --calibration MODE       guided: the map's radio constants (default); auto: also fit them from the
                                   agents' beacons; off: the map's defaults only (env WHEREABOUTS_CALIBRATION)
          --calibration-interval S seconds between automatic fits (default 600)
          --role ROLE              single: the site's only locator (default); auto: one of a pair, active while
                                   it holds the lease on the broker, a warm standby otherwise (docs/scale.md)
          --lease-time SECONDS     with --role auto: how long a lease renewal holds (default 3)
          --floors 1,2             own only these floors (majors) of the map's site, when the site is split
                                   between locators: hear their agents and those of the floors around them,
                                   publish their zones and the tags on them (docs/scale.md; env WHEREABOUTS_FLOORS)
          --floor-margin N         with --floors: hear the agents of N floors above and below (default 2)
          --log-level LEVEL        debug, info, warning or error (default info; env WHEREABOUTS_LOG_LEVEL)
          --env-file FILE          KEY=VALUE file of WHEREABOUTS_* settings
          --config FILE            configuration file (default /etc/whereabouts/locator.conf)

        exit status: 0 clean shutdown, 1 runtime failure, 2 bad usage or bad map
        """

    /// Every setting the locator takes.
    static let table: [Setting] =
        [.value("map", "WHEREABOUTS_MAP")] + Setting.broker + [
            .value("client-id", "WHEREABOUTS_CLIENT_ID"),
            .value("keepalive", "WHEREABOUTS_KEEPALIVE"),
            .value("record", "WHEREABOUTS_RECORD"),
            .value("state-dir", "WHEREABOUTS_STATE_DIR"),
            .value("warm-up", "WHEREABOUTS_WARM_UP"),
            .value("update-interval", "WHEREABOUTS_UPDATE_INTERVAL"),
            .value("estimate-interval", "WHEREABOUTS_ESTIMATE_INTERVAL"),
            .value("still-estimate-interval", "WHEREABOUTS_STILL_ESTIMATE_INTERVAL"),
            .value("positioning", "WHEREABOUTS_POSITIONING"),
            .value("lag", "WHEREABOUTS_LAG"),
            .value("workers", "WHEREABOUTS_WORKERS"),
            .value("metrics-interval", "WHEREABOUTS_METRICS_INTERVAL"),
            .switchFlag("no-discovery", "WHEREABOUTS_NO_DISCOVERY"),
            .value("time-scale", "WHEREABOUTS_TIME_SCALE"),
            .value("time-origin", "WHEREABOUTS_TIME_ORIGIN"),
            .value("calibration", "WHEREABOUTS_CALIBRATION"),
            .value("calibration-interval", "WHEREABOUTS_CALIBRATION_INTERVAL"),
            .value("role", "WHEREABOUTS_ROLE"),
            .value("lease-time", "WHEREABOUTS_LEASE_TIME"),
            .value("floors", "WHEREABOUTS_FLOORS"),
            .value("floor-margin", "WHEREABOUTS_FLOOR_MARGIN"),
            .value("log-level", "WHEREABOUTS_LOG_LEVEL"),
        ]

    var mapPath: String
    var broker: BrokerAddress
    var client: MQTTClientConfiguration
    var recordPath: String?
    /// Where the batch ledger is kept across restarts: `--state-dir`, else systemd's `STATE_DIRECTORY` (the unit's
    /// `StateDirectory=`); nil: in memory only.
    var stateDirectory: String?
    var pipeline = LocatorPipeline.Configuration()
    var updateInterval = 0.02
    var logLevel = Logger.Level.info
    var insecure = false
    var clock = ScaledClock()
    /// With `--role auto`: the lease that makes this locator one of a pair (its holder id is its `--username`, else
    /// its client id).
    var lease: LeaseKeeper.Configuration?

    /// Reads this process's settings.
    init(_ arguments: [String]) throws(SettingsError) {
        try self.init(
            Settings(processArguments: arguments, table: Self.table, configFile: Self.defaultConfigPath),
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
        let leaseTime = try settings.number("lease-time", in: 1...60) ?? 3
        switch settings.value("role") ?? "single" {
        case "single": break
        case "auto":
            // One lease per site: a pair of split locators would need one per share (docs/scale.md), not built yet.
            guard pipeline.floors == nil else {
                throw .invalid("--role auto cannot be used with --floors yet: the lease is one per site, not per share")
            }
            // The account when one is named (the broker ties client ids to accounts), else the client id; with a
            // number of this process's own, so that two locators started under one name are still two holders.
            lease = LeaseKeeper.Configuration(
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
