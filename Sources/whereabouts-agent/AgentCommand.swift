import CommandLineSupport
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsCore
import WhereaboutsHCI
import WhereaboutsMQTT
import WhereaboutsRadio
import WhereaboutsRuntime
import WhereaboutsSession
import WhereaboutsWire

/// Wires the radio, the agent's pipeline and the MQTT client on the runner, and runs until a signal or the end of a
/// replay.
enum AgentCommand {
    static func run(_ arguments: [String]) async -> ExitStatus {
        let startup: AgentStartup
        do {
            let invocation = try AgentSettings.invocation(
                arguments: arguments, environment: Environment.values(AgentSettings.environmentKeys),
                readFile: SettingsFileReader.read)
            switch invocation {
            case .check(let settings): return await check(settings)
            case .run(let settings): startup = try AgentStartup(settings)
            }
        } catch {
            return error.report(program: "whereabouts-agent", usage: AgentSettings.usage)
        }
        let settings = startup.settings
        let logger = Logger(label: "whereabouts-agent", level: Logger.Level(settings.logLevel) ?? .info)
        // The radio first: without Bluetooth there is nothing to publish, so fail before touching the broker.
        let radio: AgentRadio
        do {
            radio = try await AgentRadio.open(settings, logger: logger)
        } catch {
            logger.error("\(error)")
            return .failure
        }
        let status = await serve(startup, radio: radio, logger: logger)
        await radio.close()
        return status
    }

    /// `--check`: the report on stdout as it comes; 0 when a beacon the agent would publish was heard.
    static func check(_ settings: AgentCheckSettings) async -> ExitStatus {
        let outcome = await RadioCheck.run(settings) { writeOut($0 + "\n") }
        switch outcome {
        case .heard: return .success
        case .silent: return .failure
        case .failed(let message):
            printError("whereabouts-agent: error: \(message)")
            return .failure
        }
    }

    static func serve(_ startup: AgentStartup, radio: AgentRadio, logger: Logger) async -> ExitStatus {
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
        configuration.isLive = radio.isLive
        configuration.journaled = settings.stateDirectory != nil
        configuration.gatt = settings.gatt
        let pipeline = AgentPipeline(
            configuration: configuration, at: ServiceTime(now: WallClock.now(), monotonic: WallClock.monotonic()))
        var state = ServiceState(pipeline: pipeline)
        let journal: OutboxJournalFile?
        do {
            journal = try openJournal(settings, into: &state, logger: logger)
        } catch {
            logger.error("\(error)")
            return .failure
        }

        var clientConfiguration = startup.client
        clientConfiguration.will = MQTTWill(state.session.will)
        if settings.insecure { logger.warning("--insecure: the broker's certificate is NOT verified") }
        let client: MQTTClient
        do {
            client = try MQTTClient(clientConfiguration)
        } catch {
            logger.error("cannot set up the MQTT client: \(error)")
            return .failure
        }
        if case .replay(let replay) = radio { logger.info("replaying \(replay.path) at \(replay.speed) pace") }
        logger.info(
            "agent \(settings.agent) site \(settings.site) epoch \(epoch): broker \(startup.broker), "
                + "window \(settings.window) s, buffer \(settings.bufferBatches) batches, "
                + "constraints "
                + (settings.filter.selectsAllBeacons
                    ? "any" : settings.filter.constraints.map(\.description).joined(separator: " "))
        )
        let runner = ServiceRunner<AgentPipeline, AgentRadio>(
            .init(
                client: client, source: radio, clock: { WallClock.now() },
                tickInterval: .milliseconds(250), logger: logger, brokerName: "\(startup.broker)"))
        let final = await runner.run(state, journal: journal)
        let summary = final.pipeline.summary(outbox: final.session.outbox, sourceDrops: radio.droppedEvents)
        printError("whereabouts-agent summary: \(summary)")
        if let failure = final.failure {
            logger.error(failure)
            return .failure
        }
        // Lost batches are an exit status, not only a counter: a replay must deliver everything, and an agent
        // whose every batch the broker refused has achieved nothing.
        let outbox = final.session.outbox.statistics
        let abandoned = final.session.outbox.heldPublications
        if let journal, abandoned > 0 {
            if journal.isWritable {
                logger.info("\(abandoned) unacknowledged batches stay in \(journal.path) for the next start")
            } else {
                logger.error("\(abandoned) unacknowledged batches are lost: \(journal.path) could not be written")
            }
        }
        let everyBatchRefused = outbox.refused > 0 && outbox.refused == outbox.acknowledged
        if everyBatchRefused || (!radio.isLive && outbox.refused + outbox.dropped + abandoned > 0) {
            logger.error(
                "\(outbox.refused) batches refused by the broker, \(outbox.dropped) dropped, \(abandoned) never "
                    + "acknowledged: readings were lost")
            return .failure
        }
        return .success
    }

    /// The journal in the state directory, if there is one, with what the last run left queued first. A journal
    /// that cannot be written (a full disk) does not stop the agent: it starts degraded, from memory, and says so.
    static func openJournal(
        _ settings: AgentSettings, into state: inout ServiceState<AgentPipeline>, logger: Logger
    ) throws(RuntimeError) -> OutboxJournalFile? {
        guard let directory = settings.stateDirectory else { return nil }
        let journal = try OutboxJournalFile(path: directory + "/\(settings.agent).outbox")
        let pipeline = state.pipeline
        let failure = journal.restore(into: &state) { pipeline.restoredPublication($0) }
        for note in journal.notes { logger.warning(note) }
        logger.info(
            "outbox journal \(journal.path): \(journal.restoredCount) unacknowledged batches from the last run, sent first"
        )
        if let failure {
            logger.error("starting degraded (status \(Availability.degraded.payload)): \(failure.message)")
            let time = ServiceTime(now: WallClock.now(), monotonic: WallClock.monotonic())
            _ = state.journalWritable(false, at: time)
        }
        return journal
    }
}
