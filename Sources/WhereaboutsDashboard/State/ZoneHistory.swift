public import WhereaboutsWire

/// One zone's occupancy over the last hour, in bounded memory: the changes of its count and state, and its enter
/// and exit events.
///
/// A sample is kept only when the count or state changes, at most ``maximumSamples`` of them, and none older than
/// ``window`` except the last one before it (which says what the zone was at the window's start).
public struct ZoneHistory: Sendable, Equatable {
    /// A change of the zone's occupancy, at the time the dashboard received it (Unix seconds).
    public struct Sample: Sendable, Equatable {
        public var time: Double
        public var state: ZoneOccupancy.State
        public var count: Int
    }

    /// An enter or exit, at the time the dashboard received it.
    public struct Crossing: Sendable, Equatable {
        public var time: Double
        public var label: String
        public var kind: ZoneEvent.Kind
    }

    /// How far back the history reaches, seconds.
    public static let window = 3600.0
    /// The most samples kept per zone (one every 5 s over the hour).
    public static let maximumSamples = 720
    /// The most events kept per zone.
    public static let maximumCrossings = 100

    /// Changes, oldest first.
    public private(set) var samples: [Sample] = []
    /// Enter and exit events, oldest first.
    public private(set) var crossings: [Crossing] = []

    public init() {}

    /// A history read back from a saved state; pruned to the window and the caps at `now`.
    init(samples: [Sample], crossings: [Crossing], now: Double) {
        self.samples = samples.sorted { $0.time < $1.time }
        self.crossings = crossings.sorted { $0.time < $1.time }
        prune(now: now)
    }

    /// Records an occupancy payload received at `now`; a repeat of the current count and state is not a change.
    mutating func record(_ occupancy: ZoneOccupancy, now: Double) {
        if let last = samples.last, last.state == occupancy.state, last.count == occupancy.count { return }
        samples.append(Sample(time: now, state: occupancy.state, count: occupancy.count))
        prune(now: now)
    }

    /// Records an event received at `now`.
    mutating func record(_ kind: ZoneEvent.Kind, label: String, now: Double) {
        crossings.append(Crossing(time: now, label: label, kind: kind))
        prune(now: now)
    }

    /// Forgets what fell out of the window (keeping the sample in force at its start) and what exceeds the caps.
    mutating func prune(now: Double) {
        let start = now - Self.window
        if let firstInside = samples.firstIndex(where: { $0.time >= start }), firstInside > 1 {
            samples.removeFirst(firstInside - 1)
        } else if samples.count > 1, let last = samples.last, last.time < start {
            samples.removeFirst(samples.count - 1)
        }
        if samples.count > Self.maximumSamples { samples.removeFirst(samples.count - Self.maximumSamples) }
        crossings.removeAll { $0.time < start }
        if crossings.count > Self.maximumCrossings { crossings.removeFirst(crossings.count - Self.maximumCrossings) }
    }
}
