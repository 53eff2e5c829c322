public import CommandLineSupport
import DetachedThread
import Synchronization
public import WhereaboutsMQTT
public import WhereaboutsSession
import WhereaboutsWire

/// The one loop both services run: it merges broker messages, connection events, source inputs, ticks and signals
/// into one stream, feeds them to the service's state in order, performs what comes back, and talks to systemd.
///
/// All decisions are in ``ServiceState`` and the pipeline; the runner only does I/O. It returns when the MQTT
/// client has stopped for good (the service said goodbye and disconnected, or the broker refused it) and every
/// message the client had taken has been handed to the pipeline: each of them was already acknowledged to the
/// broker, so none may be left behind.
public struct ServiceRunner<Pipeline: ServicePipeline, Source: ServiceSource>: Sendable
where Source.Input == Pipeline.Input, Source.Effect == Pipeline.Effect {
    /// What the runner needs besides the pipeline.
    public struct Context: Sendable {
        /// The connected-to-be client; the runner runs it.
        public var client: MQTTClient
        /// Where the service's own inputs come from.
        public var source: Source
        /// The service clock (Unix seconds, possibly scaled).
        public var clock: @Sendable () -> Double
        /// How often the pipeline ticks.
        public var tickInterval: Duration
        /// Where log lines go.
        public var logger: Logger
        /// The broker's address, for log lines.
        public var brokerName: String
        /// Reads the new settings on SIGHUP, or says in lines why they are refused (the old ones stay). Nil: SIGHUP
        /// only reopens the recording.
        public var reload: (@Sendable () -> Result<Pipeline.Reload, ReloadRefusal>)?

        public init(
            client: MQTTClient, source: Source, clock: @escaping @Sendable () -> Double, tickInterval: Duration,
            logger: Logger, brokerName: String,
            reload: (@Sendable () -> Result<Pipeline.Reload, ReloadRefusal>)? = nil
        ) {
            self.client = client
            self.source = source
            self.clock = clock
            self.tickInterval = tickInterval
            self.logger = logger
            self.brokerName = brokerName
            self.reload = reload
        }
    }

    private enum Input: Sendable {
        /// A message, with what the pipeline's preparation made of it (nil: nothing).
        case message(MQTTMessage, Pipeline.Prepared?)
        case connection(MQTTConnectionEvent)
        case source(Pipeline.Input)
        case tick
        case signal(Int32)
        case hangup
        /// The client's messages or events sequence ended (the client stopped).
        case clientSequenceEnded
    }

    private let context: Context

    /// The most QoS 0 publications handed to the client and not yet written (when it counts them,
    /// ``MQTTClient/unwrittenQoS0Publications``): a few megabytes of positions at most, and still 200,000 a second
    /// handed over at the locator's 20 ms ticks alone.
    public static var unwrittenQoS0Limit: Int { 4_096 }

    public init(_ context: Context) {
        self.context = context
    }

    /// Runs the service until it has stopped; returns its final state. `recorder` receives the `.record` lines;
    /// `journal` keeps the outbox on disk (the session's outbox must be journaled, and the journal restored).
    public func run(
        _ initial: ServiceState<Pipeline>, recorder: LineWriter? = nil, journal: OutboxJournalFile? = nil
    ) async -> ServiceState<Pipeline> {
        let preparation = Preparation(initial.pipeline.preparation)
        var loop = Loop(
            state: initial, context: context, recorder: recorder, journal: journal, preparation: preparation)
        let client = context.client
        if let failure = Self.subscribe(to: initial.pipeline.subscriptions, on: client) {
            loop.state.clientStopped(failure: failure)
            return loop.state
        }
        // The preparation (the locator's decoding) on a thread of its own: on Swift's shared workers it was seen to
        // take turns with the loop instead of running beside it. Nil (the shared workers) when there is none to run,
        // or no thread to be had.
        let preparationExecutor = initial.pipeline.preparation == nil ? nil : ThreadExecutor(name: "prepare")
        defer { preparationExecutor?.shutdown() }
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
        let (credits, creditContinuation) = AsyncStream.makeStream(of: Void.self)
        let (messageCredits, messageCreditContinuation) = AsyncStream.makeStream(of: Void.self)
        do {
            try await client.withSession { client in
                await withTaskGroup(of: Void.self) { group in
                    startInputs(
                        in: &group, client: client, preparation: preparation, preparationExecutor: preparationExecutor,
                        into: continuation, sourceCredits: credits, messageCredits: messageCredits)
                    await loop.consume(
                        inputs, sourceCredits: creditContinuation, messageCredits: messageCreditContinuation)
                    group.cancelAll()
                    creditContinuation.finish()
                    messageCreditContinuation.finish()
                }
            }
        } catch {
            loop.state.clientStopped(failure: "\(error)")
        }
        return loop.state
    }

    /// Subscribes to what the pipeline asks for; returns why not, at the first subscription refused.
    private static func subscribe(to subscriptions: [Subscription], on client: MQTTClient) -> String? {
        for subscription in subscriptions {
            do {
                // The client subscribes again after every reconnect by itself.
                try client.subscribe(
                    subscription.filter.filter, qos: MQTTQoS(subscription.qos),
                    noLocal: subscription.noLocal)
            } catch {
                return "cannot subscribe to \(subscription.filter.filter): \(error)"
            }
        }
        return nil
    }

    /// Starts the tasks that feed the loop's inputs: the client's messages (prepared on `preparationExecutor`) and
    /// connection events, the ticks, the signals, and the service's source.
    private func startInputs(
        in group: inout TaskGroup<Void>, client: MQTTClient, preparation: Preparation,
        preparationExecutor: ThreadExecutor?, into continuation: AsyncStream<Input>.Continuation,
        sourceCredits credits: AsyncStream<Void>, messageCredits: AsyncStream<Void>
    ) {
        let source = context.source
        let tickInterval = context.tickInterval
        let clock = context.clock
        group.addTask(executorPreference: preparationExecutor) {
            // Take a message off the client's inbox only when the loop is ready for it, so that a bounded inbox
            // holds the client back (every message in it is acknowledged already). The pipeline's preparation (the
            // locator's decoding) runs here, while the loop works on the messages before it; four ahead keep both
            // busy (two left the locator's stream bench a quarter slower).
            var feed = SourceFeed<Input>(credits: messageCredits, limit: 4) { continuation.yield($0) }
            for await message in client.messages {
                let time = ServiceTime(now: clock(), monotonic: WallClock.monotonic())
                let prepared = preparation.current?.prepare(topic: message.topic, payload: message.payload, at: time)
                guard await feed.send(.message(message, prepared)) else { break }
            }
            continuation.yield(.clientSequenceEnded)
        }
        group.addTask {
            for await event in client.events { continuation.yield(.connection(event)) }
            continuation.yield(.clientSequenceEnded)
        }
        group.addTask {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: tickInterval)
                } catch {
                    return
                }
                continuation.yield(.tick)
            }
        }
        group.addTask {
            for await number in SignalWatcher.terminationSignals() { continuation.yield(.signal(number)) }
        }
        group.addTask {
            for await _ in SignalWatcher.hangups() { continuation.yield(.hangup) }
        }
        group.addTask {
            var feed = SourceFeed(credits: credits) { continuation.yield(.source($0)) }
            await source.run(into: &feed)
        }
    }

    /// The pipeline's ``ServicePipeline/preparation``, shared between the loop (which replaces it after a reload) and
    /// the task that receives messages.
    final class Preparation: Sendable {
        private let value: Mutex<MessagePreparation<Pipeline.Prepared>?>

        init(_ preparation: MessagePreparation<Pipeline.Prepared>?) {
            value = Mutex(preparation)
        }

        var current: MessagePreparation<Pipeline.Prepared>? {
            get { value.withLock { $0 } }
            set { value.withLock { $0 = newValue } }
        }
    }

    /// The loop's state, owned by the one task that consumes the inputs.
    private struct Loop {
        var state: ServiceState<Pipeline>
        let context: Context
        let recorder: LineWriter?
        let journal: OutboxJournalFile?
        let notifier = SystemdNotifier()
        var lastWatchdogPing = -Double.infinity
        /// Failed connection attempts since the last connection: only the first is a warning, so a long outage
        /// does not fill the journal.
        var failedAttempts = 0

        /// The pipeline's preparation, as the receiving task reads it.
        let preparation: Preparation

        var time: ServiceTime { ServiceTime(now: context.clock(), monotonic: WallClock.monotonic()) }
        var logger: Logger { context.logger }

        /// Takes the inputs in order until the client's messages and events have both ended, handing out a credit
        /// for each message taken and for each source input once the outbox has room.
        mutating func consume(
            _ inputs: AsyncStream<Input>, sourceCredits: AsyncStream<Void>.Continuation,
            messageCredits: AsyncStream<Void>.Continuation
        ) async {
            var endedSequences = 0
            // Credits for source inputs taken while the outbox had no room: given back once it has, so that a
            // source that can wait (a replay) waits for the broker instead of overflowing the outbox.
            var withheldCredits = 0
            for await input in inputs {
                switch input {
                case .message(let message, let prepared):
                    await receive(message, prepared: prepared)
                    messageCredits.yield()
                case .connection(let event): await connection(event)
                case .source(let sourceInput):
                    await take(sourceInput)
                    withheldCredits += 1
                case .tick: await tick()
                case .signal(let number): await signal(number)
                case .hangup: await hangup()
                case .clientSequenceEnded: endedSequences += 1
                }
                while withheldCredits > 0, state.acceptsInputs {
                    sourceCredits.yield()
                    withheldCredits -= 1
                }
                if endedSequences == 2 { break }
            }
        }

        mutating func receive(_ message: MQTTMessage, prepared: Pipeline.Prepared?) async {
            if let prepared {
                await perform(
                    state.receive(topic: message.topic, payload: message.payload, prepared: prepared, at: time))
            } else {
                await perform(state.receive(topic: message.topic, payload: message.payload, at: time))
            }
        }

        mutating func take(_ input: Pipeline.Input) async {
            await perform(state.take(input, at: time))
        }

        mutating func tick() async {
            let now = time
            await perform(state.tick(at: now))
            if let interval = notifier.watchdogInterval, now.monotonic - lastWatchdogPing >= interval {
                notifier.watchdog()
                lastWatchdogPing = now.monotonic
            }
        }

        mutating func signal(_ number: Int32) async {
            if state.isStopping {
                logger.warning("signal \(number) again: disconnecting now")
            } else {
                logger.info("signal \(number): saying goodbye and disconnecting")
            }
            await perform(state.signal(at: time))
        }

        /// SIGHUP: reopen the recording (logrotate moved it) and reload the settings, keeping the old ones if the
        /// new ones are refused.
        mutating func hangup() async {
            if let recorder {
                do {
                    try recorder.reopen()
                    logger.info("SIGHUP: reopened \(recorder.path)")
                    if recorder.repairedBytes > 0 {
                        logger.warning("\(recorder.path): cut off a torn last line of \(recorder.repairedBytes) bytes")
                    }
                } catch {
                    logger.error("SIGHUP: \(error)")
                }
            }
            guard let reload = context.reload else { return }
            switch reload() {
            case .success(let settings):
                logger.info("SIGHUP: reloaded")
                let before = Set(state.pipeline.subscriptions)
                await perform(state.reload(settings, at: time))
                preparation.current = state.pipeline.preparation
                resubscribe(from: before)
            case .failure(let refusal):
                logger.error("SIGHUP: \(refusal.reason); keeping the settings in force")
                for line in refusal.details { logger.error("  \(line)") }
            }
        }

        /// After a reload, what the pipeline asks for now: a locator split by floor subscribes agent by agent, and
        /// a new map may add or remove agents. The client subscribes again after every reconnect by itself.
        private func resubscribe(from before: Set<Subscription>) {
            let after = Set(state.pipeline.subscriptions)
            let kept = Set(after.map(\.filter))
            for gone in before.subtracting(after) where !kept.contains(gone.filter) {
                do {
                    try context.client.unsubscribe(gone.filter.filter)
                } catch {
                    logger.error("SIGHUP: cannot unsubscribe from \(gone.filter.filter): \(error)")
                }
            }
            for new in after.subtracting(before) {
                do {
                    try context.client.subscribe(
                        new.filter.filter, qos: MQTTQoS(new.qos), noLocal: new.noLocal)
                } catch {
                    logger.error("SIGHUP: cannot subscribe to \(new.filter.filter): \(error)")
                }
            }
        }

        mutating func connection(_ event: MQTTConnectionEvent) async {
            switch event {
            case .connected(let sessionPresent):
                logger.info(
                    "connected to \(context.brokerName) (session \(sessionPresent ? "resumed" : "new")"
                        + (failedAttempts > 0 ? ", after \(failedAttempts) failed attempts)" : ")"))
                failedAttempts = 0
                await perform(state.connected(at: time))
            case .disconnected(let reason):
                state.disconnected()
                journal?.sync()  // what was in flight now waits for the next connection
                if !state.session.isClosing { logger.warning("disconnected: \(reason)") }
            case .connectionFailed(let failure):
                failedAttempts += 1
                logger.log(failedAttempts == 1 ? .warning : .debug, "connection failed: \(failure)")
            case .reconnectScheduled(let attempt, let delay):
                logger.debug(
                    "reconnecting in \(delay) (attempt \(attempt)); \(state.session.outbox.count) messages held")
            case .acknowledged(let messageID, let reason):
                await perform(
                    state.acknowledged(messageID: messageID, success: !reason.isFailure, at: time),
                    pipelineLooked: false)
            case .subscribed(_, let results):
                for result in results where result.isFailure {
                    logger.error("the broker refused a subscription: \(result)")
                }
            case .unsubscribed:
                break
            }
        }

        /// Performs the commands in order, then sends what the session hands out. The recording lines of one input
        /// (one batch) go to the file in one write, so a crash never keeps half of them. `pipelineLooked` is false
        /// for an event the pipeline never saw (an acknowledgement): past a sending deadline, such an event hands
        /// nothing over, because only the pipeline can tell a holder whose lease ran out, whose held messages its
        /// next look discards, from a standby whose own messages may go (under load an acknowledgement used to
        /// come first, and a deposed holder handed its whole backlog over).
        mutating func perform(_ commands: [ServiceState<Pipeline>.Command], pipelineLooked: Bool = true) async {
            var lines = ""
            for command in commands {
                switch command {
                case .effect(let effect): await context.source.perform(effect)
                case .record(let line): lines += line
                default: performNow(command)
                }
            }
            if !lines.isEmpty, let recorder {
                do {
                    try recorder.write(lines)
                } catch {
                    logger.error("\(error)")
                }
            }
            send(pipelineLooked: pipelineLooked)
            persist(pipelineLooked: pipelineLooked)
        }

        /// Appends what the outbox took and released to the journal; synced while the broker is unreachable. When
        /// writing starts or stops failing, the status says `degraded` or `online` again, sent at once.
        private mutating func persist(pipelineLooked: Bool) {
            guard let journal else { return }
            let changes = state.takeOutboxChanges()
            guard
                let report = journal.record(
                    changes, outbox: state.session.outbox, durable: !state.session.isConnected)
            else { return }
            logger.log(report.isFailure ? .error : .info, report.message)
            // A pipeline answers this with log lines at most (the agent counts it).
            for command in state.journalWritable(!report.isFailure, at: time) { performNow(command) }
            send(pipelineLooked: pipelineLooked)
        }

        private mutating func performNow(_ command: ServiceState<Pipeline>.Command) {
            switch command {
            case .disconnect:
                context.client.disconnect()
            case .record:
                break  // gathered by perform(_:), one write per input
            case .log(let level, let line):
                logger.log(Logger.Level(level), line)
            case .effect:
                break  // performed by perform(_:), which can wait
            case .ready:
                notifier.ready()
            case .stopping:
                notifier.stopping()
            }
        }

        /// Hands the client everything the session allows now.
        private mutating func send(pipelineLooked: Bool) {
            // Before anything is handed over: the lease's end, for a locator of a pair, as this input left it. Whether
            // it is still the holder is judged at the time read before the deadline, so that a pause between the two
            // reads cannot turn a holder whose lease ends mid-loop into one with no limit (a standby's own claims go
            // out unlimited: its deadline was already past before this hand-over began).
            let start = WallClock.monotonic()
            let deadline = state.pipeline.sendingDeadline
            if !pipelineLooked, let deadline, start >= deadline { return }
            context.client.limitSending(until: deadline)
            // Handing over as the holder, it stops where the lease ends: a process paused in this loop (or slow to
            // get through it) would otherwise hand the rest over after a standby took over. What is left stays held;
            // the next input's lease check stands the pipeline down, and it discards it.
            let holderUntil = deadline.flatMap { start < $0 ? $0 : nil }
            // libmosquitto queues QoS 0 publications without a bound until it writes them: past a fixed number
            // unwritten, the rest wait in the outbox, where a topic's newer state replaces an unsent one and the byte
            // budget holds. The next input (a tick at the latest) hands them over.
            var quietRoom =
                context.client.unwrittenQoS0Publications.map { ServiceRunner.unwrittenQoS0Limit - $0 } ?? .max
            while let entry = state.nextToSend() {
                if let holderUntil, WallClock.monotonic() >= holderUntil { break }
                if entry.publication.qos == .atMostOnce {
                    if quietRoom <= 0 { break }
                    quietRoom -= 1
                }
                let publication = entry.publication
                let result: BrokerSession.SendResult
                do {
                    let messageID = try context.client.publish(
                        topic: publication.topic.name, payload: Array(publication.payload.utf8),
                        qos: MQTTQoS(publication.qos), retain: publication.retain)
                    result = .accepted(messageID: messageID)
                } catch  where error == .noConnection {
                    result = .noConnection
                } catch {
                    logger.error("cannot publish on \(publication.topic.name): \(error)")
                    result = .refused
                }
                for command in state.sent(id: entry.id, result: result, at: time) { performNow(command) }
            }
        }
    }
}

extension Logger.Level {
    /// The logger's level for a pipeline's log level.
    init(_ level: LogLevel) {
        switch level {
        case .debug: self = .debug
        case .info: self = .info
        case .warning: self = .warning
        case .error: self = .error
        }
    }
}

/// Why new settings were refused on SIGHUP: a line for the log and the details (a map's problems, one a line).
public struct ReloadRefusal: Error, Sendable {
    /// What was refused, and why, in one line.
    public var reason: String
    /// The problems, one a line.
    public var details: [String]

    public init(_ reason: String, details: [String] = []) {
        self.reason = reason
        self.details = details
    }
}
