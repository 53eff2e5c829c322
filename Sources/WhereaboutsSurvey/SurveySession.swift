public import WhereaboutsCore
public import WhereaboutsJSON
import WhereaboutsMapFile
public import WhereaboutsWire

/// A survey as it is made: the survey tag's readings in, the operator's actions in (stand at a reference point,
/// walk a route), the truth and readings to append to the survey's files out, and its progress on demand.
///
/// Pure: time comes in as `now:` (the recorder's clock, on the readings' time scale); nothing is written here. The
/// truth follows docs/calibration.md: a reference point gets a line when the operator arrives and one when the dwell
/// (30 s by default) ends, which hold the truth between them (``TruthTrack``); a new point (or ``finish(now:)``)
/// before the dwell ends closes the current one early, with its own line. A walk along a route gets a line every
/// ``Configuration/walkInterval`` seconds and at each corner, at the walking speed given, as time passes.
///
/// Only the survey tag's readings are kept; other tags' are ignored, and readings that fail the wire's checks (a
/// bad tag id, a value that is not finite or out of range) are dropped and counted (``drops``).
public struct SurveySession: Sendable {
    /// How the session writes truth.
    public struct Configuration: Sendable, Hashable {
        /// Seconds a reference point is held (docs/calibration.md: 30 s, the body turned once around).
        public var dwell: Double = 30
        /// Seconds between truth lines of a walk.
        public var walkInterval: Double = 1
        /// Seconds of readings per calibration sample (`calibrate --window`): the progress counts samples as the
        /// calibration will.
        public var window: Double = 1

        public init() {}
    }

    /// The map document (the calibration reads it as `calibrate` does).
    public let document: JSONValue
    /// The map.
    public let map: FloorMap
    /// The settings.
    public let configuration: Configuration
    /// The survey tag, once started.
    public private(set) var tag: TagIdentity?
    /// Every reading of the survey tag kept so far, in arrival order.
    public private(set) var readings: [RecordedReading] = []
    /// Every truth line written so far, in the order written.
    public private(set) var truth: [TruthRecord] = []
    /// Readings not kept, by why.
    public private(set) var drops = SurveyDrops()
    /// What the operator is doing.
    var activity = Activity.idle
    /// The last reference point or walk, once finished (for the progress ring).
    var finished: Activity?
    /// Points and walks so far.
    public private(set) var places = 0
    var deduplicator = BatchDeduplicator()
    let decoder = BatchDecoder()
    let topics: Topics
    var areasCache: (key: SIMD2<Int>, areas: SurveyAreaCounts)?

    /// A session on a map document (parsed JSON, as ``MapDocument/parse(_:)`` gives it).
    ///
    /// - Throws: ``SurveyError/invalidMap(_:)`` when the document is not a valid map.
    public init(document: JSONValue, configuration: Configuration = Configuration()) throws(SurveyError) {
        switch FloorMap.load(document) {
        case .success(let map): self.map = map
        case .failure(let problems): throw .invalidMap(problems.problems.map(\.description))
        }
        guard configuration.dwell > 0, configuration.dwell.isFinite, configuration.walkInterval > 0,
            configuration.walkInterval <= 5, configuration.window > 0
        else { throw .invalidSetting("dwell and window above 0 s, walk interval within 0…5 s") }
        self.document = document
        self.configuration = configuration
        topics = Topics(site: map.site.uuid)
    }

    // MARK: - The operator's actions

    /// Starts (or restarts with another tag) the survey; a point or walk under way is closed first.
    public mutating func start(tag: TagIdentity, now: Double) -> SurveyRecords {
        let records = close(now: now)
        self.tag = tag
        return records
    }

    /// The operator stands at a reference point: a truth line now, and one when the dwell ends (``tick(now:)``).
    /// A point or walk under way is closed first, at `now`.
    public mutating func standAt(floor: UInt16, x: Double, y: Double, now: Double) throws(SurveyError)
        -> SurveyRecords
    {
        guard let tag else { throw .notStarted }
        let point = Point(x: x, y: y)
        try check(point, floor: floor)
        guard now.isFinite else { throw .invalidSetting("time is not finite") }
        var records = close(now: now)
        let line = truthLine(tag: tag, point: point, floor: floor, time: now)
        records.truth.append(line)
        activity = .standing(ReferencePoint(floor: floor, point: point, arrival: now, dwell: configuration.dwell))
        places += 1
        return records
    }

    /// The operator walks `route` on `floor` at `speed` m/s, starting now at its first point: truth along it as
    /// time passes (``tick(now:)``). A point or walk under way is closed first.
    public mutating func walk(floor: UInt16, route: [Point], speed: Double = 1, now: Double) throws(SurveyError)
        -> SurveyRecords
    {
        guard tag != nil else { throw .notStarted }
        guard route.count >= 2 else { throw .badRoute("a route needs two points or more") }
        guard speed >= 0.2, speed <= 3 else { throw .badRoute("walking speed must be 0.2…3 m/s") }
        for point in route { try check(point, floor: floor) }
        guard now.isFinite else { throw .invalidSetting("time is not finite") }
        var records = close(now: now)
        let walk = RouteWalk(floor: floor, route: route, speed: speed, start: now, interval: configuration.walkInterval)
        guard walk.duration > 0 else { throw .badRoute("the route has no length") }
        activity = .walking(walk)
        places += 1
        records.truth += due(now: now)
        return records
    }

    /// Time passes: the dwell's closing line when it is due, a walk's lines as the walker passes them.
    public mutating func tick(now: Double) -> SurveyRecords {
        SurveyRecords(truth: due(now: now))
    }

    /// Closes the point or walk under way at `now` (early, with its own line, if its time is not up).
    public mutating func finish(now: Double) -> SurveyRecords {
        close(now: now)
    }

    // MARK: - Readings

    /// Takes one reading as the agents sent it: kept (and returned, to append) when it is the survey tag's and its
    /// values are sound; otherwise counted and dropped.
    public mutating func take(_ reading: RecordedReading) -> SurveyRecords {
        guard reading.time.isFinite, reading.rssi.isFinite, BatchDecoder.rssiRange.contains(reading.rssi),
            reading.variance.map({ $0.isFinite && $0 >= 0 }) ?? true, reading.count >= 1
        else {
            drops.invalid += 1
            return SurveyRecords()
        }
        guard let tag, reading.tag == tag else {
            drops.otherTags += 1
            return SurveyRecords()
        }
        readings.append(reading)
        if case .standing(var point) = activity, reading.time >= point.arrival {
            point.readings += 1
            activity = .standing(point)
        }
        return SurveyRecords(readings: [reading])
    }

    /// Takes a message from the broker: an agent's batch of readings (`…/agents/<id>/readings`), checked as the
    /// locator checks it (format, the map's agents, ranges, times against `now`, duplicates), each reading then
    /// through ``take(_:)``. Anything else is counted and dropped.
    public mutating func take(topic: String, payload: [UInt8], now: Double) -> SurveyRecords {
        guard case .readings(let agent) = topics.parse(topic) else {
            drops.otherTopics += 1
            return SurveyRecords()
        }
        let decoded = decoder.decode(
            payload, topicAgent: agent, isKnownAgent: { map.agentIndex(of: $0.rawValue) != nil }, now: now)
        guard case .decoded(let batch) = decoded else {
            drops.rejectedBatches[decoded.rejection?.rawValue ?? "unknown", default: 0] += 1
            return SurveyRecords()
        }
        if let refused = deduplicator.admit(batch) {
            drops.rejectedBatches[refused.rawValue, default: 0] += 1
            return SurveyRecords()
        }
        var records = SurveyRecords()
        for outcome in batch.outcomes {
            switch outcome {
            case .accepted(let reading): records.readings += take(RecordedReading(reading, agent: batch.agent)).readings
            case .rejected(let reason): drops.rejectedReadings[reason.rawValue, default: 0] += 1
            }
        }
        return records
    }

    // MARK: - Inside

    /// Closes what is under way at `now`: a point early (a line at its place now), a walk where the walker is now.
    mutating func close(now: Double) -> SurveyRecords {
        var records = SurveyRecords(truth: due(now: now))
        switch activity {
        case .idle:
            break
        case .standing(var point):
            if let tag {
                records.truth.append(truthLine(tag: tag, point: point.point, floor: point.floor, time: now))
            }
            point.closed = now
            finished = .standing(point)
        case .walking(var walk):
            // Where the walker is now, unless a line of the walk already says so.
            if let tag, now > walk.start, walk.emitted == 0 || walk.times[walk.emitted - 1] < now {
                records.truth.append(
                    truthLine(tag: tag, point: walk.position(at: now), floor: walk.floor, time: now))
            }
            walk.closed = now
            finished = .walking(walk)
        }
        activity = .idle
        return records
    }

    /// The lines due by `now`: the dwell's end, or a walk's lines so far (and its end).
    mutating func due(now: Double) -> [TruthRecord] {
        guard let tag else { return [] }
        switch activity {
        case .idle:
            return []
        case .standing(var point):
            guard now >= point.arrival + point.dwell else { return [] }
            point.closed = point.arrival + point.dwell
            finished = .standing(point)
            activity = .idle
            return [truthLine(tag: tag, point: point.point, floor: point.floor, time: point.arrival + point.dwell)]
        case .walking(var walk):
            var lines: [TruthRecord] = []
            while walk.emitted < walk.times.count, walk.times[walk.emitted] <= now {
                let time = walk.times[walk.emitted]
                lines.append(truthLine(tag: tag, point: walk.position(at: time), floor: walk.floor, time: time))
                walk.emitted += 1
            }
            if walk.emitted == walk.times.count {
                walk.closed = walk.start + walk.duration
                finished = .walking(walk)
                activity = .idle
            } else {
                activity = .walking(walk)
            }
            return lines
        }
    }

    /// A truth line, rounded to the millimetre as the simulator's are.
    mutating func truthLine(tag: TagIdentity, point: Point, floor: UInt16, time: Double) -> TruthRecord {
        let line = TruthRecord(
            time: time, tag: tag, x: point.x.rounded(toDecimals: 3), y: point.y.rounded(toDecimals: 3), floor: floor)
        truth.append(line)
        return line
    }

    private func check(_ point: Point, floor: UInt16) throws(SurveyError) {
        guard let outline = map.floor(major: floor)?.outline else { throw .unknownFloor(floor) }
        guard point.x.isFinite, point.y.isFinite, outline.contains(point) else {
            throw .outsideFloor(floor: floor, x: point.x, y: point.y)
        }
    }
}
