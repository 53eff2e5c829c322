public import WhereaboutsCore
public import WhereaboutsSession
import WhereaboutsWire

/// The locator as a service: its pipeline, and when to run the engine.
///
/// Messages are answered at once when the engine has not run within ``updateInterval`` (monotonic seconds), so a
/// lone batch is not kept waiting for the ticker; a burst is coalesced into one update per interval; and the engine
/// runs at least once a second of the service clock, so zones time out while nothing arrives.
public struct LocatorService: ServicePipeline {
    /// The most received batches the locator holds before the MQTT client stops reading. Each was acknowledged to the
    /// broker on arrival, so a `kill -9` loses at most these, the one libmosquitto holds in its callback and the two
    /// the runner has taken: 35 batches.
    public static let inboxLimit = 32

    /// The locator's logic.
    public private(set) var pipeline: LocatorPipeline
    /// The shortest real time between two engine updates while messages stream in, seconds.
    public let updateInterval: Double
    /// The session's settings: the locator's status topic, an outbox that holds outputs only while disconnected.
    public let session: BrokerSession.Configuration

    private var pendingSinceUpdate = false
    private var lastUpdate = -Double.infinity
    private var lastRealUpdate = -Double.infinity

    /// A service around `pipeline`; `outboxCapacity` bounds the events and metrics held while the broker is away.
    public init(pipeline: LocatorPipeline, updateInterval: Double = 0.02, outboxCapacity: Int = 10_000) {
        self.pipeline = pipeline
        self.updateInterval = max(updateInterval, 0)
        session = BrokerSession.Configuration(
            statusTopic: pipeline.statusTopic, outbox: .untilHandedOver(capacity: outboxCapacity),
            drainTimeout: 2, goodbyeTimeout: 2)
    }

    public var subscriptions: [Subscription] {
        pipeline.subscriptions
    }

    public mutating func connected(at time: ServiceTime) -> [ServiceAction<Never>] {
        Self.actions(pipeline.connected(now: time.now))
    }

    public mutating func receive(topic: String, payload: [UInt8], at time: ServiceTime) -> [ServiceAction<Never>] {
        var actions = Self.actions(pipeline.receive(topic: topic, payload: payload, now: time.now))
        pendingSinceUpdate = true
        if time.monotonic - lastRealUpdate >= updateInterval {
            actions += update(at: time)
        }
        return actions
    }

    public mutating func tick(at time: ServiceTime, outbox: Outbox) -> [ServiceAction<Never>] {
        guard pendingSinceUpdate || time.now - lastUpdate >= 1 else { return [] }
        return update(at: time)
    }

    /// SIGHUP brought a new map, read and validated by the shell.
    public mutating func reload(_ map: FloorMap, at time: ServiceTime) -> [ServiceAction<Never>] {
        Self.actions(pipeline.replaceMap(map, now: time.now))
    }

    public mutating func stop(at time: ServiceTime) -> [ServiceAction<Never>] {
        update(at: time) + Self.actions(pipeline.shutdown(now: time.now))
    }

    private mutating func update(at time: ServiceTime) -> [ServiceAction<Never>] {
        pendingSinceUpdate = false
        lastUpdate = time.now
        lastRealUpdate = time.monotonic
        return Self.actions(pipeline.tick(now: time.now))
    }

    private static func actions(_ actions: [LocatorAction]) -> [ServiceAction<Never>] {
        actions.map { action in
            switch action {
            case .publish(let publication): .publish(publication)
            case .record(let line): .record(line)
            case .log(let line): .log(.warning, line)
            }
        }
    }
}
