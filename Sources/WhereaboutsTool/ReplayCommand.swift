import CommandLineSupport
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsRuntime
import WhereaboutsSettings
import WhereaboutsWire

/// `whereabouts replay`: runs the locator's pipeline over a readings recording as fast as it can; writes the
/// positions and events it publishes.
enum ReplayCommand {
    static let interface = CommandInterface(
        program: "whereabouts replay",
        synopsis: """
            whereabouts replay --map M --readings R.jsonl [--interval 1] --positions P.jsonl [--events E.jsonl]
                                      [--positioning grid|trilateration] [--lag S] [--workers N]
            """,
        sections: [
            .init(
                Setting.flagsOnly([
                    .value("map", "M", "the floor map"),
                    .value("readings", "R.jsonl", "the readings recording"),
                    .value("positions", "P.jsonl", "write the positions here"),
                    .value("interval", "S", "seconds between engine updates, 0.01-3600", default: "1"),
                    .value("events", "E.jsonl", "write the enter/exit events here"),
                    .value("positioning", "MODE", "grid or trilateration", default: "grid"),
                    .value("lag", "S", "the grid filter's fixed lag, 0-10", default: "0"),
                    .value(
                        "workers", "N", "threads each tick's estimates are split among", default: "the cores online"),
                ]))
        ],
        notes: """
            --positioning and --lag choose the tracker as the locator's flags do (default: the grid filter; with
            --lag S, each position is of S seconds before, smoothed with the readings since).

            --workers N splits each tick's estimates among N threads (default: the cores online); the output is the same
            with any number.
            """)

    static func run(_ settings: Settings) throws -> ExitStatus {
        let mapPath = try settings.required("map")
        let readingsPath = try settings.required("readings")
        let positionsPath = try settings.required("positions")
        let interval = try settings.number("interval", in: 0.01...3600) ?? 1
        let eventsPath = settings.value("events")
        var configuration = LocatorReplay.defaultConfiguration
        configuration.engine.workers = try settings.workers()
        configuration.engine.runner = .threads
        try settings.applyTracker(to: &configuration.engine)

        let map = try RecordingFiles.map(mapPath)
        let (readings, badLines) = try RecordingFiles.records(readingsPath, as: RecordedReading.self)
        let (output, replay) = LocatorReplay.run(
            map: map, readings: readings, interval: interval, configuration: configuration)
        try RecordingFiles.write(output.positions, to: positionsPath)
        if let eventsPath { try RecordingFiles.write(output.events, to: eventsPath) }

        let counters = replay.counters
        var summary = "replayed \(readings.count) readings (\(badLines) bad lines): \(counters.accepted) taken"
        if counters.agentBeacons > 0 { summary += ", \(counters.agentBeacons) agents' beacons" }
        for reason in RejectionReason.allCases {
            if let count = counters.rejected[reason] { summary += ", \(count) \(reason.rawValue)" }
        }
        summary += "; \(replay.updates) updates, \(output.positions.count) positions, \(output.events.count) events"
        printError(summary)
        return .success
    }
}
