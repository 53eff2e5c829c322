public import WhereaboutsSettings

/// The locator's command line, declared once: each setting's flag, help, default and `WHEREABOUTS_*` name.
///
/// The executable reads the settings by these names and prints ``interface``'s usage for `--help`; the tests check
/// its `--help` against this table. (The agent's is ``AgentSettings``' in its own module.)
public enum LocatorCommandLine {
    /// Every setting the locator takes: the parser's table and the `--help` text.
    public static let interface = CommandInterface(
        program: "whereabouts-locator",
        synopsis: "whereabouts-locator --map FILE --broker mqtt://HOST[:PORT] [options]",
        sections: [
            .init(
                "map and broker",
                [.value("map", "FILE", "floor map")] + Setting.broker(defaultUsername: "locator") + [
                    .value("client-id", "ID", "MQTT client id", default: "whereabouts-locator"),
                    .value("keepalive", "SECONDS", "MQTT keepalive, 5-3600", default: "30"),
                    .value("record", "FILE", "append every accepted reading to FILE (JSON Lines; see docs/formats.md)"),
                    .value(
                        "state-dir", "DIR",
                        "keep the ledger of batches taken here across restarts, so that a batch the broker delivers "
                            + "again after a stop is not taken twice (an absolute path, created if missing; unset: "
                            + "memory only)", default: "systemd's $STATE_DIRECTORY"),
                ]),
            .init(
                "engine",
                [
                    .value("warm-up", "SECONDS", "hold occupancy back this long after the first batch", default: "10"),
                    .value("update-interval", "S", "coalesce engine updates this long at most", default: "0.02"),
                    .value(
                        "estimate-interval", "S",
                        "estimate each tag again at most this often; its readings in between wait in its filters "
                            + "(0: a moving tag at every update; the grid filter estimates a moving tag as often as a "
                            + "still one)", default: "0.5"),
                    .value(
                        "still-estimate-interval", "S",
                        "the same for a tag standing still (at most as often as --estimate-interval; 0: as often as "
                            + "a moving tag; both 0: every tag at every update)", default: "1"),
                    .value(
                        "positioning", "MODE",
                        "grid: a Bayes filter over the floor's cells; trilateration: ranges "
                            + "and a Kalman track", default: "grid"),
                    .value(
                        "lag", "SECONDS",
                        "report each tag's position this much later, smoothed with the readings that came since "
                            + "(0-10; grid filter only)", default: "0: no delay"),
                    .value(
                        "workers", "N",
                        "threads an update may split its estimates among (the estimates are the same with any number)",
                        default: "the cores online"),
                    .value("metrics-interval", "S", "seconds between metrics messages", default: "10"),
                    .value(
                        "outbox-bytes", "BYTES",
                        "the most bytes of publications held for the broker; past it the unsent states of tags the "
                            + "map does not name are dropped, oldest first (counted in the metrics' outbox.shed)",
                        default: "4194304"),
                    .switchFlag("no-discovery", "do not announce Home Assistant discovery configs"),
                ]),
            .init(
                "time and calibration",
                [
                    .value(
                        "time-scale", "X",
                        "run the clock X times faster than real time from --time-origin, to follow an accelerated "
                            + "simulator (`whereabouts sim --speed X`)", default: "1"),
                    .value("time-origin", "UNIX", "where the scaled clock starts", default: "now"),
                    .value(
                        "calibration", "MODE",
                        "guided: the map's radio constants; auto: also fit them from the agents' beacons; off: the "
                            + "map's defaults only", default: "guided"),
                    .value("calibration-interval", "S", "seconds between automatic fits", default: "600"),
                ]),
            .init(
                "sharing the site",
                [
                    .value(
                        "role", "ROLE",
                        "single: the site's only locator; auto: one of a pair, active while it holds the lease on "
                            + "the broker, a warm standby otherwise (docs/scale.md)", default: "single"),
                    .value("lease-time", "SECONDS", "with --role auto: how long a lease renewal holds", default: "3"),
                    .value(
                        "floors", "1,2",
                        "own only these floors (majors) of the map's site, when the site is split between locators: "
                            + "hear their agents and those of the floors around them, publish their zones and the "
                            + "tags on them (docs/scale.md)"),
                    .value(
                        "floor-margin", "N", "with --floors: hear the agents of N floors above and below",
                        default: "2"),
                ]),
            .init(
                "other",
                [
                    .value(
                        "metrics-listen", "[HOST:]PORT",
                        "serve the figures to Prometheus at http://HOST:PORT/metrics (docs/metrics.md); a port alone "
                            + "is on loopback, another host only when named (port 0 picks a free one)",
                        default: "off"),
                    .value("log-level", "LEVEL", "debug, info, warning or error", default: "info"),
                ]),
        ],
        notes: "exit status: 0 clean shutdown, 1 runtime failure, 2 bad usage or bad map",
        configFile: "/etc/whereabouts/locator.conf")

    /// `--role` and `--lease-time`: the lease this locator competes for as one of a pair, or nil on its own.
    /// `process`: a number of this process's own (random), so that two locators started under one name are still
    /// two holders.
    public static func lease(
        _ settings: Settings, clientID: String, floors: [UInt16]?, process: UInt32
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
            // The account when one is named (the broker ties client ids to accounts), else the client id.
            return LeaseKeeper.Configuration(
                name: settings.value("username") ?? clientID, process: process, ttl: leaseTime)
        case let other: throw .invalid("--role must be single or auto, not \"\(other)\"")
        }
    }

    /// `1,2`: floor majors separated by commas, each 0…65535 in plain digits; the map is checked later.
    public static func floors(_ text: String) throws(SettingsError) -> [UInt16] {
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
