import CommandLineSupport
import WhereaboutsCore
import WhereaboutsSimulation
import WhereaboutsWire

/// `whereabouts replay`: runs the engine over a readings recording as fast as it can; writes positions and events.
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
        let (output, statistics) = Replay.run(map: map, readings: readings, interval: interval)
        try RecordingFiles.write(output.positions, to: positionsPath)
        if let eventsPath { try RecordingFiles.write(output.events, to: eventsPath) }

        var summary = "replayed \(readings.count) readings (\(badLines) bad lines): \(statistics.taken) taken"
        if statistics.unknownAgents > 0 { summary += ", \(statistics.unknownAgents) from agents not in the map" }
        for reason in ReadingRejection.allCases {
            if let count = statistics.rejected[reason] { summary += ", \(count) \(reason.rawValue)" }
        }
        summary += "; \(statistics.updates) updates, \(output.positions.count) positions, \(output.events.count) events"
        printError(summary)
        return .success
    }
}
