public import WhereaboutsWire

/// A service's whole state: its pipeline and its broker session, and the rules that tie them together.
///
/// The runner feeds it what happens (messages, connection events, ticks, signals, source inputs, the results of
/// publishing) and performs the ``Command``s it returns; between two inputs the runner sends whatever
/// ``nextToSend()`` hands out. Everything here is pure, so the lifecycle is tested without a broker.
public struct ServiceState<Pipeline: ServicePipeline>: Sendable {
    /// What the runner does for the service.
    public enum Command: Sendable, Hashable {
        /// Send DISCONNECT and stop the client: the service is done.
        case disconnect
        /// Append a line to the recording.
        case record(String)
        /// Log a line.
        case log(LogLevel, String)
        /// Act on the source.
        case effect(Pipeline.Effect)
        /// Tell systemd the service is ready (the first connection).
        case ready
        /// Tell systemd the service is stopping.
        case stopping
    }

    /// The service's logic.
    public private(set) var pipeline: Pipeline
    /// The broker session.
    public private(set) var session: BrokerSession
    /// Why the service will exit with a failure, if it will.
    public private(set) var failure: String?
    /// Whether a stop was asked for (a signal, or the pipeline itself).
    public private(set) var isStopping = false
    private var refusalsSinceLog = 0
    private var lastRefusalLog = -Double.infinity
    /// The outbox's drops over its byte budget as of the last report, and when that was.
    private var shedReported = 0
    private var lastShedReport = -Double.infinity

    /// A service that has not connected yet.
    public init(pipeline: Pipeline) {
        self.pipeline = pipeline
        session = BrokerSession(configuration: pipeline.session)
    }

    // MARK: - Inputs

    /// Publications a previous run left unacknowledged (read back from its journal): queued before anything this
    /// run publishes, in their order, unchanged, so that the other side takes each once by its own numbering.
    public mutating func restore(_ publications: [Publication]) {
        for publication in publications { session.publish(publication) }
    }

    /// What the outbox took and released since the last call, for the shell's journal.
    public mutating func takeOutboxChanges() -> [Outbox.Change] {
        session.takeOutboxChanges()
    }

    /// The broker accepted a connection.
    public mutating func connected(at time: ServiceTime) -> [Command] {
        var commands = translate(session.connected(), at: time)
        if !isStopping { commands += perform(pipeline.connected(at: time), at: time) }
        return commands
    }

    /// Whether the shell's outbox journal can be written: a service that cannot keep what it holds on disk runs on
    /// from memory and says `degraded` on its status topic until it can again. The pipeline hears of it too (the
    /// agent counts it).
    public mutating func journalWritable(_ writable: Bool, at time: ServiceTime) -> [Command] {
        let degraded = !writable
        guard degraded != session.isDegraded else { return [] }
        session.setDegraded(degraded)
        return perform(pipeline.journalWritable(writable, at: time), at: time)
    }

    /// The connection dropped.
    public mutating func disconnected() {
        session.disconnected()
        pipeline.disconnected()
    }

    /// A message from the broker.
    public mutating func receive(topic: String, payload: [UInt8], at time: ServiceTime) -> [Command] {
        perform(pipeline.receive(topic: topic, payload: payload, at: time), at: time)
    }

    /// A message from the broker, with what the pipeline's ``ServicePipeline/preparation`` made of it.
    public mutating func receive(
        topic: String, payload: [UInt8], prepared: Pipeline.Prepared, at time: ServiceTime
    ) -> [Command] {
        perform(pipeline.receive(topic: topic, payload: payload, prepared: prepared, at: time), at: time)
    }

    /// An input from the source.
    public mutating func take(_ input: Pipeline.Input, at time: ServiceTime) -> [Command] {
        perform(pipeline.take(input, at: time), at: time)
    }

    /// The periodic tick.
    public mutating func tick(at time: ServiceTime) -> [Command] {
        var commands = perform(pipeline.tick(at: time, outbox: session.outbox), at: time)
        commands += translate(session.tick(now: time.monotonic), at: time)
        return commands + sheddingReport(at: time)
    }

    /// Says that the outbox dropped publications over its byte budget: the first time, then at most once a minute
    /// with how many since the last report (a flood of new tag ids sheds thousands a second).
    private mutating func sheddingReport(at time: ServiceTime) -> [Command] {
        let shed = session.outbox.statistics.shed
        guard shed > shedReported, time.monotonic - lastShedReport >= 60 else { return [] }
        let line =
            "outbox over its budget of \(session.outbox.byteLimit ?? 0) bytes: dropped \(shed - shedReported) unsent "
            + "publications (states of tags the map does not name first) since the last report, \(shed) in all"
        shedReported = shed
        lastShedReport = time.monotonic
        return [.log(.warning, line)]
    }

    /// SIGHUP brought new settings.
    public mutating func reload(_ reload: Pipeline.Reload, at time: ServiceTime) -> [Command] {
        guard !isStopping else { return [] }
        return perform(pipeline.reload(reload, at: time), at: time)
    }

    /// SIGINT or SIGTERM: the first stops in order, a second stops at once.
    public mutating func signal(at time: ServiceTime) -> [Command] {
        guard isStopping else { return stop(failure: nil, at: time) }
        return translate(session.stop(now: time.monotonic), at: time)
    }

    /// The client's answer to publishing the entry `id`.
    public mutating func sent(id: Int, result: BrokerSession.SendResult, at time: ServiceTime) -> [Command] {
        translate(session.sent(id: id, result: result, now: time.monotonic), at: time)
    }

    /// The broker acknowledged message `messageID`.
    public mutating func acknowledged(messageID: Int, success: Bool, at time: ServiceTime) -> [Command] {
        // The pipeline first: an acknowledgement makes room, and the shell then sends what the outbox held back.
        var commands = perform(pipeline.acknowledging(at: time), at: time)
        commands += translate(
            session.acknowledged(messageID: messageID, success: success, now: time.monotonic), at: time)
        return commands
    }

    /// The MQTT client stopped for good, with its failure if it failed.
    public mutating func clientStopped(failure clientFailure: String?) {
        if let clientFailure, failure == nil { failure = "MQTT client stopped: \(clientFailure)" }
    }

    /// Whether the shell may hand the pipeline another input from its source. False while an outbox with
    /// ``Outbox/Overflow/backPressure`` is full: the source waits until acknowledgements make room, so nothing is
    /// dropped. Always true once stopping (the pipeline ignores what still comes, and the source must not hang).
    public var acceptsInputs: Bool { isStopping || session.outbox.hasRoom }

    /// The next publication to hand to the client.
    public func nextToSend() -> Outbox.Entry? {
        session.nextToSend()
    }

    // MARK: - Actions

    private mutating func stop(failure stopFailure: String?, at time: ServiceTime) -> [Command] {
        guard !isStopping else { return [] }
        isStopping = true
        if let stopFailure, failure == nil { failure = stopFailure }
        var commands: [Command] = [.stopping]
        commands += perform(pipeline.stop(at: time), at: time)
        commands += translate(session.stop(now: time.monotonic), at: time)
        return commands
    }

    private mutating func perform(_ actions: [ServiceAction<Pipeline.Effect>], at time: ServiceTime) -> [Command] {
        var commands: [Command] = []
        for action in actions {
            switch action {
            case .publish(let publication): session.publish(publication)
            case .record(let line): commands.append(.record(line))
            case .log(let level, let line): commands.append(.log(level, line))
            case .effect(let effect): commands.append(.effect(effect))
            case .stop(let stopFailure): commands += stop(failure: stopFailure, at: time)
            case .discardHeld:
                let count = session.discardHeld()
                if count > 0 { commands.append(.log(.info, "discarded \(count) held publications")) }
            }
        }
        return commands
    }

    /// The session's commands as the runner's. Refusals are logged the first time, then at most once a minute with
    /// how many followed: a broker that refuses every batch must not fill the journal once a second.
    private mutating func translate(_ commands: [BrokerSession.Command], at time: ServiceTime) -> [Command] {
        var translated: [Command] = []
        for command in commands {
            switch command {
            case .disconnect: translated.append(.disconnect)
            case .ready: translated.append(.ready)
            case .refused(let publication):
                refusalsSinceLog += 1
                if time.monotonic - lastRefusalLog >= 60 {
                    let more = refusalsSinceLog > 1 ? " (\(refusalsSinceLog) refused since the last report)" : ""
                    translated.append(
                        .log(.warning, "the broker refused a message on \(publication.topic.name)\(more)"))
                    refusalsSinceLog = 0
                    lastRefusalLog = time.monotonic
                }
            case .unsendable(let publication):
                translated.append(.log(.error, "cannot publish on \(publication.topic.name): dropped"))
            case .abandoned(let count):
                translated.append(.log(.warning, "\(count) messages still unacknowledged at exit"))
            }
        }
        return translated
    }
}
