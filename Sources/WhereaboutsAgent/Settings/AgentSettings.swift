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
    public static var environmentKeys: [String] {
        (interface.table.compactMap(\.key) + ["STATE_DIRECTORY"]).sorted()
    }

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
    /// Take GATT jobs from the operator (`--gatt`): subscribe to this agent's requests topic and run each job on
    /// the controller beside the scan.
    public var gatt = false
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

    /// The usage text, made from ``interface``.
    public static var usage: String { interface.usage }

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
        switch try invocation(arguments: arguments, environment: environment, readFile: readFile) {
        case .run(let settings): return settings
        case .check: throw .invalid("--check asks for a check of the radio, not a run of the agent")
        }
    }

    /// Reads what the command line asks for: a run of the agent, or (`--check`) a check of the radio, which needs
    /// no broker, id or advertising settings.
    ///
    /// - Throws: ``SettingsError`` naming the setting at fault, or `.help`.
    public static func invocation(
        arguments: [String], environment: [String: String], readFile: (String) -> SettingsFile
    ) throws(SettingsError) -> AgentInvocation {
        let settings = try Settings(
            arguments: arguments, interface: interface, environment: environment, readFile: readFile)
        if try settings.switchValue("check") { return .check(try AgentCheckSettings(settings)) }
        for name in ["check-timeout", "check-count"] where settings.value(name) != nil {
            throw .invalid("--\(name) goes with --check")
        }
        var parsed = try AgentSettings(settings)
        // systemd's StateDirectory= sets STATE_DIRECTORY (colon-separated when several are listed).
        if parsed.stateDirectory == nil, let systemd = environment["STATE_DIRECTORY"]?.split(separator: ":").first {
            parsed.stateDirectory = String(systemd)
        }
        return .run(parsed)
    }

    private init(_ settings: Settings) throws(SettingsError) {
        let idText = try settings.required("id")
        guard let agent = AgentID(idText) else {
            throw .invalid("--id \"\(idText)\" is not a valid agent id: use 1 to 64 characters from A-Z a-z 0-9 _ -")
        }
        let site = try Self.siteUUID(settings, "the site's proximity UUID")
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

        if let source = try Self.source(settings) { self.source = source }
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
        gatt = try settings.switchValue("gatt")
        if gatt, case .btsnoop = source { throw .invalid("--gatt needs a live controller, not a btsnoop replay") }

        filter = try Self.filter(settings, site: site)
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

        let floor = try settings.integer("floor", in: 0...65535).map { UInt16($0) }
        self.floor = floor
        advertising = try Self.advertising(settings, site: site, agent: agent, floor: floor)
        let level = settings.value("log-level") ?? "info"
        guard ["debug", "info", "warning", "error"].contains(level) else {
            throw .invalid("--log-level must be debug, info, warning or error, not \"\(level)\"")
        }
        logLevel = level
        if insecure, !broker.hasPrefix("mqtts://") { throw .invalid("--insecure only makes sense with mqtts://") }
    }

    /// `--site`, required; `what` says what it is for.
    static func siteUUID(_ settings: Settings, _ what: String) throws(SettingsError) -> BeaconUUID {
        let siteText = try settings.required("site", what)
        guard let site = BeaconUUID(siteText) else {
            throw .invalid("--site \"\(siteText)\" is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)")
        }
        return site
    }

    /// `--source` and `--device`: where events come from, nil for the default controller.
    static func source(_ settings: Settings) throws(SettingsError) -> Source? {
        var source: Source?
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
            if settings.value("device") != nil, case .btsnoop? = source {
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
        return source
    }

    /// What is published: `--constraint` (the site's UUID by default, `any` for every beacon), `--address` and
    /// `--rssi-floor`.
    static func filter(_ settings: Settings, site: BeaconUUID?) throws(SettingsError) -> SightingFilter {
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
        if constraints.isEmpty, !selectsAllBeacons {
            // Only the check may come without a site; it listens for the site's beacons unless told otherwise.
            var uuid = site
            if uuid == nil {
                uuid = try siteUUID(settings, "the site's UUID, whose beacons to listen for (or --constraint)")
            }
            if let uuid { constraints = [BeaconIdentityConstraint(uuid: uuid)] }
        }
        var addresses: Set<DeviceAddress> = []
        for text in settings.list("address") {
            guard let address = DeviceAddress(text) else {
                throw .invalid("--address must be a device address such as AA:BB:CC:DD:EE:FF, not \"\(text)\"")
            }
            addresses.insert(address)
        }
        let rssiFloor = try settings.integer("rssi-floor", in: -127...20)
        return SightingFilter(
            constraints: constraints, addresses: addresses, minimumRSSI: rssiFloor, selectsAllBeacons: selectsAllBeacons
        )
    }

    /// `--no-advertise`, `--advertise` or, from `--floor`, the board's own beacon.
    private static func advertising(
        _ settings: Settings, site: BeaconUUID, agent: AgentID, floor: UInt16?
    ) throws(SettingsError) -> Advertising {
        if try settings.switchValue("no-advertise") {
            return .off(reason: "advertising is turned off (--no-advertise)")
        } else if let text = settings.value("advertise") {
            guard let advertisement = AgentAdvertisement.parse(text) else {
                throw .invalid("--advertise must be UUID:MAJOR:MINOR[:POWER], not \"\(text)\"")
            }
            return .on(advertisement)
        } else if let floor {
            return .on(AgentAdvertisement.advertisement(site: site, floor: floor, agent: agent))
        } else {
            return .off(reason: "no --floor given, so this board does not advertise itself")
        }
    }
}

// MARK: - The table

extension AgentSettings {
    /// Every setting the agent takes, with its flag, its help and its name in the environment and files.
    public static let interface = CommandInterface(
        program: "whereabouts-agent",
        synopsis: """
            whereabouts-agent --id ID --site UUID --broker mqtt://HOST[:PORT] [options]
                   whereabouts-agent --check [--site UUID] [--device NAME] [--check-timeout S] [--check-count N]
            """,
        sections: [
            .init(
                "identity and broker",
                [
                    .value("id", "ID", "agent id, [A-Za-z0-9_-]{1,64}"),
                    .value("site", "UUID", "site proximity UUID"),
                ] + Setting.broker(defaultUsername: "the agent id") + [
                    .value("keepalive", "SECONDS", "MQTT keepalive, 5-3600", default: "30"),
                    .value("reconnect-max", "SECONDS", "longest reconnect backoff, 1-300", default: "30"),
                ]),
            .init(
                "radio",
                [
                    .value(
                        "device", "NAME",
                        "Bluetooth controller, or h4:PATH for H4 on a UART, pty or emulator socket (btvirt)",
                        default: "hci0"),
                    .value("source", "SOURCE", "hci:NAME, h4:PATH, or btsnoop:FILE (a replay)"),
                    .switchFlag("active", "active scanning (default passive)"),
                    .value("scan-interval", "MS", "scan interval, 2.5-10240 ms", default: "100"),
                    .value("scan-window", "MS", "scan window, at most the interval", default: "100"),
                    .value("watchdog-timeout", "S", "restart a scan silent this long, 5-3600", default: "30"),
                    .value("replay-speed", "SPEED", "fast, or a factor such as 1", default: "1"),
                    .switchFlag("keep-times", "keep a replay's recorded times"),
                    .switchFlag("gatt", "take GATT jobs (battery, info, provision) from the operator's requests"),
                ]),
            .init(
                "what is published",
                [
                    .list(
                        "constraint", "UUID[:MAJOR[:MINOR]]",
                        "beacons to publish; any: every beacon, whatever its UUID (a survey)",
                        default: "the site UUID", key: .named("WHEREABOUTS_CONSTRAINTS")),
                    .value("rssi-floor", "DBM", "drop weaker adverts"),
                    .list(
                        "address", "MAC", "also track this device by address",
                        key: .named("WHEREABOUTS_ADDRESSES")),
                    .value("window", "SECONDS", "batching window, 0.1-60", default: "1"),
                    .value("max-tags", "N", "tags per window, 1-2000", default: "1024"),
                    .value("buffer-batches", "N", "batches kept while the broker is away", default: "600"),
                    .value(
                        "state-dir", "DIR", "keep unacknowledged batches on disk here (unset: in memory only)",
                        default: "systemd's $STATE_DIRECTORY"),
                ]),
            .init(
                "transmitter",
                [
                    .value("floor", "N", "this board's floor: advertise site:N:minor(id)"),
                    .value("advertise", "UUID:MAJOR:MINOR[:POWER]", "advertise this iBeacon instead"),
                    .switchFlag("no-advertise", "do not advertise"),
                ]),
            .init(
                "check (no broker needed)",
                [
                    .switchFlag(
                        "check", "print the controller and the first beacons the agent would publish, then exit",
                        key: .flagOnly),
                    .value(
                        "check-timeout", "S", "give up after this long, 1-600 s (exit 1 if nothing was heard)",
                        default: "10", key: .flagOnly),
                    .value(
                        "check-count", "N", "stop early after this many beacons, 1-1000", default: "5", key: .flagOnly),
                ]),
            .init(
                "other",
                [
                    .value("log-level", "LEVEL", "debug, info, warning or error", default: "info"),
                    .value("metrics-interval", "S", "how often counters are logged", default: "60"),
                ]),
        ],
        notes: """
            A btsnoop replay ends the agent when the capture ends.
            exit status: 0 clean shutdown, 1 runtime failure (no Bluetooth, broker refused us), 2 bad usage
            --check: 0 when it heard a beacon the agent would publish, 1 when none (or no controller), 2 bad usage
            """,
        configFile: defaultConfigPath)
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
