public import WhereaboutsAdvertising
import WhereaboutsCore

/// Sums up sightings per tag over wall-clock-aligned windows and hands back each window as it closes.
///
/// Time is an input (the sighting's time, or the clock on a tick), so the same code serves live scanning and
/// btsnoop replay. A window closes when time reaches its end: every window closes, including empty ones, because
/// an empty batch is the agent's heartbeat. Memory is bounded: at most ``Configuration/maximumTags`` tags per
/// window (sightings of further tags are counted in ``overflow`` and dropped) and at most
/// ``Configuration/samplesPerTag`` RSSI values per tag.
///
/// Clock steps: a sighting up to one window late is added to the current window (it straddled a boundary); a
/// time further back means the clock stepped back, so the current window is closed and a new one starts there.
/// A jump forward closes the windows in between, empty, up to ``Configuration/maximumCatchUpWindows``; beyond
/// that the rest are skipped and counted in ``skippedWindows``.
public struct WindowAggregator: Sendable {
    /// Limits and the window length.
    public struct Configuration: Sendable, Hashable {
        /// The window length, seconds.
        public var windowLength: Double
        /// The most tags one window holds.
        public var maximumTags: Int
        /// The most RSSI values kept per tag and window for the statistics (the count goes on).
        public var samplesPerTag: Int
        /// The most empty windows closed at once after time jumps forward.
        public var maximumCatchUpWindows: Int

        /// A configuration; lengths and limits are clamped to sensible minimums.
        public init(
            windowLength: Double = 1, maximumTags: Int = 1024, samplesPerTag: Int = 128,
            maximumCatchUpWindows: Int = 3600
        ) {
            self.windowLength = windowLength.isFinite ? max(windowLength, 0.01) : 1
            self.maximumTags = max(maximumTags, 1)
            self.samplesPerTag = max(samplesPerTag, 1)
            self.maximumCatchUpWindows = max(maximumCatchUpWindows, 1)
        }
    }

    /// The configuration in force.
    public let configuration: Configuration
    /// The window being filled, once time has started.
    public private(set) var current: WindowSlot?
    /// Sightings dropped because their window already held the most tags, since the start.
    public private(set) var overflow = 0
    /// Windows skipped, not even closed empty, because time jumped too far forward.
    public private(set) var skippedWindows = 0
    private var tags: [TagIdentity: TagAccumulator] = [:]
    private var overflowInWindow = 0

    /// An aggregator with no window open yet.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Adds one sighting heard at `time` (Unix seconds); returns the windows that time closed, oldest first.
    public mutating func add(_ sighting: BeaconSighting, at time: Double) -> [ClosedWindow] {
        let closed = advance(to: time)
        if var accumulator = tags[sighting.tag] {
            accumulator.add(
                rssi: sighting.rssi, measuredPower: sighting.measuredPower, telemetry: sighting.telemetry, time: time)
            tags[sighting.tag] = accumulator
        } else if tags.count < configuration.maximumTags {
            var accumulator = TagAccumulator(capacity: configuration.samplesPerTag, time: time)
            accumulator.add(
                rssi: sighting.rssi, measuredPower: sighting.measuredPower, telemetry: sighting.telemetry, time: time)
            tags[sighting.tag] = accumulator
        } else {
            overflow += 1
            overflowInWindow += 1
        }
        return closed
    }

    /// Moves time on to `time`; returns the windows that closed, oldest first (empty ones included).
    public mutating func advance(to time: Double) -> [ClosedWindow] {
        guard time.isFinite else { return [] }
        let slot = WindowSlot(containing: time, length: configuration.windowLength)
        guard let open = current else {
            current = slot
            return []
        }
        if slot == open || slot.index == open.index - 1 { return [] }
        if slot < open {
            // The clock stepped back: close what we have and start again where the clock now is.
            let closed = close(open)
            current = slot
            return [closed]
        }
        var closed = [close(open)]
        var next = open.next
        let gap = slot.index - next.index
        if gap > Int64(configuration.maximumCatchUpWindows) {
            skippedWindows += Int(clamping: gap - Int64(configuration.maximumCatchUpWindows))
            next = WindowSlot(index: slot.index - Int64(configuration.maximumCatchUpWindows), length: slot.length)
        }
        while next < slot {
            closed.append(ClosedWindow(slot: next, aggregates: [], overflow: 0))
            next = next.next
        }
        current = slot
        return closed
    }

    /// Closes the current window early (on shutdown or at the end of a replay); nil if none is open.
    public mutating func flush() -> ClosedWindow? {
        guard let open = current else { return nil }
        current = nil
        return close(open)
    }

    /// How many tags the current window holds.
    public var tagCount: Int { tags.count }

    private mutating func close(_ slot: WindowSlot) -> ClosedWindow {
        let aggregates = tags.compactMap { $0.value.aggregate($0.key) }.sorted { $0.tag < $1.tag }
        let window = ClosedWindow(slot: slot, aggregates: aggregates, overflow: overflowInWindow)
        tags.removeAll(keepingCapacity: true)
        overflowInWindow = 0
        return window
    }
}

/// One finished window: its slot and one aggregate per tag heard, in tag order.
public struct ClosedWindow: Sendable, Hashable {
    /// Which window.
    public var slot: WindowSlot
    /// One aggregate per tag, sorted by the tag's canonical string.
    public var aggregates: [TagAggregate]
    /// Sightings of further tags dropped because the window was full.
    public var overflow: Int

    /// Makes a closed window.
    public init(slot: WindowSlot, aggregates: [TagAggregate], overflow: Int) {
        self.slot = slot
        self.aggregates = aggregates
        self.overflow = overflow
    }

    /// How many adverts the window stands for.
    public var advertCount: Int { aggregates.reduce(0) { $0 + $1.count } }
}
