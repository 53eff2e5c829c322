/// How fast a btsnoop capture is replayed.
public enum ReplaySpeed: Sendable, Hashable, CustomStringConvertible {
    /// As fast as the agent can process the events.
    case fast
    /// At the recorded pace times a factor: 1 is real time, 2 twice as fast.
    case factor(Double)

    /// Parses `fast`, or a factor such as `1`, `0.5` or `10` (more than 0, at most 1000).
    public init?(_ text: String) {
        if text == "fast" {
            self = .fast
            return
        }
        guard let factor = Double(text), factor.isFinite, factor > 0, factor <= 1000 else { return nil }
        self = .factor(factor)
    }

    public var description: String {
        switch self {
        case .fast: "fast"
        case .factor(let factor): "\(factor)x"
        }
    }
}

/// Maps a capture's timeline onto the replay's: when each event is due, and what time it is stamped with.
///
/// Paced replay delivers an event `(t − first) / factor` seconds after the replay started, and stamps it with
/// the wall-clock time of that moment, as if it were heard now; so the locator's time checks accept the readings.
/// Fast replay delivers at once and stamps `t` shifted by the same offset that makes the first event "now".
/// With `keepTimes` the recorded times are kept as they are (pacing is unchanged).
public struct ReplayClock: Sendable, Hashable {
    /// The capture time of the first event, Unix seconds.
    public let firstEventTime: Double
    /// The wall-clock time the replay started, Unix seconds.
    public let startWallTime: Double
    /// The monotonic clock reading when the replay started, seconds.
    public let startMonotonic: Double
    /// The pace.
    public let speed: ReplaySpeed
    /// Whether recorded times are kept unshifted.
    public let keepsTimes: Bool

    /// A clock for a replay whose first event was captured at `firstEventTime`, started now.
    public init(
        firstEventTime: Double, startWallTime: Double, startMonotonic: Double, speed: ReplaySpeed, keepsTimes: Bool
    ) {
        self.firstEventTime = firstEventTime
        self.startWallTime = startWallTime
        self.startMonotonic = startMonotonic
        self.speed = speed
        self.keepsTimes = keepsTimes
    }

    /// The monotonic time at which an event captured at `time` is due; nil for fast replay (due at once).
    public func due(_ time: Double) -> Double? {
        guard case .factor(let factor) = speed else { return nil }
        return startMonotonic + max(time - firstEventTime, 0) / factor
    }

    /// The time an event captured at `time` is stamped with, Unix seconds.
    public func stamp(_ time: Double) -> Double {
        if keepsTimes { return time }
        switch speed {
        case .fast: return time - firstEventTime + startWallTime
        case .factor(let factor): return startWallTime + (time - firstEventTime) / factor
        }
    }

    /// The replay's time (in stamped terms) at monotonic time `monotonic`, for closing windows between events.
    public func replayTime(atMonotonic monotonic: Double) -> Double {
        guard case .factor(let factor) = speed else { return startWallTime }
        let captureTime = firstEventTime + max(monotonic - startMonotonic, 0) * factor
        return stamp(captureTime)
    }
}
