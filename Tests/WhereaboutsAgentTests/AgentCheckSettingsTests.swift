import Testing
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsCore
import WhereaboutsSettings

@Suite("whereabouts-agent --check settings")
struct AgentCheckSettingsTests {
    static let site = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"

    func invocation(
        _ arguments: [String], environment: [String: String] = [:], files: [String: String] = [:]
    ) throws(SettingsError) -> AgentInvocation {
        try AgentSettings.invocation(arguments: arguments, environment: environment) { path in
            files[path].map(SettingsFile.text) ?? .missing
        }
    }

    func check(_ arguments: [String], files: [String: String] = [:]) throws -> AgentCheckSettings {
        guard case .check(let settings) = try invocation(arguments, files: files) else {
            throw SettingsError.invalid("not a check: \(arguments)")
        }
        return settings
    }

    @Test("--check needs no broker or id; it listens 10 s for 5 of the site's beacons on hci0 by default")
    func defaults() throws {
        let settings = try check(["--check", "--site", Self.site])
        #expect(settings.timeout == 10 && settings.count == 5)
        #expect(settings.source == .hci(device: "hci0") && !settings.activeScan)
        #expect(settings.filter == SightingFilter(siteUUID: try #require(BeaconUUID(Self.site))))
        // The defaults the usage shows are the ones taken.
        let shown = Dictionary(
            uniqueKeysWithValues: AgentSettings.interface.table.map { ($0.name, $0.defaultText) })
        #expect(shown["check-timeout"] == "10" && shown["check-count"] == "5")
        let given = try check(["--check", "--site", Self.site, "--check-timeout", "10", "--check-count", "5"])
        #expect(given.timeout == settings.timeout && given.count == settings.count)
    }

    @Test("the agent's settings file gives the site, the filter and the device; broker settings there are ignored")
    func settingsFile() throws {
        let file = """
            WHEREABOUTS_ID=hall-1
            WHEREABOUTS_SITE=\(Self.site)
            WHEREABOUTS_BROKER=mqtts://broker.local
            WHEREABOUTS_PASSWORD_FILE=/etc/whereabouts/agent.password
            WHEREABOUTS_DEVICE=hci1
            WHEREABOUTS_RSSI_FLOOR=-85
            WHEREABOUTS_FLOOR=2
            """
        let settings = try check(["--check", "--check-count", "1"], files: [AgentSettings.defaultConfigPath: file])
        #expect(settings.source == .hci(device: "hci1") && settings.count == 1)
        #expect(settings.filter == SightingFilter(siteUUID: try #require(BeaconUUID(Self.site)), minimumRSSI: -85))
        let flags = try check(
            ["--check", "--device", "h4:/run/bt.sock", "--constraint", "any", "--check-timeout", "2.5"],
            files: [AgentSettings.defaultConfigPath: file])
        #expect(flags.source == .h4(path: "/run/bt.sock") && flags.timeout == 2.5 && flags.filter.selectsAllBeacons)
    }

    @Test("without a site, --constraint says what to listen for")
    func constraintsWithoutSite() throws {
        let settings = try check(["--check", "--constraint", "\(Self.site):7"])
        #expect(settings.filter.constraints.map(\.description) == ["\(Self.site):7"])
    }

    @Test(
        "bad check usage is refused naming the setting",
        arguments: [
            (["--check"], "--site is required"),
            (["--check", "--site", "nope"], "--site \"nope\" is not a UUID"),
            (
                ["--check", "--site", AgentCheckSettingsTests.site, "--check-timeout", "0"],
                "--check-timeout must be a number from 1.0 to 600.0"
            ),
            (
                ["--check", "--site", AgentCheckSettingsTests.site, "--check-count", "0"],
                "--check-count must be a whole number from 1 to 1000"
            ),
            (
                ["--check", "--site", AgentCheckSettingsTests.site, "--source", "btsnoop:x"],
                "--check listens to a controller"
            ),
            (
                ["--check-count", "3", "--id", "a", "--site", AgentCheckSettingsTests.site, "--broker", "mqtt://b"],
                "--check-count goes with --check"
            ),
        ])
    func badUsage(arguments: [String], message: String) {
        do {
            _ = try invocation(arguments)
            Issue.record("accepted: \(arguments)")
        } catch {
            guard case .invalid(let text) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(text.contains(message), "\(text)")
        }
    }

    @Test("a run is still a run, and parse refuses a check")
    func runOrCheck() throws {
        let run = ["--id", "hall-1", "--site", Self.site, "--broker", "mqtt://broker.local"]
        guard case .run(let settings) = try invocation(run) else {
            Issue.record("not a run")
            return
        }
        #expect("\(settings.agent)" == "hall-1")
        #expect(throws: SettingsError.self) {
            try AgentSettings.parse(arguments: run + ["--check"], environment: [:]) { _ in .missing }
        }
    }
}
