import CommandLineSupport
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsWire

/// `whereabouts replay`: runs the locator's pipeline over a readings recording as fast as it can; writes the
/// positions and events it publishes.
enum ReplayCommand {
    static let usage = """
        usage: whereabouts replay --map M --readings R.jsonl [--interval 1] --positions P.jsonl [--events E.jsonl]
        """

    static func run(_ arguments: inout Arguments) throws -> ExitStatus {
        guard let mapPath = try arguments.option("map") else { throw UsageError("--map is required\n\(usage)") }
        guard let readingsPath = try arguments.option("readings") else {
            throw UsageError("--readings is required\n\(usage)")
        }
        guard let positionsPath = try arguments.option("positions") else {
            throw UsageError("--positions is required\n\(usage)")
        }
        let interval = try arguments.number("interval") ?? 1
        guard interval >= 0.01, interval <= 3600 else { throw UsageError("--interval must be 0.01…3600 seconds") }
        let eventsPath = try arguments.option("events")
        try arguments.finish()

        let map = try RecordingFiles.map(mapPath)
        let (readings, badLines) = try RecordingFiles.records(readingsPath, as: RecordedReading.self)
        let (output, replay) = LocatorReplay.run(map: map, readings: readings, interval: interval)
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
