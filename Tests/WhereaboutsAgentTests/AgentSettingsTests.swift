import Testing
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsCore
import WhereaboutsSettings
import WhereaboutsWire

@Suite("Agent settings")
struct AgentSettingsTests {
    static let site = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    static let required = ["--id", "hall-1", "--site", site, "--broker", "mqtt://broker.local"]

    /// Parses with in-memory files: `files[path]` is the text; any other path is missing.
    func parse(
        _ arguments: [String], environment: [String: String] = [:], files: [String: String] = [:]
    ) throws(SettingsError) -> AgentSettings {
        try AgentSettings.parse(arguments: arguments, environment: environment) { path in
            files[path].map(SettingsFile.text) ?? .missing
        }
    }

    /// The error message for a command line that must be refused.
    func refusal(
        _ arguments: [String], environment: [String: String] = [:], files: [String: String] = [:]
    ) -> String? {
        do {
            _ = try parse(arguments, environment: environment, files: files)
            return nil
        } catch {
            return error.description
        }
    }

    @Test("the defaults: hci0, passive, 1 s windows, the site UUID as constraint, username = id, no advertising")
    func defaults() throws {
        let settings = try parse(Self.required)
        #expect(settings.agent.rawValue == "hall-1")
        #expect(settings.source == .hci(device: "hci0"))
        #expect(!settings.activeScan)
        #expect(settings.window == 1)
        #expect(settings.bufferBatches == 600)
        #expect(settings.username == "hall-1")
        #expect(settings.filter.constraints.map(\.description) == [Self.site])
        guard case .off = settings.advertising else {
            Issue.record("advertises without a floor")
            return
        }
    }

    @Test("--gatt (or WHEREABOUTS_GATT) takes GATT jobs on a live controller; a replay cannot run them")
    func gatt() throws {
        #expect(try !parse(Self.required).gatt)
        #expect(try parse(Self.required + ["--gatt"]).gatt)
        #expect(try parse(Self.required, environment: ["WHEREABOUTS_GATT": "yes"]).gatt)
        let refused = refusal(Self.required + ["--gatt", "--source", "btsnoop:/tmp/capture.btsnoop"])
        #expect(refused?.contains("--gatt needs a live controller") == true, "\(refused ?? "accepted")")
    }

    @Test("--constraint any selects every beacon, whatever its UUID; beside others it still selects all")
    func constraintAny() throws {
        let any = try parse(Self.required + ["--constraint", "any"])
        #expect(any.filter.selectsAllBeacons)
        #expect(any.filter.constraints.isEmpty)
        let foreign = try #require(BeaconUUID("11111111-2222-3333-4444-555555555555"))
        #expect(any.filter.selects(.iBeacon(uuid: foreign, major: 7, minor: 8)))
        let mixed = try parse(Self.required + ["--constraint", Self.site, "--constraint", "ANY"])
        #expect(mixed.filter.selectsAllBeacons)
        #expect(!(try parse(Self.required)).filter.selectsAllBeacons)
        #expect(refusal(Self.required + ["--constraint", "anything"])?.contains("any, UUID") == true)
    }

    @Test("flags beat the environment, which beats the env file, which beats agent.conf")
    func precedence() throws {
        let conf = """
            # agent.conf
            WHEREABOUTS_ID=from-conf
            WHEREABOUTS_SITE=\(Self.site)
            WHEREABOUTS_BROKER=mqtt://conf
            WHEREABOUTS_WINDOW=5
            WHEREABOUTS_BUFFER_BATCHES=100
            WHEREABOUTS_FLOOR=2
            """
        let envFile = """
            export WHEREABOUTS_BROKER="mqtt://envfile"
            WHEREABOUTS_WINDOW = 2
            WHEREABOUTS_ACTIVE=true
            """
        let files = ["/etc/whereabouts/agent.conf": conf, "/run/agent.env": envFile]
        let settings = try parse(
            ["--env-file", "/run/agent.env", "--window", "0.5"],
            environment: ["WHEREABOUTS_BROKER": "mqtt://environment", "PATH": "/bin"], files: files)
        #expect(settings.agent.rawValue == "from-conf")
        #expect(settings.broker == "mqtt://environment")
        #expect(settings.window == 0.5)
        #expect(settings.activeScan)
        #expect(settings.bufferBatches == 100)
        #expect(settings.floor == 2)
        let fromFile = try parse(["--env-file", "/run/agent.env"], files: files)
        #expect(fromFile.broker == "mqtt://envfile")
        #expect(fromFile.window == 2)
        let confOnly = try parse([], files: files)
        #expect(confOnly.broker == "mqtt://conf")
        #expect(confOnly.window == 5)
    }

    @Test("a missing default agent.conf is fine; a missing --config or --env-file is an error")
    func missingFiles() {
        #expect(refusal(Self.required) == nil)
        #expect(refusal(Self.required + ["--config", "/nowhere.conf"])?.contains("/nowhere.conf") == true)
        #expect(refusal(Self.required + ["--env-file", "/nowhere.env"])?.contains("/nowhere.env") == true)
    }

    @Test(
        "bad usage is refused with a message naming the setting",
        arguments: [
            (["--site", site, "--broker", "mqtt://b"], "--id"),
            (["--id", "a/b", "--site", site, "--broker", "mqtt://b"], "agent id"),
            (["--id", "a+b", "--site", site, "--broker", "mqtt://b"], "agent id"),
            (["--id", String(repeating: "a", count: 65), "--site", site, "--broker", "mqtt://b"], "agent id"),
            (["--id", "a", "--site", "not-a-uuid", "--broker", "mqtt://b"], "UUID"),
            (["--id", "a", "--broker", "mqtt://b"], "--site"),
            (["--id", "a", "--site", site], "--broker"),
            (required + ["--password", "hunter2"], "never taken on the command line"),
            (required + ["--window", "0"], "--window"),
            (required + ["--window", "abc"], "--window"),
            (required + ["--constraint", "nope"], "--constraint"),
            (required + ["--address", "11:22"], "--address"),
            (required + ["--rssi-floor", "-200"], "--rssi-floor"),
            (required + ["--replay-speed", "slow"], "--replay-speed"),
            (required + ["--source", "usb:1"], "--source"),
            (required + ["--device", "eth0"], "--device"),
            (required + ["--device", "h4:"], "--device"),
            (required + ["--source", "h4:"], "--source"),
            (required + ["--scan-window", "200", "--scan-interval", "100"], "--scan-window"),
            (required + ["--advertise", "x:1:2"], "--advertise"),
            (required + ["--log-level", "loud"], "--log-level"),
            (required + ["--cert-file", "c.pem"], "--key-file"),
            (required + ["--insecure"], "mqtts"),
            (required + ["--bogus"], "--bogus"),
            (required + ["stray"], "stray"),
            (required + ["--id", "twice"], "more than once"),
        ])
    func badUsage(arguments: [String], mentions: String) {
        let message = refusal(arguments)
        #expect(message?.contains(mentions) == true, "\(message ?? "accepted")")
    }

    @Test("unknown keys and lines without = in files are errors with the line number")
    func strictFiles() {
        let typo = refusal(Self.required, files: ["/etc/whereabouts/agent.conf": "\nWHEREABOUTS_WINDWO=2\n"])
        #expect(typo?.contains("agent.conf:2") == true)
        #expect(typo?.contains("WHEREABOUTS_WINDWO") == true)
        let garbage = refusal(Self.required, files: ["/etc/whereabouts/agent.conf": "WHEREABOUTS_ID\n"])
        #expect(garbage?.contains("agent.conf:1") == true)
        // The process environment may hold other programs' variables.
        #expect(refusal(Self.required, environment: ["WHEREABOUTS_MAP": "map.json"]) == nil)
    }

    @Test("repeatable options collect; file lists are comma-separated; flags replace file lists")
    func lists() throws {
        let settings = try parse(
            Self.required + [
                "--constraint", "\(Self.site):1", "--constraint", "\(Self.site):2:3", "--address", "AA:BB:CC:DD:EE:FF",
            ])
        #expect(settings.filter.constraints.map(\.description) == ["\(Self.site):1", "\(Self.site):2:3"])
        #expect(settings.filter.addresses.map(\.description) == ["AA:BB:CC:DD:EE:FF"])
        let conf = "WHEREABOUTS_CONSTRAINTS=\(Self.site):4, \(Self.site):5\n"
        let fromFile = try parse(Self.required, files: ["/etc/whereabouts/agent.conf": conf])
        #expect(fromFile.filter.constraints.map(\.description) == ["\(Self.site):4", "\(Self.site):5"])
        let replaced = try parse(
            Self.required + ["--constraint", "\(Self.site):9"], files: ["/etc/whereabouts/agent.conf": conf])
        #expect(replaced.filter.constraints.map(\.description) == ["\(Self.site):9"])
    }

    @Test("sources, switches and the password from the environment")
    func sourcesAndSecrets() throws {
        let replay = try parse(Self.required + ["--source", "btsnoop:/tmp/c.btsnoop", "--replay-speed", "fast"])
        #expect(replay.source == .btsnoop(path: "/tmp/c.btsnoop"))
        #expect(replay.replaySpeed == .fast)
        let device = try parse(Self.required + ["--device", "hci1", "--active", "--scan-interval=200"])
        #expect(device.source == .hci(device: "hci1"))
        #expect(device.activeScan)
        #expect(device.scanIntervalMilliseconds == 200)
        // H4 on a UART, a pty or an emulator's socket, as --device, --source or in a file.
        #expect(try parse(Self.required + ["--device", "h4:/run/bt.sock"]).source == .h4(path: "/run/bt.sock"))
        #expect(try parse(Self.required + ["--source", "h4:/dev/ttyUSB0"]).source == .h4(path: "/dev/ttyUSB0"))
        let conf = ["/etc/whereabouts/agent.conf": "WHEREABOUTS_DEVICE=h4:/dev/ttyAMA0\n"]
        #expect(try parse(Self.required, files: conf).source == .h4(path: "/dev/ttyAMA0"))
        let secret = try parse(Self.required, environment: ["WHEREABOUTS_PASSWORD": "s3cret"])
        #expect(secret.password == "s3cret")
        let switchOff = try parse(Self.required, files: ["/etc/whereabouts/agent.conf": "WHEREABOUTS_ACTIVE=false\n"])
        #expect(!switchOff.activeScan)
        #expect(refusal(Self.required, environment: ["WHEREABOUTS_ACTIVE": "maybe"])?.contains("true or false") == true)
    }

    @Test("a floor turns on the default advertisement; --advertise overrides it; --no-advertise wins")
    func advertising() throws {
        let site = try #require(BeaconUUID(Self.site))
        let agent = try #require(AgentID("hall-1"))
        let byFloor = try parse(Self.required + ["--floor", "3"])
        #expect(byFloor.advertising == .on(AgentAdvertisement.advertisement(site: site, floor: 3, agent: agent)))
        let explicit = try parse(Self.required + ["--floor", "3", "--advertise", "\(Self.site):7:8:-70"])
        #expect(explicit.advertising == .on(IBeaconAdvertisement(uuid: site, major: 7, minor: 8, measuredPower: -70)))
        let off = try parse(Self.required + ["--floor", "3", "--no-advertise"])
        guard case .off = off.advertising else {
            Issue.record("--no-advertise ignored")
            return
        }
    }

    @Test("--help asks for the usage text")
    func help() {
        do {
            _ = try parse(["--help"])
            Issue.record("--help accepted as settings")
        } catch {
            #expect(error == .help)
            // The shared reporter prints this usage for `.help` (SettingsError.report).
            #expect(AgentSettings.usage.contains("usage: whereabouts-agent"))
        }
    }

    @Test("every default the usage shows as a value is the value the agent takes when the setting is not given")
    func declaredDefaults() throws {
        #expect(AgentSettings.interface.problems.isEmpty)
        let unset = String(describing: try parse(Self.required))
        var checked = 0
        // Defaults in words ("the agent id", "systemd's $STATE_DIRECTORY") are described, not values.
        // The check's own settings go with --check only; AgentCheckSettingsTests checks their defaults.
        for setting in AgentSettings.interface.table where !setting.name.hasPrefix("check") {
            guard let value = setting.defaultText, !value.contains(" ") else { continue }
            let given = String(describing: try parse(Self.required + ["--\(setting.name)", value]))
            #expect(given == unset, "--\(setting.name) \(value) is not the default")
            checked += 1
        }
        #expect(checked >= 10)
    }
}
