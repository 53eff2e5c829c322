public import WhereaboutsWire

/// A service's logic between its inputs and the broker, as a state machine that returns actions.
///
/// The locator and the agent are both one of these. ``ServiceState`` puts a pipeline together with its
/// ``BrokerSession``; a shell (the runner in `WhereaboutsRuntime`) feeds them and performs the actions. No I/O
/// happens in a pipeline, so tests drive it directly.
public protocol ServicePipeline: Sendable {
    /// What the service hears besides the broker (the agent: radio events); `Never` for none.
    associatedtype Input: Sendable = Never
    /// What the service asks of its source (the agent: restart the scan); `Never` for none.
    associatedtype Effect: Sendable & Hashable = Never
    /// What SIGHUP brings: new settings read by the shell (the locator: the map, validated); `Never` for none.
    associatedtype Reload: Sendable = Never
    /// What a message becomes off the service's loop before it reaches the pipeline (the locator: a readings batch
    /// decoded); `Never` for none.
    associatedtype Prepared: Sendable = Never

    /// How the session behaves: the status topic and the outbox policy.
    var session: BrokerSession.Configuration { get }
    /// What to subscribe to on every connection.
    var subscriptions: [Subscription] { get }

    /// Every (re)connection: the retained state to publish again.
    mutating func connected(at time: ServiceTime) -> [ServiceAction<Effect>]
    /// The connection dropped (the session keeps what is unsent for the next connection).
    mutating func disconnected()
    /// The broker acknowledged a message, and the session is about to hand the client what it held back for room: the
    /// pipeline's last word before that (the locator: a lease past its validity stands down and discards it). Every
    /// other input that sends goes through the pipeline first anyway.
    mutating func acknowledging(at time: ServiceTime) -> [ServiceAction<Effect>]
    /// One message from the broker.
    mutating func receive(topic: String, payload: [UInt8], at time: ServiceTime) -> [ServiceAction<Effect>]
    /// The work to do on a message before the loop takes it, or nil for none. The shell runs it on the task that
    /// receives messages, so that it overlaps the loop's own work; it may see a message the loop has not yet caught
    /// up with, so it must depend on nothing a later input changes, or say in what it returns what it was made with
    /// (the locator's carries its map's generation). Read again after every reload.
    var preparation: MessagePreparation<Prepared>? { get }
    /// One message from the broker, with what ``preparation`` made of it: the same outcome as
    /// ``receive(topic:payload:at:)`` for the same message.
    mutating func receive(
        topic: String, payload: [UInt8], prepared: Prepared, at time: ServiceTime
    ) -> [ServiceAction<Effect>]
    /// The shell's outbox journal stopped (`writable` false) or started again being written; the session's status
    /// already says so (``ServiceState/journalWritable(_:at:)``).
    mutating func journalWritable(_ writable: Bool, at time: ServiceTime) -> [ServiceAction<Effect>]
    /// One input from the service's own source.
    mutating func take(_ input: Input, at time: ServiceTime) -> [ServiceAction<Effect>]
    /// The periodic tick (a few times a second); `outbox` is the session's, to report on.
    mutating func tick(at time: ServiceTime, outbox: Outbox) -> [ServiceAction<Effect>]
    /// The last words before the goodbye, when the service stops.
    mutating func stop(at time: ServiceTime) -> [ServiceAction<Effect>]
    /// SIGHUP brought new settings, read and checked by the shell.
    mutating func reload(_ reload: Reload, at time: ServiceTime) -> [ServiceAction<Effect>]
    /// For a service that may publish only while it holds a lease: the monotonic time until which what it hands the
    /// client may still reach the broker; past it, the client writes nothing it was handed before and re-sends
    /// nothing after a reconnect (`MQTTClient.limitSending(until:)`). Nil: no limit. The shell reads it before
    /// every hand-over.
    var sendingDeadline: Double? { get }
}

extension ServicePipeline {
    /// Most services need not know: the session holds their publications until the reconnect.
    public mutating func disconnected() {}

    /// Most services have nothing to say: what they published goes.
    public mutating func acknowledging(at time: ServiceTime) -> [ServiceAction<Effect>] { [] }

    /// Most services publish whenever they are connected.
    public var sendingDeadline: Double? { nil }

    /// Most services keep no journal.
    public mutating func journalWritable(_ writable: Bool, at time: ServiceTime) -> [ServiceAction<Effect>] { [] }
}

extension ServicePipeline where Prepared == Never {
    public var preparation: MessagePreparation<Never>? { nil }

    public mutating func receive(
        topic: String, payload: [UInt8], prepared: Never, at time: ServiceTime
    ) -> [ServiceAction<Effect>] {}
}

/// Work on a received message that needs none of its pipeline's changing state (``ServicePipeline/preparation``):
/// nil when the message is not one it prepares.
public struct MessagePreparation<Prepared: Sendable>: Sendable {
    private let body: @Sendable (_ topic: String, _ payload: [UInt8], _ time: ServiceTime) -> Prepared?

    public init(_ body: @escaping @Sendable (_ topic: String, _ payload: [UInt8], _ time: ServiceTime) -> Prepared?) {
        self.body = body
    }

    /// What the message becomes, or nil to hand it to the pipeline as it is.
    public func prepare(topic: String, payload: [UInt8], at time: ServiceTime) -> Prepared? {
        body(topic, payload, time)
    }
}

extension ServicePipeline where Input == Never {
    public mutating func take(_ input: Never, at time: ServiceTime) -> [ServiceAction<Effect>] {}
}

extension ServicePipeline where Reload == Never {
    public mutating func reload(_ reload: Never, at time: ServiceTime) -> [ServiceAction<Effect>] {}
}

/// A subscription a service makes on every connection.
public struct Subscription: Sendable, Hashable {
    /// The topic filter.
    public var filter: TopicFilter
    /// MQTT quality of service.
    public var qos: QoS
    /// Whether the service's own publications on the filter are kept from it (it reads back only others' and the
    /// retained ones).
    public var noLocal: Bool

    public init(filter: TopicFilter, qos: QoS, noLocal: Bool = false) {
        self.filter = filter
        self.qos = qos
        self.noLocal = noLocal
    }
}

/// The two clocks a service reads, in seconds.
public struct ServiceTime: Sendable, Hashable {
    /// The service's clock, Unix seconds (scaled in a simulation): what readings and outputs are stamped with.
    public var now: Double
    /// A clock that never jumps, for intervals and deadlines.
    public var monotonic: Double

    public init(now: Double, monotonic: Double) {
        self.now = now
        self.monotonic = monotonic
    }
}

/// How much a log line matters.
public enum LogLevel: Int, Sendable, Hashable, Comparable {
    case debug, info, warning, error

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Something a pipeline asks its shell to do.
public enum ServiceAction<Effect: Sendable & Hashable>: Sendable, Hashable {
    /// Publish a message (through the session's outbox).
    case publish(Publication)
    /// Append a line to the recording.
    case record(String)
    /// Log a line.
    case log(LogLevel, String)
    /// Act on the service's source.
    case effect(Effect)
    /// Stop the service: say goodbye and exit, with a failure when `failure` is set.
    case stop(failure: String?)
    /// Forget every publication the session still holds unsent (a locator that lost its lease must not let
    /// what it said before go out after the reconnect).
    case discardHeld
}
