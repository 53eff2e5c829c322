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
/// No stamp is ever ahead of the wall clock (the locator refuses readings more than 5 s in the future):
/// - paced replay delivers an event `(t − first) / factor` seconds after the replay started and stamps it with the
///   wall-clock time of that moment, as if it were heard then;
/// - fast replay delivers at once, so it cannot stamp the time of delivery; it maps the capture onto the past, ending
///   now: every time is shifted by the same whole number of seconds, the one that puts the capture's last event in
///   the second before the replay started. Intervals, and windows of whole seconds, are the capture's own;
/// - with `keepsTimes` the recorded times are kept as they are (pacing is unchanged).
public struct ReplayClock: Sendable, Hashable {
    /// The capture time of the first event, Unix seconds.
    public let firstEventTime: Double
    /// The capture time of the last event, Unix seconds (fast replay ends its timeline there).
    public let lastEventTime: Double
    /// The wall-clock time the replay started, Unix seconds.
    public let startWallTime: Double
    /// The monotonic clock reading when the replay started, seconds.
    public let startMonotonic: Double
    /// The pace.
    public let speed: ReplaySpeed
    /// Whether recorded times are kept unshifted.
    public let keepsTimes: Bool

    /// A clock for a replay of a capture from `firstEventTime` to `lastEventTime`, started now.
    public init(
        firstEventTime: Double, lastEventTime: Double, startWallTime: Double, startMonotonic: Double,
        speed: ReplaySpeed, keepsTimes: Bool
    ) {
        self.firstEventTime = firstEventTime
        self.lastEventTime = max(lastEventTime, firstEventTime)
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

    /// What fast replay adds to a capture time: whole seconds, so that windows of whole seconds hold what they held
    /// in the capture, and small enough that the last event lands at or before the start.
    public var fastOffset: Double { (startWallTime - lastEventTime).rounded(.down) }

    /// The time an event captured at `time` is stamped with, Unix seconds.
    public func stamp(_ time: Double) -> Double {
        if keepsTimes { return time }
        switch speed {
        case .fast: return min(time, lastEventTime) + fastOffset
        case .factor(let factor): return startWallTime + max(time - firstEventTime, 0) / factor
        }
    }

    /// The replay's time (in stamped terms) at monotonic time `monotonic`, for closing windows between events.
    public func replayTime(atMonotonic monotonic: Double) -> Double {
        guard case .factor(let factor) = speed else { return stamp(lastEventTime) }
        let captureTime = firstEventTime + max(monotonic - startMonotonic, 0) * factor
        return stamp(captureTime)
    }
}
