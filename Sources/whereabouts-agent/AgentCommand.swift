import CommandLineSupport
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsCore
import WhereaboutsHCI
import WhereaboutsMQTT
import WhereaboutsRuntime
import WhereaboutsSession
import WhereaboutsWire

/// Wires the source, the agent loop and the MQTT client, and runs until a signal or the end of a replay.
enum AgentCommand {
    /// Where events come from, ready to run.
    enum PreparedSource: Sendable {
        case live(LiveScan, AsyncStream<[UInt8]>)
        case replay(BtsnoopReplay)
    }

    static func run(_ arguments: [String]) async -> ExitStatus {
        let startup: AgentStartup
        do {
            startup = try AgentStartup(arguments)
        } catch {
            return error.report(program: "whereabouts-agent", usage: AgentSettings.usage)
        }
        let settings = startup.settings
        let logger = Logger(label: "whereabouts-agent", level: Logger.Level(settings.logLevel) ?? .info)
        // The radio first: without Bluetooth there is nothing to publish, so fail before touching the broker.
        let source: PreparedSource
        do {
            source = try await prepare(settings, logger: logger)
        } catch {
            logger.error("\(error)")
            return .failure
        }
        let status = await serve(startup, source: source, logger: logger)
        if case .live(let scan, _) = source { scan.controller.close() }
        return status
    }

    /// Opens the controller and starts scanning (and advertising), or checks the capture file.
    static func prepare(_ settings: AgentSettings, logger: Logger) async throws -> PreparedSource {
        switch settings.source {
        case .btsnoop(let path):
            try BtsnoopReplay.check(path)
            if case .on(let advertisement) = settings.advertising {
                logger.info("replaying a capture: not advertising \(advertisement.tag)")
            }
            return .replay(BtsnoopReplay(path: path, speed: settings.replaySpeed, keepsTimes: settings.keepTimes))
        case .hci(let device):
            guard
                let parameters = LEScanParameters(
                    active: settings.activeScan, intervalMilliseconds: settings.scanIntervalMilliseconds,
                    windowMilliseconds: settings.scanWindowMilliseconds)
            else { throw RuntimeError("scan interval and window are out of range") }
            let controller: HCIController
            do {
                controller = try HCIController.open(device)
            } catch {
                throw RuntimeError("cannot open Bluetooth controller \(device): \(error)")
            }
            do {
                let stream = try await controller.startScanning(parameters)
                switch settings.advertising {
                case .on(let advertisement):
                    guard let advertisingParameters = LEAdvertisingParameters(intervalMilliseconds: 200) else {
                        throw RuntimeError("advertising interval out of range")
                    }
                    try await controller.startAdvertising(advertisement, parameters: advertisingParameters)
                    logger.info("advertising \(advertisement.tag) at \(advertisement.measuredPower) dBm")
                case .off(let reason):
                    logger.info(reason)
                }
                logger.info("scanning on \(device) (\(settings.activeScan ? "active" : "passive"))")
                return .live(LiveScan(controller: controller, parameters: parameters), stream)
            } catch {
                controller.close()
                throw RuntimeError("Bluetooth controller \(device): \(error)")
            }
        }
    }

    static func serve(_ startup: AgentStartup, source: PreparedSource, logger: Logger) async -> ExitStatus {
        let settings = startup.settings
        let topics = Topics(site: settings.site)
        let epoch = Int(WallClock.now() * 1000)
        var configuration = AgentPipeline.Configuration(
            agent: settings.agent, topics: topics, epoch: epoch, filter: settings.filter)
        configuration.window = settings.window
        configuration.maximumTags = settings.maximumTags
        configuration.bufferBatches = settings.bufferBatches
        configuration.watchdogTimeout = settings.watchdogTimeout
        configuration.metricsInterval = settings.metricsInterval
        configuration.shutdownTimeout = settings.shutdownTimeout
        if case .live = source { configuration.isLive = true }
        let pipeline = AgentPipeline(
            configuration: configuration, at: ServiceTime(now: WallClock.now(), monotonic: WallClock.monotonic()))
        let state = ServiceState(pipeline: pipeline)

        var clientConfiguration = startup.client
        let will = state.session.will
        clientConfiguration.will = MQTTWill(
            topic: will.topic.name, payload: Array(will.payload.utf8), qos: .atLeastOnce, retain: true)
        if settings.insecure { logger.warning("--insecure: the broker's certificate is NOT verified") }
        let client: MQTTClient
        do {
            client = try MQTTClient(clientConfiguration)
        } catch {
            logger.error("cannot set up the MQTT client: \(error)")
            return .failure
        }
        if case .replay(let replay) = source { logger.info("replaying \(replay.path) at \(replay.speed) pace") }
        logger.info(
            "agent \(settings.agent) site \(settings.site) epoch \(epoch): broker \(startup.broker), "
                + "window \(settings.window) s, buffer \(settings.bufferBatches) batches, "
                + "constraints \(settings.filter.constraints.map(\.description).joined(separator: " "))"
        )
        let runner = ServiceRunner<AgentPipeline, AgentSource>(
            .init(
                client: client, source: AgentSource(source), clock: { WallClock.now() },
                tickInterval: .milliseconds(250), logger: logger, brokerName: "\(startup.broker)"))
        let final = await runner.run(state)
        var sourceDrops = 0
        if case .live(let scan, _) = source { sourceDrops = scan.controller.droppedEvents }
        printError(
            "whereabouts-agent summary: \(final.pipeline.summary(outbox: final.session.outbox, sourceDrops: sourceDrops))"
        )
        if let failure = final.failure {
            logger.error(failure)
            return .failure
        }
        return .success
    }
}

/// The agent's source for the runner: a live scan or a capture.
struct AgentSource: ServiceSource {
    let prepared: AgentCommand.PreparedSource

    init(_ prepared: AgentCommand.PreparedSource) {
        self.prepared = prepared
    }

    func run(into feed: inout SourceFeed<AgentPipeline.Input>) async {
        switch prepared {
        case .live(let scan, let stream): await scan.run(firstStream: stream, into: &feed)
        case .replay(let replay): await replay.run(into: &feed)
        }
    }

    func perform(_ effect: AgentPipeline.Effect) async {
        guard case .live(let scan, _) = prepared else { return }
        switch effect {
        case .restartScan: await scan.restart()
        case .stopSource: await scan.stop()
        }
    }
}
