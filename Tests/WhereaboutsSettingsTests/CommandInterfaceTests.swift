import Testing
import WhereaboutsSettings

@Suite("Command interfaces: one declaration makes the table, the names and the usage")
struct CommandInterfaceTests {
    static let interface = CommandInterface(
        program: "whereabouts-test", synopsis: "whereabouts-test --map FILE [options]",
        introduction: "  An introduction.",
        sections: [
            .init(
                "files", [.value("map", "FILE", "floor map"), .value("record", "FILE", "recording", key: .flagOnly)]),
            .init(Setting.broker(defaultUsername: "tester")),
            .init(
                "other",
                [
                    .value(
                        "lease-time", "SECONDS",
                        "with --role auto: how long a lease renewal holds, a help long enough to need a second line "
                            + "of its own in the usage", default: "3"),
                    .switchFlag("no-discovery", "do not announce discovery configs"),
                    .list("constraint", "UUID", "beacons to publish", key: .named("WHEREABOUTS_CONSTRAINTS")),
                    .value("still-estimate-interval", "SECONDS", "a flag too long for its column"),
                ]),
        ],
        notes: "exit status: 0 ok, 2 bad usage", configFile: "/etc/whereabouts/test.conf")

    @Test("an environment name is derived from the flag unless declared otherwise")
    func names() {
        let table = Self.interface.table
        func key(_ name: String) -> String? { table.first { $0.name == name }?.key }
        #expect(key("lease-time") == "WHEREABOUTS_LEASE_TIME")
        #expect(key("no-discovery") == "WHEREABOUTS_NO_DISCOVERY")
        #expect(key("constraint") == "WHEREABOUTS_CONSTRAINTS")
        #expect(key("record") == nil)
        #expect(key("password") == "WHEREABOUTS_PASSWORD")
        #expect(Setting.flagsOnly(Setting.broker()).allSatisfy { $0.key == nil })
    }

    @Test("the usage lists every setting with its placeholder, help, default and name, then the file flags and --help")
    func usageListsEverySetting() throws {
        let usage = Self.interface.usage
        #expect(usage.hasPrefix("usage: whereabouts-test --map FILE [options]\n\n  An introduction.\n\n"))
        #expect(usage.hasSuffix("\n\nexit status: 0 ok, 2 bad usage"))
        // The help's words in order, without the names in their column beside them.
        let words = usage.split(separator: "\n").map { line in
            line.dropFirst(80).hasPrefix("WHEREABOUTS_") ? line.prefix(78) : line
        }.joined(separator: " ").split(separator: " ").joined(separator: " ")
        for setting in Self.interface.table {
            switch setting.kind {
            case .secret: #expect(usage.contains("\n  \(setting.key ?? "?")"), "\(setting.name)")
            case .switchFlag: #expect(usage.contains("\n  --\(setting.name) "), "\(setting.name)")
            case .value, .list:
                #expect(usage.contains("\n  --\(setting.name) \(setting.placeholder)"), "\(setting.name)")
            }
            #expect(words.contains(setting.help), "\(setting.name): its help, wrapped")
            if let key = setting.key { #expect(usage.contains(key), "\(setting.name)") }
            if let defaultText = setting.defaultText { #expect(words.contains("(default \(defaultText))")) }
        }
        #expect(usage.contains("(default tester)"))
        #expect(usage.contains("beacons to publish; repeatable"))
        for flag in ["--env-file FILE", "--config FILE", "--help"] {
            #expect(usage.contains("\n  \(flag) "), "\(flag)")
        }
        #expect(usage.contains("/etc/whereabouts/test.conf"))
        #expect(usage.split(separator: "\n").allSatisfy { $0.count <= 120 })
        // The name sits beside the first line of the help, in a column of its own; a long help wraps under itself.
        let lines = usage.split(separator: "\n", omittingEmptySubsequences: false)
        let lease = try #require(lines.firstIndex { $0.hasPrefix("  --lease-time SECONDS     with --role auto:") })
        #expect(lines[lease].hasSuffix("  WHEREABOUTS_LEASE_TIME"))
        #expect(lines[lease].count == 80 + "WHEREABOUTS_LEASE_TIME".count)
        let continuation = lines[lease + 1]
        #expect(continuation.hasPrefix(String(repeating: " ", count: 27)) && continuation.dropFirst(27).first != " ")
        #expect(usage.contains("\n  --still-estimate-interval SECONDS\n                           a flag too long"))
    }

    @Test("without a configuration file there is no --env-file, in the usage or on the command line")
    func noFiles() throws {
        var interface = Self.interface
        interface.configFile = nil
        #expect(!interface.usage.contains("--env-file"))
        #expect(!interface.usage.contains("precedence"))
        #expect(throws: SettingsError.invalid("unknown option --env-file (see --help)")) {
            try Settings(arguments: ["--env-file", "x"], interface: interface, environment: [:])
        }
    }

    @Test("parsing by the interface is parsing by its table, with its file and positional limit")
    func parsing() throws {
        let files = ["/etc/whereabouts/test.conf": "WHEREABOUTS_MAP=/conf.json\nWHEREABOUTS_LEASE_TIME=4\n"]
        let settings = try Settings(
            arguments: ["--constraint", "a", "--constraint", "b"], interface: Self.interface,
            environment: ["WHEREABOUTS_MAP": "/env.json"]
        ) { files[$0].map(SettingsFile.text) ?? .missing }
        #expect(settings.value("map") == "/env.json")
        #expect(try settings.number("lease-time") == 4)
        #expect(settings.list("constraint") == ["a", "b"])
        #expect(throws: SettingsError.help) {
            try Settings(arguments: ["--help"], interface: Self.interface, environment: [:])
        }
    }

    @Test(
        "a declaration with a flag without help, a name twice or a value without placeholder is refused at parsing",
        arguments: [
            ([Setting.value("map", "FILE", " ")], "--map has no help"),
            ([.value("map", "FILE", "a"), .switchFlag("map", "b", key: .flagOnly)], "--map is declared twice"),
            (
                [.value("map", "FILE", "a"), .value("plan", "FILE", "b", key: .named("WHEREABOUTS_MAP"))],
                "WHEREABOUTS_MAP is declared twice"
            ),
            ([.value("map", "", "a")], "--map has no placeholder"),
            ([.value("Map", "FILE", "a")], "--Map is not a flag name"),
            ([.switchFlag("help", "a")], "--help is declared twice"),
        ])
    func faultyDeclarations(settings: [Setting], problem: String) {
        let interface = CommandInterface(program: "p", synopsis: "p", sections: [.init(settings)])
        #expect(interface.problems == [problem])
        #expect(throws: SettingsError.invalid("p declares its settings wrongly: \(problem)")) {
            try Settings(arguments: ["--help"], interface: interface, environment: [:])
        }
    }
}
