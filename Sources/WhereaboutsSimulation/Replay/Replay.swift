public import WhereaboutsCore
public import WhereaboutsWire

/// Runs the locator engine over recorded readings, as fast as the CPU allows, and collects what it publishes.
///
/// Readings go in in time order. Every `interval` seconds of recording time the engine updates, exactly as the
/// live locator's timer would make it: an update at time `T` sees every reading stamped up to and including `T`.
/// Each tag's estimate becomes a ``PositionRecord`` and each zone change a zone event, so the same recording always
/// gives the same output.
public struct Replay: Sendable {
    /// What one stretch of replay produced.
    public struct Output: Sendable, Equatable {
        /// Positions, in update order, tags in the engine's order within an update.
        public var positions: [PositionRecord] = []
        /// Zone events, in time order.
        public var events: [WhereaboutsWire.ZoneEvent] = []

        public init() {}

        mutating func append(_ other: Output) {
            positions += other.positions
            events += other.events
        }
    }

    /// What happened to the readings.
    public struct Statistics: Sendable, Equatable {
        /// Readings the engine took.
        public var taken = 0
        /// Readings from agents the map does not have.
        public var unknownAgents = 0
        /// Readings the engine refused, by reason.
        public var rejected: [ReadingRejection: Int] = [:]
        /// Engine updates run.
        public var updates = 0

        public init() {}
    }

    /// The engine configuration a replay uses unless told otherwise: agents never time out, because a readings
    /// file carries no heartbeats.
    public static var defaultConfiguration: LocatorEngine.Configuration {
        var configuration = LocatorEngine.Configuration()
        configuration.agentsTimeOut = false
        return configuration
    }

    private var engine: LocatorEngine
    private let interval: Double
    private var origin: Double?
    private var nextUpdate = 0
    private var lastUpdateTime = -Double.infinity
    private var idleUpdates = 0
    /// What happened to the readings so far.
    public private(set) var statistics = Statistics()

    /// Makes a replay.
    ///
    /// - Parameter interval: seconds of recording time between engine updates; clamped to 0.01…3600.
    public init(map: FloorMap, interval: Double = 1, configuration: LocatorEngine.Configuration = defaultConfiguration)
    {
        engine = LocatorEngine(map: map, configuration: configuration)
        self.interval = interval.isFinite ? min(max(interval, 0.01), 3600) : 1
    }

    /// Takes the next reading, after running every update due before it.
    public mutating func take(_ reading: RecordedReading) -> Output {
        var output = Output()
        guard reading.time.isFinite else {
            statistics.rejected[.invalidValue, default: 0] += 1
            return output
        }
        if origin == nil {
            // Updates fall on whole multiples of the interval, as a live timer's would.
            origin = (reading.time / interval).rounded(.up) * interval
        }
        // Long silences: run enough updates for tags to time out, then jump to the reading.
        let idleLimit = Int((2 * max(engine.map.model.tagTimeout, engine.map.model.readingMaxAge)) / interval) + 2
        while reading.time > updateTime(nextUpdate) {
            if idleUpdates >= idleLimit {
                let target = Int(((reading.time - (origin ?? 0)) / interval).rounded(.up))
                nextUpdate = max(nextUpdate, target)
                if reading.time > updateTime(nextUpdate) { nextUpdate += 1 }
                break
            }
            output.append(runUpdate())
        }
        guard let agentIndex = engine.map.agentIndex(of: reading.agent.rawValue) else {
            statistics.unknownAgents += 1
            return output
        }
        let engineReading = Reading(
            tag: reading.tag,
            time: reading.time,
            rssi: reading.rssi,
            count: reading.count,
            variance: reading.variance,
            measuredPower: reading.power.map(Double.init)
        )
        if let rejection = engine.ingest(engineReading, agentIndex: agentIndex, now: max(reading.time, lastUpdateTime))
        {
            statistics.rejected[rejection, default: 0] += 1
        } else {
            statistics.taken += 1
            idleUpdates = 0
        }
        return output
    }

    /// Runs the update due after the last reading.
    public mutating func finish() -> Output {
        guard origin != nil, lastUpdateTime < updateTime(nextUpdate) else { return Output() }
        return runUpdate()
    }

    private func updateTime(_ index: Int) -> Double { (origin ?? 0) + Double(index) * interval }

    private mutating func runUpdate() -> Output {
        let now = updateTime(nextUpdate)
        nextUpdate += 1
        idleUpdates += 1
        lastUpdateTime = now
        statistics.updates += 1
        let update = engine.update(now: now)
        var output = Output()
        let stamp = now.rounded(toDecimals: 3)
        for estimate in update.estimates {
            output.positions.append(
                PositionRecord(
                    time: stamp,
                    tag: estimate.tag,
                    x: estimate.position.x.rounded(toDecimals: 3),
                    y: estimate.position.y.rounded(toDecimals: 3),
                    floor: estimate.floor,
                    zone: estimate.zone?.minor,
                    accuracy: estimate.accuracy.rounded(toDecimals: 3)
                )
            )
        }
        for event in update.events {
            output.events.append(
                WhereaboutsWire.ZoneEvent(
                    time: event.time.rounded(toDecimals: 3),
                    tag: event.tag,
                    floor: event.zone.floor,
                    zone: event.zone.minor,
                    kind: event.kind == .enter ? .enter : .exit
                )
            )
        }
        return output
    }

    /// Replays a whole recording: sorts the readings by time (keeping file order among equal times), takes them
    /// all, and runs the last update.
    public static func run(
        map: FloorMap,
        readings: [RecordedReading],
        interval: Double = 1,
        configuration: LocatorEngine.Configuration = defaultConfiguration
    ) -> (output: Output, statistics: Statistics) {
        var replay = Replay(map: map, interval: interval, configuration: configuration)
        let ordered = readings.enumerated().filter { $0.element.time.isFinite }.sorted {
            ($0.element.time, $0.offset) < ($1.element.time, $1.offset)
        }
        var output = Output()
        for (_, reading) in ordered { output.append(replay.take(reading)) }
        output.append(replay.finish())
        return (output, replay.statistics)
    }
}
