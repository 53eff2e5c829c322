import CommandLineSupport
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsMQTT
import WhereaboutsMapFile
import WhereaboutsRuntime
import WhereaboutsSession
import WhereaboutsWire

/// Wires the map, the pipeline and the MQTT client, and runs until SIGINT or SIGTERM.
enum LocatorCommand {
    static func run(_ arguments: [String]) async -> ExitStatus {
        let settings: LocatorSettings
        do {
            settings = try LocatorSettings(arguments)
        } catch {
            return error.report(program: "whereabouts-locator", usage: LocatorSettings.usage)
        }
        let map: FloorMap
        do {
            switch FloorMap.parse(try FileAccess.read(settings.mapPath)) {
            case .success(let loaded): map = loaded
            case .failure(let problems):
                printError("whereabouts-locator: \(settings.mapPath) is not a valid map:")
                for problem in problems.problems { printError("  \(problem)") }
                return .usage
            }
        } catch {
            printError("whereabouts-locator: \(error)")
            return .usage
        }
        let logger = Logger(label: "whereabouts-locator", level: settings.logLevel)
        do {
            try await serve(map: map, settings: settings, logger: logger)
            return .success
        } catch {
            logger.error("\(error)")
            return .failure
        }
    }

    static func serve(map: FloorMap, settings: LocatorSettings, logger: Logger) async throws {
        let pipeline = LocatorPipeline(map: map, configuration: settings.pipeline)
        let service = LocatorService(pipeline: pipeline, updateInterval: settings.updateInterval)
        let state = ServiceState(pipeline: service)
        var configuration = settings.client
        let will = state.session.will
        configuration.will = MQTTWill(
            topic: will.topic.name, payload: Array(will.payload.utf8), qos: .atLeastOnce, retain: true)
        if settings.insecure { logger.warning("--insecure: the broker's certificate is NOT verified") }
        let client = try MQTTClient(configuration)
        let recorder = try settings.recordPath.map { path throws(RuntimeError) in try LineWriter(appendingTo: path) }
        logger.info(
            "site \(map.site.name) (\(map.site.uuid)): \(map.floors.count) floors, \(map.zones.count) zones, "
                + "\(map.agents.count) agents; broker \(settings.broker); calibration \(settings.pipeline.calibration.mode)"
        )
        let clock = settings.clock
        let runner = ServiceRunner<LocatorService, NoSource>(
            .init(
                client: client, source: NoSource(), clock: { clock.now() },
                tickInterval: .milliseconds(max(Int(settings.updateInterval * 1000), 1)), logger: logger,
                brokerName: "\(settings.broker)"))
        let final = await runner.run(state, recorder: recorder)
        recorder?.flush()
        if let failure = final.failure { throw RuntimeError(failure) }
        let metrics = final.pipeline.pipeline.metrics(now: clock.now())
        logger.info(
            "stopped: \(metrics.readingsAccepted) readings accepted, "
                + "\(metrics.readingsRejected.values.reduce(0, +)) rejected"
        )
    }
}
