public import WhereaboutsAdvertising
public import WhereaboutsCore

/// What one window says about one tag: how often it was heard, how strongly, and what it last said about itself.
public struct TagAggregate: Sendable, Hashable {
    /// The tag.
    public var tag: TagIdentity
    /// How many adverts were heard in the window.
    public var count: Int
    /// The robust mean RSSI, dBm (see ``RobustStatistics``).
    public var rssi: Double
    /// The variance of the RSSI values the mean stands for, dB²; nil for a single advert.
    public var variance: Double?
    /// The last measured power at 1 m the tag advertised, dBm.
    public var measuredPower: Int?
    /// The last battery and temperature the tag's address reported.
    public var telemetry: BeaconTelemetry?
    /// When the tag was last heard in the window, Unix seconds.
    public var lastHeard: Double
}

/// Collects one tag's adverts during a window, in bounded memory.
struct TagAccumulator: Sendable {
    /// RSSI values kept for the statistics: the most recent `capacity`, as whole dBm (the radio reports integers).
    private var samples: [Int8] = []
    private let capacity: Int
    private(set) var count = 0
    private(set) var measuredPower: Int?
    private(set) var telemetry: BeaconTelemetry?
    private(set) var lastHeard: Double

    init(capacity: Int, time: Double) {
        self.capacity = max(capacity, 1)
        lastHeard = time
    }

    mutating func add(rssi: Int, measuredPower: Int?, telemetry: BeaconTelemetry?, time: Double) {
        let value = Int8(clamping: rssi)
        if samples.count < capacity {
            samples.append(value)
        } else {
            // A ring: once full, the newest value replaces the oldest.
            samples[count % capacity] = value
        }
        count += 1
        if let measuredPower { self.measuredPower = measuredPower }
        if let telemetry { self.telemetry = telemetry }
        lastHeard = max(lastHeard, time)
    }

    func aggregate(_ tag: TagIdentity) -> TagAggregate? {
        guard let statistics = RobustStatistics(samples.map(Double.init)) else { return nil }
        return TagAggregate(
            tag: tag, count: count, rssi: statistics.mean, variance: statistics.variance,
            measuredPower: measuredPower, telemetry: telemetry, lastHeard: lastHeard)
    }
}
