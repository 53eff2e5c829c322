public import WhereaboutsAdvertising
public import WhereaboutsCore
public import WhereaboutsSettings
public import WhereaboutsWire

/// Everything the agent is told, from flags, the environment, an environment file and `agent.conf`.
///
/// Each setting is looked up in this order, the first that has it winning: the command-line flag, the process
/// environment, the file given by `--env-file`, the configuration file (`--config`, by default
/// `/etc/whereabouts/agent.conf`; a missing default file is fine), then the default. Files use the environment
/// variable names (`WHEREABOUTS_ID=hall-1`); switches there take `true`/`false`, lists are comma-separated. Unknown
/// `WHEREABOUTS_*` keys in files are errors (a typo should not pass silently); the process environment may carry
/// other programs' variables. The password is never a flag: `--password-file`, or `WHEREABOUTS_PASSWORD` in the
/// environment or a file.
///
/// Parsing is pure: the shell passes the arguments, the environment and a function that reads files.
public struct AgentSettings: Sendable {
    /// Where HCI events come from.
    public enum Source: Sendable, Hashable {
        /// A live controller, such as `hci0`.
        case hci(device: String)
        /// A controller on an H4 byte stream: a UART or pty, or an emulator's Unix socket (`btvirt -s`).
        case h4(path: String)
        /// A btsnoop capture replayed through the same pipeline.
        case btsnoop(path: String)
    }

    /// Whether the board advertises itself as an iBeacon.
    public enum Advertising: Sendable, Hashable {
        /// Not advertising, and why (said once at info level).
        case off(reason: String)
        /// Advertising this iBeacon.
        case on(IBeaconAdvertisement)
    }

    /// The default configuration file.
    public static let defaultConfigPath = "/etc/whereabouts/agent.conf"

    /// The environment variables the agent reads, so the shell can collect just these.
    public static var environmentKeys: [String] { (table.compactMap(\.key) + ["STATE_DIRECTORY"]).sorted() }

    /// The agent's id: its MQTT username, client id and topic level.
    public var agent: AgentID
    /// The site (proximity UUID) the agent publishes under.
    public var site: BeaconUUID
    /// The broker URL as given (`mqtt://host[:port]` or `mqtts://…`); the shell parses it.
    public var broker: String
    /// The broker account; defaults to the agent id.
    public var username: String
    /// The password itself, when given in the environment or a file.
    public var password: String?
    /// A file holding the password.
    public var passwordFile: String?
    /// CA certificates to verify the broker.
    public var caFile: String?
    /// The client certificate.
    public var certFile: String?
    /// The client certificate's key.
    public var keyFile: String?
    /// Skip verifying the broker's certificate.
    public var insecure = false
    /// Where events come from.
    public var source: Source = .hci(device: "hci0")
    /// Active scanning (scan requests) instead of passive listening.
    public var activeScan = false
    /// The scan interval, milliseconds.
    public var scanIntervalMilliseconds = 100.0
    /// The scan window, milliseconds.
    public var scanWindowMilliseconds = 100.0
    /// The replay pace for a btsnoop source.
    public var replaySpeed = ReplaySpeed.factor(1)
    /// Keep the capture's times instead of shifting them to now.
    public var keepTimes = false
    /// What is published.
    public var filter: SightingFilter
    /// The batching window, seconds.
    public var window = 1.0
    /// The most tags one window holds.
    public var maximumTags = 1024
    /// The most batches kept while the broker is unreachable.
    public var bufferBatches = 600
    /// Whether and what to advertise.
    public var advertising: Advertising
    /// The agent's floor (the major of its own beacon).
    public var floor: UInt16?
    /// `debug`, `info`, `warning` or `error`.
    public var logLevel = "info"
    /// The MQTT keepalive, seconds.
    public var keepAlive = 30
    /// The longest wait between reconnection attempts, seconds.
    public var reconnectMaximum = 30.0
    /// Silence after steady reports that restarts the scan, seconds.
    public var watchdogTimeout = 30.0
    /// How often the counters are logged, seconds.
    public var metricsInterval = 60.0
    /// How long shutdown waits for outstanding acknowledgements, seconds.
    public var shutdownTimeout = 3.0
    /// Where unacknowledged batches are kept across restarts: `--state-dir`, else systemd's `STATE_DIRECTORY`
    /// (its first entry); nil keeps them in memory only.
    public var stateDirectory: String?

    /// The usage text.
    public static let usage = """
        usage: whereabouts-agent --id ID --site UUID --broker mqtt://HOST[:PORT] [options]

        Every option can also be set in the environment, an --env-file or /etc/whereabouts/agent.conf, with the
        name shown (precedence: flag > environment > env file > agent.conf > default).

        identity and broker
          --id ID                  agent id, [A-Za-z0-9_-]{1,64}                     WHEREABOUTS_ID
          --site UUID              site proximity UUID                                WHEREABOUTS_SITE
          --broker URL             mqtt://host[:port] or mqtts://host[:port]          WHEREABOUTS_BROKER
          --username NAME          broker account (default: the agent id)             WHEREABOUTS_USERNAME
          --password-file FILE     file holding the password                          WHEREABOUTS_PASSWORD_FILE
                                   (or the password itself in WHEREABOUTS_PASSWORD; never on the command line)
          --ca-file FILE           CA certificate(s) to verify the broker             WHEREABOUTS_CA_FILE
          --cert-file FILE         client certificate                                 WHEREABOUTS_CERT_FILE
          --key-file FILE          client key                                         WHEREABOUTS_KEY_FILE
          --insecure               do not verify the broker's certificate (warned)    WHEREABOUTS_INSECURE
          --keepalive SECONDS      MQTT keepalive, 5-3600 (default 30)                WHEREABOUTS_KEEPALIVE
          --reconnect-max SECONDS  longest reconnect backoff, 1-300 (default 30)      WHEREABOUTS_RECONNECT_MAX

        radio
          --device NAME            Bluetooth controller (default hci0), or h4:PATH    WHEREABOUTS_DEVICE
                                   for H4 on a UART, pty or emulator socket (btvirt)
          --source SOURCE          hci:NAME, h4:PATH, or btsnoop:FILE (a replay)      WHEREABOUTS_SOURCE
          --active                 active scanning (default passive)                  WHEREABOUTS_ACTIVE
          --scan-interval MS       scan interval, 2.5-10240 ms (default 100)          WHEREABOUTS_SCAN_INTERVAL
          --scan-window MS         scan window, at most the interval (default 100)    WHEREABOUTS_SCAN_WINDOW
          --watchdog-timeout S     restart a scan silent this long (default 30)       WHEREABOUTS_WATCHDOG_TIMEOUT
          --replay-speed SPEED     fast, or a factor such as 1 (default 1)            WHEREABOUTS_REPLAY_SPEED
          --keep-times             keep a replay's recorded times                     WHEREABOUTS_KEEP_TIMES

        what is published
          --constraint UUID[:MAJOR[:MINOR]]  repeatable (default: the site UUID)      WHEREABOUTS_CONSTRAINTS
                                   any: every beacon, whatever its UUID (a survey)
          --rssi-floor DBM         drop weaker adverts                                WHEREABOUTS_RSSI_FLOOR
          --address MAC            also track this device by address; repeatable      WHEREABOUTS_ADDRESSES
          --window SECONDS         batching window, 0.1-60 (default 1)                WHEREABOUTS_WINDOW
          --max-tags N             tags per window, 1-2000 (default 1024)             WHEREABOUTS_MAX_TAGS
          --buffer-batches N       batches kept while the broker is away (600)        WHEREABOUTS_BUFFER_BATCHES
          --state-dir DIR          keep unacknowledged batches on disk here           WHEREABOUTS_STATE_DIR
                                   (default: systemd's $STATE_DIRECTORY; unset: in memory only)

        transmitter
          --floor N                this board's floor: advertise site:N:minor(id)     WHEREABOUTS_FLOOR
          --advertise UUID:MAJOR:MINOR[:POWER]  advertise this iBeacon instead         WHEREABOUTS_ADVERTISE
          --no-advertise           do not advertise                                   WHEREABOUTS_NO_ADVERTISE

        other
          --log-level LEVEL        debug, info, warning or error (default info)       WHEREABOUTS_LOG_LEVEL
          --metrics-interval S     how often counters are logged (default 60)         WHEREABOUTS_METRICS_INTERVAL
          --env-file FILE          KEY=VALUE file of WHEREABOUTS_* settings
          --config FILE            configuration file (default /etc/whereabouts/agent.conf)

        A btsnoop replay ends the agent when the capture ends.
        exit status: 0 clean shutdown, 1 runtime failure (no Bluetooth, broker refused us), 2 bad usage
        """

    /// Reads the settings.
    ///
    /// - Parameters:
    ///   - arguments: The command-line arguments, without the program name.
    ///   - environment: The process environment.
    ///   - readFile: Reads the `--env-file` and the configuration file.
    /// - Throws: ``SettingsError`` naming the setting at fault, or `.help`.
    public static func parse(
        arguments: [String], environment: [String: String], readFile: (String) -> SettingsFile
    ) throws(SettingsError) -> AgentSettings {
        var parsed = try AgentSettings(
            Settings(
                arguments: arguments, table: table, environment: environment, configFile: defaultConfigPath,
                readFile: readFile))
        // systemd's StateDirectory= sets STATE_DIRECTORY (colon-separated when several are listed).
        if parsed.stateDirectory == nil, let systemd = environment["STATE_DIRECTORY"]?.split(separator: ":").first {
            parsed.stateDirectory = String(systemd)
        }
        return parsed
    }

    private init(_ settings: Settings) throws(SettingsError) {
        let idText = try settings.required("id")
        guard let agent = AgentID(idText) else {
            throw .invalid("--id \"\(idText)\" is not a valid agent id: use 1 to 64 characters from A-Z a-z 0-9 _ -")
        }
        let siteText = try settings.required("site", "the site's proximity UUID")
        guard let site = BeaconUUID(siteText) else {
            throw .invalid("--site \"\(siteText)\" is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)")
        }
        let broker = try settings.required("broker", "mqtt://host[:port] or mqtts://host[:port]")
        self.agent = agent
        self.site = site
        self.broker = broker
        username = settings.value("username") ?? agent.rawValue
        password = settings.value("password")
        passwordFile = settings.value("password-file")
        caFile = settings.value("ca-file")
        certFile = settings.value("cert-file")
        keyFile = settings.value("key-file")
        if (certFile == nil) != (keyFile == nil) { throw .invalid("--cert-file and --key-file go together") }
        insecure = try settings.switchValue("insecure")

        if let sourceText = settings.value("source") {
            if sourceText.hasPrefix("btsnoop:"), sourceText.count > 8 {
                source = .btsnoop(path: String(sourceText.dropFirst(8)))
            } else if sourceText.hasPrefix("hci:"), sourceText.count > 4 {
                source = .hci(device: String(sourceText.dropFirst(4)))
            } else if sourceText.hasPrefix("h4:"), sourceText.count > 3 {
                source = .h4(path: String(sourceText.dropFirst(3)))
            } else {
                throw .invalid("--source must be hci:DEVICE, h4:PATH or btsnoop:FILE, not \"\(sourceText)\"")
            }
            if settings.value("device") != nil, case .btsnoop = source {
                throw .invalid("--device and --source btsnoop:FILE exclude each other")
            }
        }
        if let device = settings.value("device") {
            if device.hasPrefix("h4:"), device.count > 3 {
                source = .h4(path: String(device.dropFirst(3)))
            } else {
                guard device.hasPrefix("hci"), device.count > 3, device.dropFirst(3).allSatisfy(\.isASCIIDigit) else {
                    throw .invalid("--device must name a controller such as hci0, or h4:PATH, not \"\(device)\"")
                }
                source = .hci(device: device)
            }
        }
        activeScan = try settings.switchValue("active")
        scanIntervalMilliseconds = try settings.number("scan-interval", in: 2.5...10240) ?? 100
        scanWindowMilliseconds =
            try settings.number("scan-window", in: 2.5...10240) ?? min(100, scanIntervalMilliseconds)
        guard scanWindowMilliseconds <= scanIntervalMilliseconds else {
            throw .invalid("--scan-window must not be longer than --scan-interval")
        }
        watchdogTimeout = try settings.number("watchdog-timeout", in: 5...3600) ?? 30
        if let speedText = settings.value("replay-speed") {
            guard let speed = ReplaySpeed(speedText) else {
                throw .invalid("--replay-speed must be fast or a factor from 0 to 1000, not \"\(speedText)\"")
            }
            replaySpeed = speed
        }
        keepTimes = try settings.switchValue("keep-times")

        var constraints: [BeaconIdentityConstraint] = []
        var selectsAllBeacons = false
        for text in settings.list("constraint") {
            // `any`: every beacon heard, whatever its UUID (a site survey).
            if text.lowercased() == "any" {
                selectsAllBeacons = true
                continue
            }
            guard let constraint = BeaconIdentityConstraint(text) else {
                throw .invalid("--constraint must be any, UUID, UUID:MAJOR or UUID:MAJOR:MINOR, not \"\(text)\"")
            }
            constraints.append(constraint)
        }
        if constraints.isEmpty, !selectsAllBeacons { constraints = [BeaconIdentityConstraint(uuid: site)] }
        var addresses: Set<DeviceAddress> = []
        for text in settings.list("address") {
            guard let address = DeviceAddress(text) else {
                throw .invalid("--address must be a device address such as AA:BB:CC:DD:EE:FF, not \"\(text)\"")
            }
            addresses.insert(address)
        }
        let rssiFloor = try settings.integer("rssi-floor", in: -127...20)
        filter = SightingFilter(
            constraints: constraints, addresses: addresses, minimumRSSI: rssiFloor, selectsAllBeacons: selectsAllBeacons
        )
        window = try settings.number("window", in: 0.1...60) ?? 1
        maximumTags = try settings.integer("max-tags", in: 1...2000) ?? 1024
        bufferBatches = try settings.integer("buffer-batches", in: 1...86_400) ?? 600
        keepAlive = try settings.integer("keepalive", in: 5...3600) ?? 30
        reconnectMaximum = try settings.number("reconnect-max", in: 1...300) ?? 30
        metricsInterval = try settings.number("metrics-interval", in: 1...86_400) ?? 60
        stateDirectory = settings.value("state-dir")
        if let stateDirectory, !stateDirectory.hasPrefix("/") {
            throw .invalid("--state-dir must be an absolute path, not \"\(stateDirectory)\"")
        }

        self.floor = try settings.integer("floor", in: 0...65535).map { UInt16($0) }
        if try settings.switchValue("no-advertise") {
            advertising = .off(reason: "advertising is turned off (--no-advertise)")
        } else if let text = settings.value("advertise") {
            guard let advertisement = AgentAdvertisement.parse(text) else {
                throw .invalid("--advertise must be UUID:MAJOR:MINOR[:POWER], not \"\(text)\"")
            }
            advertising = .on(advertisement)
        } else if let floor = self.floor {
            advertising = .on(AgentAdvertisement.advertisement(site: site, floor: floor, agent: agent))
        } else {
            advertising = .off(reason: "no --floor given, so this board does not advertise itself")
        }
        let level = settings.value("log-level") ?? "info"
        guard ["debug", "info", "warning", "error"].contains(level) else {
            throw .invalid("--log-level must be debug, info, warning or error, not \"\(level)\"")
        }
        logLevel = level
        if insecure, !broker.hasPrefix("mqtts://") { throw .invalid("--insecure only makes sense with mqtts://") }
    }
}

// MARK: - The table

extension AgentSettings {
    /// Every setting the agent takes, with its flag and its name in the environment and files.
    static let table: [Setting] =
        [
            .value("id", "WHEREABOUTS_ID"),
            .value("site", "WHEREABOUTS_SITE"),
        ] + Setting.broker + [
            .value("keepalive", "WHEREABOUTS_KEEPALIVE"),
            .value("reconnect-max", "WHEREABOUTS_RECONNECT_MAX"),
            .value("device", "WHEREABOUTS_DEVICE"),
            .value("source", "WHEREABOUTS_SOURCE"),
            .switchFlag("active", "WHEREABOUTS_ACTIVE"),
            .value("scan-interval", "WHEREABOUTS_SCAN_INTERVAL"),
            .value("scan-window", "WHEREABOUTS_SCAN_WINDOW"),
            .value("watchdog-timeout", "WHEREABOUTS_WATCHDOG_TIMEOUT"),
            .value("replay-speed", "WHEREABOUTS_REPLAY_SPEED"),
            .switchFlag("keep-times", "WHEREABOUTS_KEEP_TIMES"),
            .list("constraint", "WHEREABOUTS_CONSTRAINTS"),
            .value("rssi-floor", "WHEREABOUTS_RSSI_FLOOR"),
            .list("address", "WHEREABOUTS_ADDRESSES"),
            .value("window", "WHEREABOUTS_WINDOW"),
            .value("max-tags", "WHEREABOUTS_MAX_TAGS"),
            .value("buffer-batches", "WHEREABOUTS_BUFFER_BATCHES"),
            .value("state-dir", "WHEREABOUTS_STATE_DIR"),
            .value("floor", "WHEREABOUTS_FLOOR"),
            .value("advertise", "WHEREABOUTS_ADVERTISE"),
            .switchFlag("no-advertise", "WHEREABOUTS_NO_ADVERTISE"),
            .value("log-level", "WHEREABOUTS_LOG_LEVEL"),
            .value("metrics-interval", "WHEREABOUTS_METRICS_INTERVAL"),
        ]
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
