/// Smooths the RSSI that one agent hears from one tag: a one-state Kalman filter in dB with innovation gating.
///
/// It takes single adverts and per-window aggregates alike: an aggregate of `n` adverts with variance `v` counts
/// as one measurement of variance `v / n` (never below ``Configuration/minimumMeasurementVariance``). A reading far
/// outside the expected spread (beyond ``Configuration/gate`` sigmas) is down-weighted rather than trusted; a run
/// of such readings on the same side is taken as a real change and followed.
public struct RSSIFilter: Sendable, Hashable {
    /// Tuning of the filter.
    public struct Configuration: Sendable, Hashable {
        /// How fast the true RSSI may drift, in dB² per second (a walking tag changes its RSSI quickly).
        public var processNoise: Double = 2.0
        /// Variance of a single advert's RSSI around its mean when the reading does not say, in dB².
        public var advertVariance: Double = 16
        /// Floor on a measurement's variance, in dB²: adverts in one window are correlated, so averaging many
        /// does not make the mean arbitrarily precise.
        public var minimumMeasurementVariance: Double = 0.5
        /// Innovations beyond this many sigmas are outliers.
        public var gate: Double = 3
        /// After this many outliers in a row on the same side, the filter jumps to follow them.
        public var outlierRunToFollow: Int = 3

        public init() {}
    }

    /// The smoothed RSSI in dBm at ``time``.
    public private(set) var rssi: Double
    /// The variance of ``rssi`` at ``time``, in dB².
    public private(set) var variance: Double
    /// When the filter last took a reading (seconds).
    public private(set) var time: Double
    /// Outliers in a row so far, positive above the estimate, negative below.
    private(set) var outlierRun = 0

    /// Starts a filter at its first reading.
    public init(rssi: Double, count: Int = 1, variance: Double? = nil, time: Double, configuration: Configuration) {
        self.rssi = rssi
        self.variance = Self.measurementVariance(count: count, variance: variance, configuration: configuration)
        self.time = time
    }

    /// A filter in the state given, as a tag's link keeps it (``TagState/Link``).
    init(rssi: Double, variance: Double, time: Double, outlierRun: Int) {
        self.rssi = rssi
        self.variance = variance
        self.time = time
        self.outlierRun = outlierRun
    }

    /// Takes a reading: a single advert (`count` 1) or the mean of `count` adverts with the given variance.
    public mutating func update(
        rssi measured: Double,
        count: Int = 1,
        variance reportedVariance: Double? = nil,
        time readingTime: Double,
        configuration: Configuration
    ) {
        // Readings that arrive out of order are used as if they were current; the drift they miss is small.
        let elapsed = max(readingTime - time, 0)
        let predicted = variance + configuration.processNoise * elapsed
        var measurementVariance = Self.measurementVariance(
            count: count,
            variance: reportedVariance,
            configuration: configuration
        )
        let innovation = measured - rssi
        let innovationVariance = predicted + measurementVariance
        let normalized = innovation * innovation / innovationVariance
        let gateSquared = configuration.gate * configuration.gate
        if normalized > gateSquared {
            outlierRun = (outlierRun >= 0) == (innovation >= 0) ? outlierRun + (innovation >= 0 ? 1 : -1) : 0
            if abs(outlierRun) >= configuration.outlierRunToFollow {
                // A sustained change, not an outlier: restart from the measurement.
                rssi = measured
                variance = measurementVariance
                time = max(time, readingTime)
                outlierRun = 0
                return
            }
            // Soft gate: inflate the measurement's variance so that it pulls no harder than a 3-sigma reading.
            measurementVariance *= normalized / gateSquared
        } else {
            outlierRun = 0
        }
        let gain = predicted / (predicted + measurementVariance)
        rssi += gain * innovation
        variance = (1 - gain) * predicted
        time = max(time, readingTime)
    }

    /// The estimate as of `now`: the same mean, with the variance grown by the drift since the last reading.
    public func estimate(at now: Double, configuration: Configuration) -> (rssi: Double, variance: Double) {
        (rssi, variance + configuration.processNoise * max(now - time, 0))
    }

    private static func measurementVariance(count: Int, variance: Double?, configuration: Configuration) -> Double {
        let perAdvert = variance.map { max($0, 1) } ?? configuration.advertVariance
        return max(perAdvert / Double(max(count, 1)), configuration.minimumMeasurementVariance)
    }
}
