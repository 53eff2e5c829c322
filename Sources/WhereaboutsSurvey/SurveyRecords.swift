import WhereaboutsCore
public import WhereaboutsWire

/// What to append to the survey's files after an input: `survey-readings.jsonl` and `survey-truth.jsonl`
/// (docs/formats.md).
public struct SurveyRecords: Sendable, Equatable {
    /// Readings of the survey tag to append.
    public var readings: [RecordedReading] = []
    /// Truth lines to append.
    public var truth: [TruthRecord] = []

    public init(readings: [RecordedReading] = [], truth: [TruthRecord] = []) {
        self.readings = readings
        self.truth = truth
    }

    /// Whether there is nothing to append.
    public var isEmpty: Bool { readings.isEmpty && truth.isEmpty }

    /// Both, one after the other.
    public static func + (lhs: SurveyRecords, rhs: SurveyRecords) -> SurveyRecords {
        SurveyRecords(readings: lhs.readings + rhs.readings, truth: lhs.truth + rhs.truth)
    }
}

/// Readings a survey did not keep, by why.
public struct SurveyDrops: Sendable, Hashable {
    /// Readings of other tags than the survey's (or before the survey started): not errors, just not the survey's.
    public var otherTags = 0
    /// Readings whose values are not sound: not finite, out of range.
    public var invalid = 0
    /// Readings the wire's checks refused, by reason (`bad_tag`, `non_finite`, `time_too_old`, …).
    public var rejectedReadings: [String: Int] = [:]
    /// Whole batches refused, by reason (`malformed_json`, `unknown_agent`, `duplicate_batch`, …).
    public var rejectedBatches: [String: Int] = [:]
    /// Messages on other topics than readings.
    public var otherTopics = 0

    public init() {}

    /// Readings dropped as bad: unsound values and the readings the wire's checks refused.
    public var badReadings: Int { invalid + rejectedReadings.values.reduce(0, +) }
}

/// Why a survey refused an operator's action.
public enum SurveyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The map document is not a valid map; the problems.
    case invalidMap([String])
    /// A setting or a time is out of range.
    case invalidSetting(String)
    /// No survey tag yet: start the survey first.
    case notStarted
    /// The map has no such floor.
    case unknownFloor(UInt16)
    /// The point is not inside the floor's outline.
    case outsideFloor(floor: UInt16, x: Double, y: Double)
    /// A walk's route is not usable.
    case badRoute(String)

    public var description: String {
        switch self {
        case .invalidMap(let problems): "not a valid map: \(problems.joined(separator: "; "))"
        case .invalidSetting(let text): "invalid survey setting: \(text)"
        case .notStarted: "the survey has not started: choose the survey tag first"
        case .unknownFloor(let floor): "the map has no floor \(floor)"
        case .outsideFloor(let floor, let x, let y): "(\(x), \(y)) is not inside floor \(floor)'s outline"
        case .badRoute(let text): "bad route: \(text)"
        }
    }
}

/// What the operator is doing.
enum Activity: Sendable {
    case idle
    case standing(ReferencePoint)
    case walking(RouteWalk)
}

/// A reference point the operator stands at.
struct ReferencePoint: Sendable {
    var floor: UInt16
    var point: Point
    /// When the operator arrived.
    var arrival: Double
    /// How long the point is held.
    var dwell: Double
    /// Readings of the survey tag since the arrival.
    var readings = 0
    /// When it was closed (the dwell's end, or earlier).
    var closed: Double?

    /// 0 at the arrival, 1 when the dwell is over or the point was closed.
    func progress(now: Double) -> Double {
        if closed != nil { return 1 }
        return min(max((now - arrival) / dwell, 0), 1)
    }
}

/// A walk along a route at a steady speed.
struct RouteWalk: Sendable {
    var floor: UInt16
    var route: [Point]
    var speed: Double
    var start: Double
    /// Metres from the route's start to each of its points.
    let distances: [Double]
    /// The times of the walk's truth lines: every interval and at each corner, in order.
    let times: [Double]
    /// How many of ``times`` have been written.
    var emitted = 0
    /// When it was closed (its end, or earlier).
    var closed: Double?

    init(floor: UInt16, route: [Point], speed: Double, start: Double, interval: Double) {
        self.floor = floor
        self.route = route
        self.speed = speed
        self.start = start
        var distances = [0.0]
        for index in route.indices.dropFirst() {
            distances.append(distances[index - 1] + route[index - 1].distance(to: route[index]))
        }
        self.distances = distances
        let duration = (distances.last ?? 0) / speed
        var times = Set(distances.map { start + $0 / speed })
        var step = 0.0
        while step < duration {
            times.insert(start + step)
            step += interval
        }
        self.times = times.sorted()
    }

    /// Seconds from the first point to the last.
    var duration: Double { (distances.last ?? 0) / speed }

    /// Where the walker is at `time` (at the ends before and after the walk).
    func position(at time: Double) -> Point {
        let walked = min(max((time - start) * speed, 0), distances.last ?? 0)
        guard let next = distances.firstIndex(where: { $0 >= walked }), next > 0 else { return route[0] }
        let leg = distances[next] - distances[next - 1]
        guard leg > 0 else { return route[next] }
        let fraction = (walked - distances[next - 1]) / leg
        return route[next - 1] + (route[next] - route[next - 1]) * fraction
    }

    /// 0 at the start, 1 at the end or when closed.
    func progress(now: Double) -> Double {
        if closed != nil { return 1 }
        return duration > 0 ? min(max((now - start) / duration, 0), 1) : 1
    }
}
