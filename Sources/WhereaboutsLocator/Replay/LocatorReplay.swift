public import WhereaboutsCore
public import WhereaboutsSession
public import WhereaboutsWire

/// Runs a readings recording through ``LocatorPipeline``, as fast as the CPU allows, and keeps what it publishes.
///
/// The pipeline is the live locator's, whole: calibration, the publish policy and the rest. Readings go in in time
/// order through ``LocatorPipeline/receive(_:now:)``, which ingests them as the live path ingests a decoded batch's.
/// Every `interval` seconds of recording time the pipeline ticks, as the live locator's timer would make it: a
/// tick at time `T` sees every reading stamped up to and including `T`. The position and event publications become
/// recording lines through ``Output/collect(_:topics:)``, so the same recording always gives the same output.
public struct LocatorReplay: Sendable {
    /// What one stretch of replay produced.
    public struct Output: Sendable, Equatable {
        /// Positions, in tick order, tags in the pipeline's order within a tick.
        public var positions: [PositionRecord] = []
        /// Zone events, in time order.
        public var events: [ZoneEvent] = []

        public init() {}

        /// Appends what `actions` publish on the position and event topics, as recording lines (times, coordinates
        /// and accuracies to the millisecond and millimetre); everything else is left out.
        ///
        /// The one conversion from the pipeline's output to positions and events files, for the live pipeline's
        /// actions as for a replay's. A retained position cleared (an empty payload: the tag was lost) writes no
        /// line.
        public mutating func collect<Effect>(_ actions: [ServiceAction<Effect>], topics: Topics) {
            for case .publish(let publication) in actions where !publication.payload.isEmpty {
                if publication.topic == topics.events {
                    guard let event = try? ZoneEvent(payload: publication.payload) else { continue }
                    events.append(
                        ZoneEvent(
                            time: event.time.rounded(toDecimals: 3), tag: event.tag, floor: event.floor,
                            zone: event.zone, kind: event.kind))
                } else if let position = try? TagPosition(payload: publication.payload),
                    publication.topic == topics.position(tag: position.tag)
                {
                    positions.append(
                        PositionRecord(
                            time: position.updated.rounded(toDecimals: 3),
                            tag: position.tag,
                            x: position.x.rounded(toDecimals: 3),
                            y: position.y.rounded(toDecimals: 3),
                            floor: position.floor,
                            zone: position.zone,
                            accuracy: position.accuracy.rounded(toDecimals: 3),
                            probability: position.probability,
                            zones: position.zones
                        ))
                }
            }
        }

        mutating func append(_ other: Output) {
            positions += other.positions
            events += other.events
        }
    }

    /// The pipeline configuration a replay uses unless told otherwise: the live defaults, except two.
    ///
    /// - Agents never time out, because a readings file carries no heartbeats.
    /// - Every estimate is published (``LocatorPipeline/Configuration/positionMinimumMove`` 0): a positions file
    ///   holds one line per tag per tick that had news of it, because scoring against truth needs a sample per
    ///   tick. The live policy holds back the positions of tags standing still (their retained position stands),
    ///   so scoring its publications alone would weigh moving tags more.
    public static var defaultConfiguration: LocatorPipeline.Configuration {
        var configuration = LocatorPipeline.Configuration()
        configuration.engine.agentsTimeOut = false
        configuration.positionMinimumMove = 0
        return configuration
    }

    private var pipeline: LocatorPipeline
    private let interval: Double
    private var origin: Double?
    private var nextUpdate = 0
    private var lastUpdateTime = -Double.infinity
    private var idleUpdates = 0
    /// Ticks run so far.
    public private(set) var updates = 0

    /// Makes a replay.
    ///
    /// - Parameter interval: seconds of recording time between ticks; clamped to 0.01…3600.
    public init(
        map: FloorMap, interval: Double = 1, configuration: LocatorPipeline.Configuration = defaultConfiguration
    ) {
        pipeline = LocatorPipeline(map: map, configuration: configuration)
        self.interval = interval.isFinite ? min(max(interval, 0.01), 3600) : 1
    }

    /// What happened to the readings so far: taken, refused by reason, agents' beacons.
    public var counters: LocatorPipeline.Counters { pipeline.counters }

    /// A tag's grid posterior after the ticks run so far (``LocatorEngine/posterior(of:)``).
    public func posterior(of tag: TagIdentity) -> TagPosterior? {
        pipeline.posterior(of: tag)
    }

    /// Takes the next reading, after running every tick due before it.
    public mutating func take(_ reading: RecordedReading) -> Output {
        var output = Output()
        guard reading.time.isFinite else {
            // Refused and counted by the pipeline, as a live reading with a non-finite value is.
            _ = pipeline.receive(reading, now: reading.time)
            return output
        }
        if origin == nil {
            // Ticks fall on whole multiples of the interval, as a live timer's would.
            origin = (reading.time / interval).rounded(.up) * interval
        }
        // Long silences: run enough ticks for tags to time out, then jump to the reading.
        let model = pipeline.map.model
        let idleLimit = Int((2 * max(model.tagTimeout, model.readingMaxAge)) / interval) + 2
        while reading.time > updateTime(nextUpdate) {
            if idleUpdates >= idleLimit {
                let target = Int(((reading.time - (origin ?? 0)) / interval).rounded(.up))
                nextUpdate = max(nextUpdate, target)
                if reading.time > updateTime(nextUpdate) { nextUpdate += 1 }
                break
            }
            output.append(runUpdate())
        }
        let before = pipeline.counters.accepted
        _ = pipeline.receive(reading, now: max(reading.time, lastUpdateTime))
        if pipeline.counters.accepted > before { idleUpdates = 0 }
        return output
    }

    /// Runs the tick due after the last reading.
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
        updates += 1
        var output = Output()
        output.collect(pipeline.tick(now: now), topics: pipeline.topics)
        return output
    }

    /// Replays a whole recording: sorts the readings by time (keeping file order among equal times), takes them
    /// all, and runs the last tick. Readings without a finite time are refused and counted first.
    public static func run(
        map: FloorMap,
        readings: [RecordedReading],
        interval: Double = 1,
        configuration: LocatorPipeline.Configuration = defaultConfiguration
    ) -> (output: Output, replay: LocatorReplay) {
        var replay = LocatorReplay(map: map, interval: interval, configuration: configuration)
        for reading in readings where !reading.time.isFinite { _ = replay.take(reading) }
        let ordered = readings.enumerated().filter { $0.element.time.isFinite }.sorted {
            ($0.element.time, $0.offset) < ($1.element.time, $1.offset)
        }
        var output = Output()
        for (_, reading) in ordered { output.append(replay.take(reading)) }
        output.append(replay.finish())
        return (output, replay)
    }
}
