import Testing
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsSettings
import WhereaboutsWire

/// Where the agent keeps its outbox journal, and what it takes back from one.
@Suite("Agent state directory")
struct StateDirectoryTests {
    static let site = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    static let required = ["--id", "hall-1", "--site", site, "--broker", "mqtt://broker.local"]

    func parse(_ arguments: [String], environment: [String: String] = [:]) throws(SettingsError) -> AgentSettings {
        try AgentSettings.parse(arguments: arguments, environment: environment) { _ in .missing }
    }

    @Test("no state directory by default: the outbox stays in memory for ad-hoc runs")
    func noneByDefault() throws {
        #expect(try parse(Self.required).stateDirectory == nil)
    }

    @Test("systemd's STATE_DIRECTORY is the default (its first entry); the setting and the flag win over it")
    func systemdDefault() throws {
        #expect(AgentSettings.environmentKeys.contains("STATE_DIRECTORY"))
        let systemd = ["STATE_DIRECTORY": "/var/lib/whereabouts-agent:/var/lib/other"]
        #expect(try parse(Self.required, environment: systemd).stateDirectory == "/var/lib/whereabouts-agent")
        let both = systemd.merging(["WHEREABOUTS_STATE_DIR": "/srv/agent"]) { $1 }
        #expect(try parse(Self.required, environment: both).stateDirectory == "/srv/agent")
        #expect(
            try parse(Self.required + ["--state-dir", "/tmp/agent"], environment: both).stateDirectory == "/tmp/agent")
    }

    @Test("a relative state directory is bad usage")
    func relativeRefused() {
        #expect(throws: SettingsError.self) { try parse(Self.required + ["--state-dir", "state"]) }
    }

    @Test("a journaled batch of this agent and site comes back unchanged; another topic's is left out")
    func restoredPublication() throws {
        let site = try #require(BeaconUUID(Self.site))
        let agent = try #require(AgentID("hall-1"))
        let topics = Topics(site: site)
        var configuration = AgentPipeline.Configuration(
            agent: agent, topics: topics, epoch: 1_000, filter: SightingFilter(siteUUID: site))
        configuration.journaled = true
        let pipeline = AgentPipeline(configuration: configuration, at: ServiceTime(now: 0, monotonic: 0))
        #expect(pipeline.session.journaled)
        let payload = ReadingBatch(agent: agent, epoch: 999, seq: 41, sent: 0.5, readings: []).payload
        let mine = OutboxJournal.Pending(
            id: 0, topic: topics.readings(agent: agent).name, payload: payload, qos: .atLeastOnce, retain: false)
        #expect(
            pipeline.restoredPublication(mine)
                == Publication(topic: topics.readings(agent: agent), payload: payload, qos: .atLeastOnce, retain: false)
        )
        var elsewhere = mine
        elsewhere.topic = "whereabouts/v1/\(Self.site)/agents/hall-2/readings"
        #expect(pipeline.restoredPublication(elsewhere) == nil)
    }
}
