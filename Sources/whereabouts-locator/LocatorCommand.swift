import CommandLineSupport
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsMQTT
import WhereaboutsMapFile
import WhereaboutsWire

/// Wires the map, the pipeline and the MQTT client, and runs until SIGINT or SIGTERM.
enum LocatorCommand {
    /// What reaches the task that owns the pipeline.
    enum Input: Sendable {
        case message(MQTTMessage)
        case event(MQTTConnectionEvent)
        case tick
        case signal(Int32)
        case stopped((any Error)?)
        case inboxDrained
    }

    static func run(_ arguments: [String]) async -> ExitStatus {
        if arguments.contains("--help") {
            print(LocatorSettings.usage)
            return .success
        }
        let settings: LocatorSettings
        let map: FloorMap
        do {
            settings = try LocatorSettings(arguments)
            let bytes = try FileAccess.read(settings.mapPath)
            switch FloorMap.parse(bytes) {
            case .success(let loaded): map = loaded
            case .failure(let problems):
                printError("whereabouts-locator: \(settings.mapPath) is not a valid map:")
                for problem in problems.problems { printError("  \(problem)") }
                return .usage
            }
        } catch let error as UsageError {
            printError("whereabouts-locator: \(error.message)")
            return .usage
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
        var pipeline = LocatorPipeline(map: map, configuration: settings.pipeline)
        var configuration = settings.client
        let will = pipeline.lastWill
        configuration.will = MQTTWill(
            topic: will.topic.name, payload: Array(will.payload.utf8), qos: .atLeastOnce, retain: true)
        if settings.insecure { logger.warning("--insecure: the broker's certificate is NOT verified") }
        let client = try MQTTClient(configuration)
        for subscription in pipeline.subscriptions {
            _ = try client.subscribe(
                subscription.filter.filter, qos: subscription.qos == 0 ? .atMostOnce : .atLeastOnce)
        }
        let recorder = try settings.recordPath.map { path throws(RuntimeError) in try LineWriter(appendingTo: path) }
        let notifier = SystemdNotifier()
        logger.info(
            "site \(map.site.name) (\(map.site.uuid)): \(map.floors.count) floors, \(map.zones.count) zones, "
                + "\(map.agents.count) agents; broker \(settings.broker); calibration \(settings.pipeline.calibration.mode)"
        )

        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
        var failure: (any Error)?
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await client.run()
                    continuation.yield(.stopped(nil))
                } catch {
                    continuation.yield(.stopped(error))
                }
            }
            group.addTask {
                // Every message the client took was acknowledged to the broker: it must reach the pipeline.
                for await message in client.messages { continuation.yield(.message(message)) }
                continuation.yield(.inboxDrained)
            }
            group.addTask { for await event in client.events { continuation.yield(.event(event)) } }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(settings.updateInterval))
                    continuation.yield(.tick)
                }
            }
            group.addTask {
                for await number in SignalWatcher.terminationSignals() {
                    continuation.yield(.signal(number))
                }
            }

            var outbox = PublicationOutbox()
            var pendingSinceTick = false
            var lastTick = -Double.infinity
            var lastRealTick = -Double.infinity
            var lastWatchdog = -Double.infinity
            var ready = false
            var stopping = false
            var goodbyeMessage: Int?
            var clientStopped = false
            var inboxDrained = false

            func perform(_ actions: [LocatorAction]) {
                for action in actions {
                    switch action {
                    case .publish(let publication):
                        send(publication)
                    case .record(let line):
                        do {
                            try recorder?.write(line)
                        } catch {
                            logger.error("\(error)")
                        }
                    case .log(let line):
                        logger.warning(line)
                    }
                }
            }
            func send(_ publication: Publication) {
                do {
                    _ = try client.publish(
                        topic: publication.topic.name,
                        payload: Array(publication.payload.utf8),
                        qos: publication.qos == 0 ? .atMostOnce : .atLeastOnce,
                        retain: publication.retain
                    )
                } catch {
                    outbox.enqueue(publication)
                }
            }

            for await input in inputs {
                let now = settings.clock.now()
                switch input {
                case .message(let message):
                    perform(pipeline.receive(topic: message.topic, payload: message.payload, now: now))
                    pendingSinceTick = true
                    // Update at once unless an update ran within the interval: a lone batch is answered without
                    // waiting for the ticker, and a burst is still coalesced into one update per interval.
                    let real = WallClock.monotonic()
                    if real - lastRealTick >= settings.updateInterval {
                        perform(pipeline.tick(now: now))
                        pendingSinceTick = false
                        lastTick = now
                        lastRealTick = real
                    }
                case .tick:
                    if pendingSinceTick || now - lastTick >= 1 {
                        perform(pipeline.tick(now: now))
                        recorder?.flush()
                        pendingSinceTick = false
                        lastTick = now
                        lastRealTick = WallClock.monotonic()
                    }
                    if let interval = notifier.watchdogInterval, now - lastWatchdog >= interval {
                        notifier.watchdog()
                        lastWatchdog = now
                    }
                case .event(let event):
                    switch event {
                    case .connected(let sessionPresent):
                        logger.info("connected to \(settings.broker) (session \(sessionPresent ? "resumed" : "new"))")
                        for publication in outbox.drain() { send(publication) }
                        perform(pipeline.connected(now: now))
                        if !ready {
                            notifier.ready()
                            ready = true
                        }
                    case .disconnected(let reason):
                        if !stopping { logger.warning("disconnected: \(reason)") }
                    case .connectionFailed(let failure):
                        logger.warning("connection failed: \(failure)")
                    case .reconnectScheduled(let attempt, let delay):
                        logger.info("reconnecting in \(delay) (attempt \(attempt))")
                    case .acknowledged(let messageID, _):
                        if messageID == goodbyeMessage { client.disconnect() }
                    case .subscribed, .unsubscribed:
                        break
                    }
                case .signal(let number):
                    guard !stopping else { continue }
                    stopping = true
                    logger.info("signal \(number): publishing offline and disconnecting")
                    notifier.stopping()
                    perform(pipeline.tick(now: now))
                    recorder?.flush()
                    var goodbye = pipeline.shutdown(now: now)
                    let last = goodbye.removeLast()
                    perform(goodbye)
                    if case .publish(let offline) = last {
                        do {
                            goodbyeMessage = try client.publish(
                                topic: offline.topic.name,
                                payload: Array(offline.payload.utf8),
                                qos: .atLeastOnce,
                                retain: true
                            )
                        } catch {
                            client.disconnect()
                        }
                    }
                    // Do not wait for the acknowledgement for ever.
                    group.addTask {
                        try? await Task.sleep(for: .seconds(2))
                        client.disconnect()
                    }
                case .stopped(let error):
                    failure = error
                    clientStopped = true
                case .inboxDrained:
                    inboxDrained = true
                }
                if clientStopped && inboxDrained {
                    perform(pipeline.tick(now: settings.clock.now()))
                    break
                }
            }
            group.cancelAll()
        }
        recorder?.flush()
        if let failure { throw failure }
        let metrics = pipeline.metrics(now: settings.clock.now())
        logger.info(
            "stopped: \(metrics.readingsAccepted) readings accepted, "
                + "\(metrics.readingsRejected.values.reduce(0, +)) rejected"
        )
    }
}
