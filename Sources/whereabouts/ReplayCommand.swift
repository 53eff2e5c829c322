import CommandLineSupport
import WhereaboutsCore
import WhereaboutsSettings
import WhereaboutsSimulation
import WhereaboutsWire

/// `whereabouts replay`: runs the engine over a readings recording as fast as it can; writes positions and events.
enum ReplayCommand {
    static let usage = """
        usage: whereabouts replay --map M --readings R.jsonl [--interval 1] --positions P.jsonl [--events E.jsonl]
        """

    static let table: [Setting] = [
        .value("map"), .value("readings"), .value("positions"), .value("interval"), .value("events"),
    ]

    static func run(_ settings: Settings) throws -> ExitStatus {
        let mapPath = try settings.required("map")
        let readingsPath = try settings.required("readings")
        let positionsPath = try settings.required("positions")
        let interval = try settings.number("interval", in: 0.01...3600) ?? 1
        let eventsPath = settings.value("events")

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
