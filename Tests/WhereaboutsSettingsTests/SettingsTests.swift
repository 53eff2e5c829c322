import Testing
import WhereaboutsSettings

@Suite("Settings: flags, environment, env file, configuration file")
struct SettingsTests {
    /// A table like the locator's: values with and without environment names, a switch, a list, a secret.
    static let table: [Setting] =
        [.value("map", "FILE", "floor map"), .value("record", "FILE", "recording", key: .flagOnly)]
        + Setting.broker() + [
            .value("keepalive", "SECONDS", "MQTT keepalive"),
            .value("warm-up", "SECONDS", "occupancy held back"),
            .switchFlag("no-discovery", "no discovery"),
            .list("constraint", "UUID", "beacons", key: .named("WHEREABOUTS_CONSTRAINTS")),
        ]
    static let conf = "/etc/whereabouts/locator.conf"

    /// Reads with in-memory files: `files[path]` is the text; any other path is missing.
    func settings(
        _ arguments: [String], environment: [String: String] = [:], files: [String: String] = [:],
        configFile: String? = conf, positionals: Int = 0
    ) throws(SettingsError) -> Settings {
        try Settings(
            arguments: arguments, table: Self.table, environment: environment, configFile: configFile,
            positionalLimit: positionals
        ) { path in files[path].map(SettingsFile.text) ?? .missing }
    }

    /// The message of a refusal, or nil when the settings are accepted.
    func refusal(
        _ arguments: [String], environment: [String: String] = [:], files: [String: String] = [:],
        configFile: String? = conf
    ) -> String? {
        do {
            _ = try settings(arguments, environment: environment, files: files, configFile: configFile)
            return nil
        } catch {
            return error.description
        }
    }

    @Test("a flag beats the environment, which beats the env file, which beats the configuration file")
    func precedence() throws {
        let files = [
            Self.conf: "WHEREABOUTS_MAP=/conf.json\nWHEREABOUTS_KEEPALIVE=40\nWHEREABOUTS_WARM_UP=7\n",
            "/run/l.env": "WHEREABOUTS_MAP=/envfile.json\nWHEREABOUTS_KEEPALIVE=50\n",
        ]
        let environment = ["WHEREABOUTS_MAP": "/environment.json"]
        let all = try settings(
            ["--env-file", "/run/l.env", "--map", "/flag.json"], environment: environment, files: files)
        #expect(all.value("map") == "/flag.json")
        #expect(all.lookup("map")?.origin == "--map")
        let noFlag = try settings(["--env-file", "/run/l.env"], environment: environment, files: files)
        #expect(noFlag.value("map") == "/environment.json")
        #expect(noFlag.lookup("map")?.origin == "WHEREABOUTS_MAP in the environment")
        let envFile = try settings(["--env-file", "/run/l.env"], files: files)
        #expect(envFile.value("map") == "/envfile.json")
        #expect(try envFile.number("keepalive") == 50)
        #expect(try envFile.number("warm-up") == 7)
        let confOnly = try settings([], files: files)
        #expect(confOnly.value("map") == "/conf.json")
        #expect(confOnly.lookup("map")?.origin == "WHEREABOUTS_MAP in /etc/whereabouts/locator.conf")
        #expect(try confOnly.number("keepalive") == 40)
        let none = try settings([])
        #expect(none.value("map") == nil)
        #expect(try none.number("keepalive") == nil)
    }

    @Test("--config replaces the default file; empty values count as not set")
    func configFlag() throws {
        let files = [Self.conf: "WHEREABOUTS_MAP=/default.json\n", "/other.conf": "WHEREABOUTS_MAP=\n"]
        #expect(try settings(["--config", "/other.conf"], files: files).value("map") == nil)
        #expect(try settings([], environment: ["WHEREABOUTS_MAP": ""], files: files).value("map") == "/default.json")
    }

    @Test("without a configuration file only flags and the environment count, and --env-file is unknown")
    func flagsAndEnvironmentOnly() throws {
        let files = [Self.conf: "WHEREABOUTS_MAP=/conf.json\n"]
        let settings = try settings([], environment: ["WHEREABOUTS_MAP": "/env.json"], files: files, configFile: nil)
        #expect(settings.value("map") == "/env.json")
        #expect(try self.settings([], files: files, configFile: nil).value("map") == nil)
        #expect(refusal(["--env-file", "/x"], configFile: nil) == "unknown option --env-file (see --help)")
    }

    @Test("a missing default file is fine; a missing --config or --env-file, or an unreadable file, is an error")
    func missingFiles() {
        #expect(refusal([]) == nil)
        #expect(refusal(["--config", "/nowhere.conf"]) == "cannot read /nowhere.conf: no such file")
        #expect(refusal(["--env-file", "/nowhere.env"]) == "cannot read /nowhere.env: no such file")
        #expect(throws: SettingsError.invalid("cannot read /etc/whereabouts/locator.conf: Permission denied")) {
            try Settings(arguments: [], table: Self.table, environment: [:], configFile: Self.conf) { _ in
                .unreadable("Permission denied")
            }
        }
    }

    @Test("unknown keys and lines without = in files are errors with the line; other programs' variables are not")
    func strictFiles() {
        #expect(
            refusal([], files: [Self.conf: "# locator\n\nWHEREABOUTS_MAPP=/m.json\n"])
                == "/etc/whereabouts/locator.conf:3: unknown setting WHEREABOUTS_MAPP")
        // The agent's keys are not the locator's: a file written for one is refused by the other.
        #expect(refusal([], files: [Self.conf: "WHEREABOUTS_ID=hall-1\n"])?.contains("WHEREABOUTS_ID") == true)
        #expect(
            refusal([], files: [Self.conf: "WHEREABOUTS_MAP\n"])
                == "/etc/whereabouts/locator.conf:1: expected KEY=VALUE, not \"WHEREABOUTS_MAP\"")
        #expect(refusal([], files: [Self.conf: "=x\n"]) == "/etc/whereabouts/locator.conf:1: empty key")
        #expect(refusal([], environment: ["WHEREABOUTS_ID": "hall-1", "PATH": "/bin"]) == nil)
    }

    @Test(
        "bad usage is refused with the same messages in every executable",
        arguments: [
            (["--bogus"], "unknown option --bogus (see --help)"),
            (["stray"], "unexpected argument \"stray\" (options start with --; see --help)"),
            (["--map"], "--map needs a value"),
            (["--map", "--record", "r"], "--map needs a value"),
            (["--map", "a", "--map", "b"], "--map is given more than once"),
            (["--no-discovery=yes"], "--no-discovery takes no value"),
            (
                ["--password", "hunter2"],
                "the password is never taken on the command line: use --password-file or WHEREABOUTS_PASSWORD"
            ),
        ])
    func badUsage(arguments: [String], message: String) {
        #expect(refusal(arguments) == message)
    }

    @Test("typed values name where a bad value came from")
    func typedValues() throws {
        let fromFlag = try settings(["--keepalive", "soon"])
        #expect(throws: SettingsError.invalid("--keepalive must be a number, not \"soon\"")) {
            try fromFlag.number("keepalive")
        }
        #expect(throws: SettingsError.invalid("--keepalive must be a number from 5.0 to 3600.0, not \"soon\"")) {
            try fromFlag.number("keepalive", in: 5...3600)
        }
        let fromFile = try settings([], files: [Self.conf: "WHEREABOUTS_KEEPALIVE=2\nWHEREABOUTS_NO_DISCOVERY=maybe\n"])
        #expect(
            throws: SettingsError.invalid(
                "WHEREABOUTS_KEEPALIVE in /etc/whereabouts/locator.conf must be a whole number from 5 to 3600, not \"2\""
            )
        ) { try fromFile.integer("keepalive", in: 5...3600) }
        #expect(
            throws: SettingsError.invalid(
                "WHEREABOUTS_NO_DISCOVERY in /etc/whereabouts/locator.conf must be true or false, not \"maybe\"")
        ) { try fromFile.switchValue("no-discovery") }
        #expect(throws: SettingsError.invalid("--map is required (or WHEREABOUTS_MAP): the floor map")) {
            try fromFile.required("map", "the floor map")
        }
        #expect(throws: SettingsError.invalid("--record is required")) { try fromFile.required("record") }
    }

    @Test("switches: the flag turns one on; files say true or false")
    func switches() throws {
        #expect(try settings(["--no-discovery"]).switchValue("no-discovery"))
        #expect(try !settings([]).switchValue("no-discovery"))
        for (text, expected) in [("true", true), ("yes", true), ("1", true), ("off", false), ("FALSE", false)] {
            let settings = try settings([], environment: ["WHEREABOUTS_NO_DISCOVERY": text])
            #expect(try settings.switchValue("no-discovery") == expected, "\(text)")
        }
    }

    @Test("lists: flags repeat and replace a file's comma-separated list")
    func lists() throws {
        let files = [Self.conf: "WHEREABOUTS_CONSTRAINTS=a, b c\n"]
        #expect(try settings([], files: files).list("constraint") == ["a", "b", "c"])
        #expect(try settings(["--constraint", "x", "--constraint=y"], files: files).list("constraint") == ["x", "y"])
    }

    @Test("flags without an environment name are not read from files or the environment")
    func flagOnly() throws {
        #expect(try settings(["--record=r.jsonl"]).value("record") == "r.jsonl")
        #expect(try settings([], environment: ["WHEREABOUTS_RECORD": "r"]).value("record") == nil)
    }

    @Test("--help anywhere asks for the usage text, even beside bad usage")
    func help() {
        #expect(throws: SettingsError.help) { try settings(["--bogus", "--help"]) }
    }

    @Test("positional arguments up to the limit")
    func positionals() throws {
        #expect(try settings(["map.json", "--record", "r"], positionals: 1).positionals == ["map.json"])
        #expect(throws: SettingsError.self) { try settings(["a", "b"], positionals: 1) }
    }

    @Test("KEY=VALUE text: comments, export, quotes, whitespace, Windows line ends")
    func keyValueText() throws {
        let text = try KeyValueText(
            "# c\n export A = \"1 2\" \r\nB='x'\nC=\"unbalanced\nD=3\n", origin: "f")
        #expect(text.values == ["A": "1 2", "B": "x", "C": "\"unbalanced", "D": "3"])
        #expect(text.lines["D"] == 5)
    }

    @Test("a key given twice is refused, naming the key and both lines, even with the same value")
    func repeatedKey() {
        #expect(throws: SettingsError.invalid("f:5: A is given twice, first on line 2; keep one")) {
            try KeyValueText("# c\n export A = \"1 2\" \r\nB='x'\n\nA=3\n", origin: "f")
        }
        #expect(throws: SettingsError.invalid("f:2: A is given twice, first on line 1; keep one")) {
            try KeyValueText("A=1\nA=1\n", origin: "f")
        }
    }
}
