import CommandLineSupport
import WhereaboutsCore
import WhereaboutsMQTT
import WhereaboutsSettings
import WhereaboutsSimulation
import WhereaboutsWire

/// `whereabouts sim`: simulates tags walking a map and the agents hearing them; writes readings and truth.
enum SimCommand {
    static let interface = CommandInterface(
        program: "whereabouts sim",
        synopsis: """
            whereabouts sim --map M --tags N --duration S --seed K [--sigma DB] [--place-sigma DB] [--floor-loss DB]
                                   [--advert-loss P] [--start T] [--agent-beacons] [--readings R.jsonl]
                                   [--truth T.jsonl]
                   whereabouts sim ... --broker URL [--speed X] [--time-origin UNIX] [--truth T.jsonl]
                                   [--survey-tag ID [--waypoints PATH]]
            """,
        introduction: """
              Without --broker, the whole simulation is written to the readings and truth files at once.
              With --broker, every agent of the map runs the real agent's pipeline on the HCI advertising reports
              its simulated controller delivers, connects as itself and publishes its batches, in real time or
              --speed X times faster (run the locator with --time-scale X and the same --time-origin so that both
              clocks agree). --survey-tag adds a tag that stands still until told where to walk: each line
              "x y [floor]" read from --waypoints (a FIFO, or a file written as the simulation runs) sends it
              there at a walking speed, around walls, to stand until the next line.
            """,
        sections: [
            .init(
                Setting.flagsOnly([
                    .value("map", "M", "the floor map"),
                    .value("tags", "N", "how many tags walk"),
                    .value("duration", "S", "simulated seconds"),
                    .value("seed", "K", "the random seed, a whole number ≥ 0"),
                    .value("sigma", "DB", "the channel's shadowing sigma"),
                    .value(
                        "place-sigma", "DB",
                        "shadowing that is a property of the place, the same in every run on the map (default 0)"),
                    .value("floor-loss", "DB", "the loss through a floor"),
                    .value("advert-loss", "P", "the share of adverts lost"),
                    .value("start", "T", "the simulated start time (Unix seconds)"),
                    .switchFlag(
                        "agent-beacons", "agents advertise too and hear each other (for automatic calibration)"),
                    .value("readings", "R.jsonl", "write the readings here (without --broker)"),
                    .value("truth", "T.jsonl", "write where the tags really were here"),
                    .value("speed", "X", "with --broker: run X times faster than real time", default: "1"),
                    .value("time-origin", "UNIX", "with --broker: where the scaled clock starts", default: "now"),
                    .value("survey-tag", "ID", "a tag that stands still until steered (after the --tags walking)"),
                    .value("waypoints", "PATH", "with --broker: where to steer the survey tag, lines \"x y [floor]\""),
                ]) + Setting.broker(defaultUsername: "simulator"))
        ])

    static func run(_ settings: Settings) async throws -> ExitStatus {
        let mapPath = try settings.required("map")
        guard let tags = try settings.integer("tags") else { throw SettingsError.invalid("--tags is required") }
        guard let duration = try settings.number("duration") else {
            throw SettingsError.invalid("--duration is required")
        }
        let seedText = try settings.required("seed")
        guard let seed = UInt64(seedText) else {
            throw SettingsError.invalid("--seed needs a whole number ≥ 0, not \"\(seedText)\"")
        }
        var configuration = SimulationConfiguration()
        configuration.tagCount = tags
        configuration.duration = duration
        if let sigma = try settings.number("sigma") { configuration.channel.shadowingSigma = sigma }
        if let sigma = try settings.number("place-sigma") { configuration.channel.placeShadowingSigma = sigma }
        if let loss = try settings.number("floor-loss") { configuration.channel.floorLoss = loss }
        if let loss = try settings.number("advert-loss") { configuration.channel.advertLoss = loss }
        if let start = try settings.number("start") { configuration.startTime = start }
        // Agents also advertise their own beacons and hear each other, for automatic calibration.
        configuration.agentBeacons = try settings.switchValue("agent-beacons")
        let surveyTag = try settings.value("survey-tag").map { text throws(SettingsError) in
            guard let tag = TagIdentity(wire: text) else {
                throw SettingsError.invalid("--survey-tag: not a tag identity: \(text)")
            }
            return tag
        }
        configuration.steeredTags = surveyTag.map { [$0] } ?? []
        let waypointsPath = settings.value("waypoints")
        let readingsPath = settings.value("readings")
        let truthPath = settings.value("truth")
        let broker: BrokerSettings? =
            settings.value("broker") != nil ? try BrokerSettings(settings, defaultUsername: "simulator") : nil
        let clock = try ScaledClock(scale: try settings.number("speed"), origin: try settings.number("time-origin"))
        if waypointsPath != nil, broker == nil || surveyTag == nil {
            throw UsageError("--waypoints steers the --survey-tag of a simulation run through a --broker")
        }
        if broker != nil {
            guard readingsPath == nil else {
                throw UsageError("with --broker, the locator records the readings (--record)")
            }
            configuration.startTime = (clock.now() / configuration.window).rounded(.up) * configuration.window
            // Each agent's real pipeline hears the adverts themselves.
            configuration.keepsAdverts = true
        }

        let map = try RecordingFiles.map(mapPath)
        var simulator: Simulator
        do {
            simulator = try Simulator(map: map, configuration: configuration, seed: seed)
        } catch {
            throw UsageError(error.description)
        }
        if let broker {
            var steering: SimulatedAgents.Steering?
            if let surveyTag, let waypointsPath {
                steering = SimulatedAgents.Steering(
                    tag: surveyTag, waypoints: try LineFeed.queue(waypointsPath), floor: map.floors.first?.major ?? 0)
            }
            return try await publish(
                &simulator, through: broker, clock: clock, truthPath: truthPath, steering: steering)
        }
        return try write(&simulator, readingsPath: readingsPath, truthPath: truthPath)
    }

    /// Runs the simulation through the broker as the map's agents, reporting every 10 % of it; writes the truth
    /// as it goes when asked to.
    private static func publish(
        _ simulator: inout Simulator, through broker: BrokerSettings, clock: ScaledClock, truthPath: String?,
        steering: SimulatedAgents.Steering?
    ) async throws -> ExitStatus {
        let duration = simulator.configuration.duration
        let truthWriter = try truthPath.map { path throws(RuntimeError) in try LineWriter(replacing: path) }
        var lastReport = -1
        let published = try await SimulatedAgents.run(
            simulator: &simulator,
            broker: broker,
            clock: clock,
            truth: truthWriter,
            steering: steering
        ) { fraction in
            let percent = Int(fraction * 100)
            if percent / 10 != lastReport / 10 {
                lastReport = percent
                printError("sim: \(percent) % of \(fixed(duration, 0)) s simulated")
            }
        }
        printError(
            "simulated \(simulator.configuration.tagCount) tags through \(broker.address) as "
                + "\(simulator.map.agents.count) agents: \(published.batches) batches of \(published.adverts) adverts"
                + (truthPath.map { ", truth -> \($0)" } ?? "")
        )
        return .success
    }

    /// Runs the whole simulation at once and writes its readings and truth to the files given.
    private static func write(
        _ simulator: inout Simulator, readingsPath: String?, truthPath: String?
    ) throws -> ExitStatus {
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
            "simulated \(simulator.configuration.tagCount) tags and \(simulator.map.agents.count) agents for "
                + "\(fixed(simulator.configuration.duration, 0)) s: "
                + "\(readingCount) readings\(readingsPath.map { " -> \($0)" } ?? ""), "
                + "\(truthCount) truth samples\(truthPath.map { " -> \($0)" } ?? "")"
        )
        return .success
    }
}
