import CommandLineSupport
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsCore
import WhereaboutsHCI
import WhereaboutsMQTT
import WhereaboutsWire

/// Wires the source, the agent loop and the MQTT client, and runs until a signal or the end of a replay.
enum AgentCommand {
    /// Where events come from, ready to run.
    enum PreparedSource {
        case live(LiveScan, AsyncStream<[UInt8]>)
        case replay(BtsnoopReplay)
    }

    static func run(_ arguments: [String]) async -> ExitStatus {
        let startup: AgentStartup
        do {
            startup = try AgentStartup(arguments)
        } catch {
            switch error {
            case .help:
                print(AgentSettings.usage)
                return .success
            case .invalid(let message):
                printError("whereabouts-agent: \(message)")
                return .usage
            }
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
        var configuration = startup.client
        configuration.will = MQTTWill(
            topic: topics.agentStatus(agent: settings.agent).name, payload: Array(Availability.offline.payload.utf8),
            qos: .atLeastOnce, retain: true)
        if settings.insecure { logger.warning("--insecure: the broker's certificate is NOT verified") }
        let client: MQTTClient
        do {
            client = try MQTTClient(configuration)
        } catch {
            logger.error("cannot set up the MQTT client: \(error)")
            return .failure
        }
        let epoch = Int(WallClock.now() * 1000)
        let liveScan: LiveScan?
        switch source {
        case .live(let scan, _): liveScan = scan
        case .replay(let replay):
            liveScan = nil
            logger.info("replaying \(replay.path) at \(replay.speed) pace")
        }
        logger.info(
            "agent \(settings.agent) site \(settings.site) epoch \(epoch): broker \(startup.broker), "
                + "window \(settings.window) s, buffer \(settings.bufferBatches) batches, "
                + "constraints \(settings.filter.constraints.map(\.description).joined(separator: " "))"
        )

        let (inputs, continuation) = AsyncStream.makeStream(of: AgentInput.self)
        let (credits, creditContinuation) = AsyncStream.makeStream(of: Void.self)
        var loop = AgentLoop(
            settings: settings, topics: topics, epoch: epoch, client: client, liveScan: liveScan, logger: logger,
            credits: creditContinuation)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await client.run()
                    continuation.yield(.clientStopped(nil))
                } catch {
                    continuation.yield(.clientStopped(error))
                }
                continuation.finish()
            }
            group.addTask { for await event in client.events { continuation.yield(.connection(event)) } }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(250))
                    continuation.yield(.tick)
                }
            }
            group.addTask {
                for await number in SignalWatcher.terminationSignals() { continuation.yield(.signal(number)) }
            }
            switch source {
            case .live(let scan, let stream):
                group.addTask { await scan.run(firstStream: stream, into: continuation, credits: credits) }
            case .replay(let replay):
                group.addTask { await replay.run(into: continuation, credits: credits) }
            }
            for await input in inputs {
                await loop.handle(input)
            }
            group.cancelAll()
            creditContinuation.finish()
        }
        printError("whereabouts-agent summary: \(loop.summary())")
        if let failure = loop.failure {
            logger.error(failure)
            return .failure
        }
        return .success
    }
}
