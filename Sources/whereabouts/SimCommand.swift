import CommandLineSupport
import WhereaboutsCore
import WhereaboutsSimulation
import WhereaboutsWire

/// `whereabouts sim`: simulates tags walking a map and the agents hearing them; writes readings and truth.
enum SimCommand {
    static let usage = """
        usage: whereabouts sim --map M --tags N --duration S --seed K [--sigma DB] [--floor-loss DB]
                               [--advert-loss P] [--start T] [--readings R.jsonl] [--truth T.jsonl]
        """

    static func run(_ arguments: inout Arguments) throws -> ExitStatus {
        guard let mapPath = try arguments.option("map") else { throw UsageError("--map is required\n\(usage)") }
        guard let tags = try arguments.integer("tags") else { throw UsageError("--tags is required\n\(usage)") }
        guard let duration = try arguments.number("duration") else {
            throw UsageError("--duration is required\n\(usage)")
        }
        guard let seedText = try arguments.option("seed") else { throw UsageError("--seed is required\n\(usage)") }
        guard let seed = UInt64(seedText) else {
            throw UsageError("--seed needs a whole number ≥ 0, not \"\(seedText)\"")
        }
        var configuration = SimulationConfiguration()
        configuration.tagCount = tags
        configuration.duration = duration
        if let sigma = try arguments.number("sigma") { configuration.channel.shadowingSigma = sigma }
        if let loss = try arguments.number("floor-loss") { configuration.channel.floorLoss = loss }
        if let loss = try arguments.number("advert-loss") { configuration.channel.advertLoss = loss }
        if let start = try arguments.number("start") { configuration.startTime = start }
        let readingsPath = try arguments.option("readings")
        let truthPath = try arguments.option("truth")
        try arguments.finish()

        let map = try RecordingFiles.map(mapPath)
        var simulator: Simulator
        do {
            simulator = try Simulator(map: map, configuration: configuration, seed: seed)
        } catch {
            throw UsageError(error.description)
        }
        var readings = ""
        var truth = ""
        var readingCount = 0
        var truthCount = 0
        while let window = simulator.nextWindow() {
            for batch in window.batches {
                for reading in batch.recordedReadings {
                    readingCount += 1
                    if readingsPath != nil { readings += JSONLines.line(reading) }
                }
            }
            truthCount += window.truth.count
            if truthPath != nil { for record in window.truth { truth += JSONLines.line(record) } }
        }
        if let readingsPath { try FileAccess.write(Array(readings.utf8), to: readingsPath) }
        if let truthPath { try FileAccess.write(Array(truth.utf8), to: truthPath) }
        printError(
            "simulated \(tags) tags and \(map.agents.count) agents for \(fixed(duration, 0)) s: "
                + "\(readingCount) readings\(readingsPath.map { " -> \($0)" } ?? ""), "
                + "\(truthCount) truth samples\(truthPath.map { " -> \($0)" } ?? "")"
        )
        return .success
    }
}
