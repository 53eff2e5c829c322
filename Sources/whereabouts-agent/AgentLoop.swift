import CommandLineSupport
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsHCI
import WhereaboutsMQTT
import WhereaboutsWire

/// The agent's state, owned by the one task that consumes the inputs: decoding, windows, batches, the outbox,
/// the watchdogs and the shutdown sequence.
struct AgentLoop {
    /// Where shutdown stands.
    enum Phase: Equatable {
        /// Hearing, aggregating, publishing.
        case running
        /// The source is stopped and the last window flushed; waiting (until `deadline`, monotonic) for the
        /// outstanding acknowledgements.
        case draining(deadline: Double)
        /// `offline` is published as `messageID`; disconnecting on its acknowledgement or at `deadline`.
        case farewell(messageID: Int?, deadline: Double)
        /// Disconnect requested; waiting for the client to stop.
        case closing
    }

    let settings: AgentSettings
    let client: MQTTClient
    let liveScan: LiveScan?
    let logger: Logger
    let credits: AsyncStream<Void>.Continuation
    let readingsTopic: String
    let statusTopic: String
    let notifier = SystemdNotifier()

    private(set) var phase = Phase.running
    /// Why the agent will exit with status 1, if it will.
    private(set) var failure: String?
    private var decoder: SightingDecoder
    private var aggregator: WindowAggregator
    private var sequencer: BatchSequencer
    private var outbox: BatchOutbox
    private var watchdog: ScanWatchdog?
    private var metrics = AgentMetrics()
    private var ready = false
    private var lastSystemdPing = -Double.infinity
    private var lastMetricsLog: Double
    private var signalCount = 0
    /// Failed connection attempts since the last connection: only the first is a warning, so a long outage does
    /// not fill the journal (the minute counters show the buffer growing).
    private var failedAttempts = 0

    init(
        settings: AgentSettings, topics: Topics, epoch: Int, client: MQTTClient, liveScan: LiveScan?, logger: Logger,
        credits: AsyncStream<Void>.Continuation
    ) {
        self.settings = settings
        self.client = client
        self.liveScan = liveScan
        self.logger = logger
        self.credits = credits
        readingsTopic = topics.readings(agent: settings.agent).name
        statusTopic = topics.agentStatus(agent: settings.agent).name
        decoder = SightingDecoder(filter: settings.filter)
        aggregator = WindowAggregator(
            configuration: .init(windowLength: settings.window, maximumTags: settings.maximumTags))
        sequencer = BatchSequencer(agent: settings.agent, epoch: epoch)
        outbox = BatchOutbox(capacity: settings.bufferBatches)
        let now = WallClock.monotonic()
        lastMetricsLog = now
        if liveScan != nil {
            watchdog = ScanWatchdog(configuration: .init(timeout: settings.watchdogTimeout), now: now)
        }
    }

    // MARK: - Inputs

    mutating func handle(_ input: AgentInput) async {
        switch input {
        case .events(let events, let framing):
            // The credit goes back whatever happens, or the source would wait for ever.
            defer { credits.yield() }
            guard phase == .running else { return }
            hear(events, framing: framing)
        case .replayTime(let time):
            guard phase == .running else { return }
            enqueue(aggregator.advance(to: time))
        case .sourceEnded(let problem):
            if let problem {
                metrics.sourceProblem = problem.message
                if problem.isFailure {
                    failure = "source failed: \(problem)"
                    logger.error("source failed: \(problem)")
                } else {
                    logger.warning("replay stopped early: \(problem)")
                }
            } else if liveScan == nil {
                logger.info("end of the capture")
            }
            await beginShutdown()
        case .connection(let event):
            connection(event)
        case .tick:
            await tick()
        case .signal(let number):
            signalCount += 1
            if signalCount == 1 {
                logger.info("signal \(number): flushing the last window and disconnecting")
                await beginShutdown()
            } else {
                logger.warning("signal \(number) again: disconnecting now")
                phase = .closing
                client.disconnect()
            }
        case .clientStopped(let error):
            if let error, failure == nil { failure = "MQTT client stopped: \(error)" }
        }
    }

    private mutating func hear(_ events: [HeardEvent], framing: HCIFraming) {
        for event in events {
            metrics.events += 1
            let sightings = decoder.sightings(in: event.bytes[...], framing: framing, time: event.time)
            var closed = aggregator.advance(to: event.time)
            for sighting in sightings {
                closed += aggregator.add(sighting, at: event.time)
            }
            metrics.sightings += sightings.count
            if !closed.isEmpty { enqueue(closed) }
        }
        watchdog?.heard(events.count, now: WallClock.monotonic())
    }

    private mutating func connection(_ event: MQTTConnectionEvent) {
        switch event {
        case .connected(let sessionPresent):
            logger.info(
                "connected to the broker (session \(sessionPresent ? "resumed" : "new")"
                    + (failedAttempts > 0 ? ", after \(failedAttempts) failed attempts)" : ")"))
            failedAttempts = 0
            outbox.connectionEstablished()
            publishStatus(.online)
            if !ready {
                notifier.ready()
                ready = true
            }
            if case .farewell(nil, _) = phase {
                sayGoodbye()
            } else {
                pump()
            }
        case .disconnected(let reason):
            outbox.connectionLost()
            if phase != .closing { logger.warning("disconnected: \(reason)") }
        case .connectionFailed(let reason):
            failedAttempts += 1
            logger.log(failedAttempts == 1 ? .warning : .debug, "connection failed: \(reason)")
        case .reconnectScheduled(let attempt, let delay):
            logger.debug("reconnecting in \(delay) (attempt \(attempt)); \(outbox.count) batches buffered")
        case .acknowledged(let messageID, let reason):
            if case .farewell(let goodbye?, _) = phase, goodbye == messageID {
                phase = .closing
                client.disconnect()
                return
            }
            if let seq = outbox.acknowledged(messageID: messageID, success: !reason.isFailure), reason.isFailure {
                logger.warning("the broker refused batch \(seq): \(reason)")
            }
            pump()
            checkDrained()
        case .subscribed, .unsubscribed:
            break
        }
    }

    private mutating func tick() async {
        let monotonic = WallClock.monotonic()
        if phase == .running, liveScan != nil {
            enqueue(aggregator.advance(to: WallClock.now()))
        }
        if phase == .running, let liveScan, watchdog?.shouldRestart(now: monotonic) == true {
            metrics.scanRestarts += 1
            logger.warning(
                "no advertising reports for \(settings.watchdogTimeout) s after steady traffic: restarting the scan")
            await liveScan.restart()
        }
        if let interval = notifier.watchdogInterval, monotonic - lastSystemdPing >= interval {
            notifier.watchdog()
            lastSystemdPing = monotonic
        }
        if monotonic - lastMetricsLog >= settings.metricsInterval {
            lastMetricsLog = monotonic
            logger.info("counters: \(summary())")
        }
        switch phase {
        case .draining:
            checkDrained()
        case .farewell(_, let deadline) where monotonic >= deadline:
            phase = .closing
            client.disconnect()
        default:
            break
        }
    }

    // MARK: - Batches

    private mutating func enqueue(_ windows: [ClosedWindow]) {
        guard !windows.isEmpty else { return }
        for window in windows {
            let batch = sequencer.batch(for: window, sent: WallClock.now())
            metrics.batches += 1
            metrics.tagOverflow += window.overflow
            outbox.enqueue(seq: batch.seq, payload: Array(batch.payload.utf8))
        }
        pump()
    }

    /// Publishes what the outbox allows.
    private mutating func pump() {
        while let entry = outbox.nextToSend() {
            do {
                let messageID = try client.publish(topic: readingsTopic, payload: entry.payload, qos: .atLeastOnce)
                outbox.sent(seq: entry.seq, messageID: messageID)
            } catch  where error == .noConnection {
                outbox.connectionLost()
                return
            } catch {
                logger.error("cannot publish batch \(entry.seq): \(error); dropping it")
                outbox.discard(seq: entry.seq)
            }
        }
    }

    private func publishStatus(_ availability: Availability) {
        _ = try? client.publish(
            topic: statusTopic, payload: Array(availability.payload.utf8), qos: .atLeastOnce, retain: true)
    }

    // MARK: - Shutdown

    private mutating func beginShutdown() async {
        guard phase == .running else { return }
        notifier.stopping()
        await liveScan?.stop()
        if let window = aggregator.flush() { enqueue([window]) }
        phase = .draining(deadline: WallClock.monotonic() + settings.shutdownTimeout)
        checkDrained()
    }

    private mutating func checkDrained() {
        guard case .draining(let deadline) = phase else { return }
        guard outbox.isEmpty || WallClock.monotonic() >= deadline else { return }
        if !outbox.isEmpty {
            logger.warning("\(outbox.count) batches still unacknowledged at exit")
        }
        sayGoodbye()
    }

    /// Publishes `offline` (what the will would say, said cleanly) and disconnects once it is acknowledged.
    private mutating func sayGoodbye() {
        let deadline = WallClock.monotonic() + 2
        do {
            let messageID = try client.publish(
                topic: statusTopic, payload: Array(Availability.offline.payload.utf8), qos: .atLeastOnce,
                retain: true)
            phase = .farewell(messageID: messageID, deadline: deadline)
        } catch {
            phase = .closing
            client.disconnect()
        }
    }

    // MARK: - Counters

    /// The counters as one line.
    mutating func summary() -> String {
        metrics.drops = decoder.counters
        metrics.published = outbox.published
        metrics.republished = outbox.republished
        metrics.acknowledged = outbox.acknowledged
        metrics.refused = outbox.refused
        metrics.buffered = outbox.count
        metrics.bufferPeak = outbox.peak
        metrics.dropped = outbox.dropped
        metrics.sourceDrops = liveScan?.controller.droppedEvents ?? 0
        return metrics.line
    }
}
