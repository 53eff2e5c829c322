public import WhereaboutsAdvertising
import WhereaboutsSettings

/// What the agent's command line asks for.
public enum AgentInvocation: Sendable {
    /// Run the agent: scan and publish.
    case run(AgentSettings)
    /// Check the radio (`--check`): print the controller and the first beacons heard, then exit.
    case check(AgentCheckSettings)
}

/// The settings of `whereabouts-agent --check`: the radio and the filter, read like the agent's (flags, the
/// environment, the files), without the broker, the id or advertising, which the check does not use.
public struct AgentCheckSettings: Sendable {
    /// The controller (a btsnoop replay is refused: the check is of a radio).
    public var source: AgentSettings.Source = .hci(device: "hci0")
    /// Active scanning (scan requests) instead of passive listening.
    public var activeScan = false
    /// The scan interval, milliseconds.
    public var scanIntervalMilliseconds = 100.0
    /// The scan window, milliseconds.
    public var scanWindowMilliseconds = 100.0
    /// What the agent would publish: the site's UUID, or the constraints, addresses and RSSI floor given.
    public var filter: SightingFilter
    /// How long to listen at most, seconds.
    public var timeout = 10.0
    /// How many tags end the check early.
    public var count = 5

    init(_ settings: Settings) throws(SettingsError) {
        if let source = try AgentSettings.source(settings) {
            if case .btsnoop = source {
                throw .invalid("--check listens to a controller; --source btsnoop:FILE is a replay")
            }
            self.source = source
        }
        activeScan = try settings.switchValue("active")
        scanIntervalMilliseconds = try settings.number("scan-interval", in: 2.5...10240) ?? 100
        scanWindowMilliseconds =
            try settings.number("scan-window", in: 2.5...10240) ?? min(100, scanIntervalMilliseconds)
        guard scanWindowMilliseconds <= scanIntervalMilliseconds else {
            throw .invalid("--scan-window must not be longer than --scan-interval")
        }
        // The site only matters when it makes the filter: with --constraint, none is needed.
        let site = settings.value("site") == nil ? nil : try AgentSettings.siteUUID(settings, "the site's UUID")
        filter = try AgentSettings.filter(settings, site: site)
        timeout = try settings.number("check-timeout", in: 1...600) ?? 10
        count = try settings.integer("check-count", in: 1...1000) ?? 5
    }
}
