import CommandLineSupport
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsMQTT
import WhereaboutsMapFile
import WhereaboutsRuntime
import WhereaboutsSession
import WhereaboutsSettings
import WhereaboutsWire

/// Wires the map, the pipeline and the MQTT client, and runs until SIGINT or SIGTERM; SIGHUP reloads the map (a bad
/// one is refused, the old one kept) and reopens the recording.
enum LocatorCommand {
    static func run(_ arguments: [String]) async -> ExitStatus {
        let settings: LocatorSettings
        do {
            settings = try LocatorSettings(arguments)
        } catch {
            return error.report(program: "whereabouts-locator", usage: LocatorCommandLine.interface.usage)
        }
        let map: FloorMap
        switch loadMap(settings.mapPath) {
        case .success(let loaded): map = loaded
        case .failure(let refusal):
            printError("whereabouts-locator: \(refusal.reason)")
            for line in refusal.details { printError("  \(line)") }
            return .usage
        }
        if let floors = settings.pipeline.floors {
            do {
                _ = try FloorShare(map: map, floors: floors, margin: settings.pipeline.floorMargin)
            } catch {
                printError("whereabouts-locator: \(error)")
                return .usage
            }
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
        var pipeline = LocatorPipeline(map: map, configuration: settings.pipeline)
        // Read before the first connection: a batch the last run took is a duplicate from the first message on.
        let ledger = settings.stateDirectory.map { BatchLedgerFile(directory: $0, clientID: settings.client.clientID) }
        let saver = LedgerSaver<LocatorEffect>(file: ledger, logger: logger) { effect in
            switch effect {
            case .saveLedger(let bytes): .save(bytes)
            case .journalLedger(let lines): .journal(lines)
            case .metrics: nil
            }
        }
        if ledger != nil {
            saver.restore { bytes in
                try pipeline.restoreLedger(bytes)
                return pipeline.ledgerAgentCount
            }
            saver.replayJournal { pipeline.replayLedgerJournal($0) }
        } else {
            logger.info(
                "no state directory (--state-dir): the batch ledger is kept in memory only, so a batch the broker "
                    + "delivers again after a restart may be taken twice, and batches lost while the locator was down "
                    + "are not counted as missing")
        }
        let service = LocatorService(
            pipeline: pipeline, updateInterval: settings.updateInterval, outboxBytes: settings.outboxBytes,
            lease: settings.lease,
            ledgerInterval: ledger == nil ? nil : LocatorService.defaultLedgerInterval,
            snapshotInterval: settings.metricsListen == nil ? nil : 1)
        let state = ServiceState(pipeline: service)
        var configuration = settings.client
        // Every message libmosquitto hands over is already acknowledged: hold few, so that a crash loses at most
        // the inbox (and make its thread wait when it is full); never copy an oversized payload whole.
        configuration.inboxLimit = LocatorService.inboxLimit
        configuration.receiveMaximum = LocatorService.inboxLimit
        configuration.payloadLimit = settings.pipeline.limits.maximumPayloadBytes
        // … nor read one: the broker is told the largest packet it may send (a 100 MB payload cost libmosquitto two
        // copies of it before the callback could refuse it).
        configuration.maximumPacketSize = LocatorService.maximumPacketSize(
            payloadLimit: settings.pipeline.limits.maximumPayloadBytes)
        // Positions go at QoS 0, thousands a second on a campus, and the outbox releases them when handed over: a
        // report of each one written was an event and two task wake-ups for nothing.
        configuration.reportsQoS0Completions = service.session.outbox.waitsForQoS0Completions
        configuration.will = MQTTWill(state.session.will)
        if settings.insecure { logger.warning("--insecure: the broker's certificate is NOT verified") }
        let client = try MQTTClient(configuration)
        let recorder = try settings.recordPath.map { path throws(RuntimeError) in try LineWriter(appendingTo: path) }
        if let recorder, recorder.repairedBytes > 0 {
            logger.warning("\(recorder.path): cut off a torn last line of \(recorder.repairedBytes) bytes")
        }
        logStart(map: map, settings: settings, pipeline: pipeline, logger: logger)
        let endpoint = try settings.metricsListen.map { address throws(RuntimeError) in
            try MetricsEndpoint(address, initial: LocatorMetricsSnapshot(), logger: logger) {
                [start = WallClock.now()] in
                $0.prometheusText(version: BuildVersion.current, startTime: start)
            }
        }
        let clock = settings.clock
        let source = TappedSource(saver) { if case .metrics(let snapshot) = $0 { endpoint?.publish(snapshot) } }
        let runner = ServiceRunner<LocatorService, TappedSource<LedgerSaver<LocatorEffect>>>(
            .init(
                client: client, source: source, clock: { clock.now() },
                tickInterval: .milliseconds(max(Int(settings.updateInterval * 1000), 1)), logger: logger,
                brokerName: "\(settings.broker)", reload: { [mapPath = settings.mapPath] in loadMap(mapPath) }))
        let run = { await runner.run(state, recorder: recorder) }
        let final = if let endpoint { await endpoint.serving(run) } else { await run() }
        // The client has stopped and every batch it took is in the ledger: none is taken after this save.
        if let ledger, saver.save(final.pipeline.pipeline.ledger) {
            logger.info("batch ledger saved to \(ledger.path): \(final.pipeline.pipeline.ledgerAgentCount) agents")
        }
        if let failure = final.failure { throw RuntimeError(failure) }
        let metrics = final.pipeline.pipeline.metrics(now: clock.now())
        logger.info(
            "stopped: \(metrics.readingsAccepted) readings accepted, "
                + "\(metrics.readingsRejected.values.reduce(0, +)) rejected"
        )
    }

    /// Says what the locator serves: the site, the broker, and its part in a pair or a split site.
    static func logStart(map: FloorMap, settings: LocatorSettings, pipeline: LocatorPipeline, logger: Logger) {
        logger.info(
            "site \(map.site.name) (\(map.site.uuid)): \(map.floors.count) floors, \(map.zones.count) zones, "
                + "\(map.agents.count) agents; broker \(settings.broker); calibration \(settings.pipeline.calibration.mode)"
        )
        if let lease = settings.lease {
            logger.info(
                "role auto as \(lease.instance): standby until it holds \(pipeline.topics.locatorLease) (lease \(lease.ttl) s)"
            )
        }
        if let share = pipeline.share {
            logger.info(
                "floors \(share.floors.map(String.init).joined(separator: ",")) of the site: hearing the agents of floors "
                    + "\(share.heardFloors.map(String.init).joined(separator: ","))"
                    + (share.ownsSite ? ", publishing the site-wide outputs" : "; status on \(pipeline.statusTopic)"))
        }
    }

    /// Reads and validates the map file; a refusal names the file and lists every problem with its JSON path. Only
    /// a regular file is read: a FIFO would block the start, or the running loop at SIGHUP.
    static func loadMap(_ path: String) -> Result<FloorMap, ReloadRefusal> {
        let bytes: [UInt8]
        do {
            guard let read = try FileAccess.readStateFile(path, limit: 256 << 20) else {
                return .failure(ReloadRefusal("cannot open \(path): no such file"))
            }
            bytes = read
        } catch {
            return .failure(ReloadRefusal("\(error)"))
        }
        switch FloorMap.parse(bytes) {
        case .success(let map): return .success(map)
        case .failure(let problems):
            return .failure(ReloadRefusal("\(path) is not a valid map:", details: problems.problems.map { "\($0)" }))
        }
    }
}
