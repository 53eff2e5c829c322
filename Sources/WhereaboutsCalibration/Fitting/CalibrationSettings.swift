import WhereaboutsCore

/// How the radio constants are fitted: bounds, the priors that regularise them, and how much data a fit needs.
///
/// The model: `RSSI_raw + offset_agent = P1m_transmitter − 10 n_agent log10(d)`. Every fitted value has a
/// Gaussian prior (offsets toward 0, exponents toward the map's default exponent, transmit powers toward the power
/// the map or the advert gives), so that a value the data hardly constrains stays near its default instead of
/// railing to a bound, and the common shift between offsets and powers (which the data cannot see) is settled.
public struct CalibrationSettings: Sendable, Hashable {
    /// Allowed RSSI offsets, dB.
    public var offsetBounds: ClosedRange<Double> = -20...20
    /// Allowed path-loss exponents.
    public var exponentBounds: ClosedRange<Double> = 1.5...5
    /// Allowed measured powers at 1 m, dBm.
    public var powerBounds: ClosedRange<Double> = -100...(-30)
    /// Prior standard deviation of an agent's offset around 0 dB.
    public var offsetPriorSigma = 6.0
    /// Prior standard deviation of an agent's exponent around the map's default.
    public var exponentPriorSigma = 0.5
    /// Prior standard deviation of a transmitter's power around a power the map names or the transmitter
    /// advertises, dB.
    public var knownPowerPriorSigma = 2.0
    /// Prior standard deviation of a transmitter's power around the map's default when neither the map nor the
    /// advert gives one, dB: wide, so that such a tag's power takes the common shift rather than the offsets.
    public var unknownPowerPriorSigma = 10.0
    /// Error of the model itself per sample (shadowing, body, orientation), dB; it does not average away.
    public var modelSigma = 4.0
    /// Variance of one advert's RSSI around its window's mean when a reading does not say (fading), dB².
    public var advertVariance = 16.0
    /// Huber's threshold, in robust standard deviations: larger residuals count linearly, not squared.
    public var huberThreshold = 1.5
    /// An agent (or tag) with fewer samples than this keeps its values.
    public var minimumSamples = 30
    /// An agent whose samples span less than this range of distances (metres) keeps its values: its exponent
    /// and offset cannot be told apart.
    public var minimumDistanceSpread = 2.0
    /// A place on the floor counts as surveyed within this distance of a surveyed position, metres
    /// (``SurveyCoverage``).
    public var coverageRadius = 1.0
    /// The share of a floor's free area from which a survey counts as complete: from there on the priors above
    /// apply as they are.
    public var fullCoverage = 0.8
    /// How fast the priors tighten as the coverage falls below ``fullCoverage``: their deviations are multiplied by
    /// `(coverage / fullCoverage)^coverageExponent` (``coverageFactor(_:)``).
    public var coverageExponent = 3.0
    /// The factor on the priors' deviations is never below this (a survey of a corner still moves the values a
    /// little).
    public var minimumCoverageFactor = 0.05
    /// An agent takes fitted constants (or a radio map) only when the survey covered at least this share of its
    /// floor's free area; below it, it keeps the map's constants whatever the spatial check says. The check holds
    /// out surveyed areas only, and cannot see the places nobody surveyed: on the Kolakowski flat a survey of the
    /// south half (50 %) improves its own held-out areas and makes the robot path on the whole flat worse.
    public var minimumChoiceCoverage = 0.6
    /// The most samples of one agent from one place (a square of ``placeSize`` metres) that count at full weight;
    /// more from the same place share that weight (their errors are the place's, not independent). 0: no limit.
    public var samplesPerPlace = 0
    /// The side of a place for ``samplesPerPlace``, metres.
    public var placeSize = 1.0

    public init() {}

    /// The factor on the fitted values' prior deviations for a survey that covered `share` of the floor: 1 from
    /// ``fullCoverage`` up, falling as a power of the share below it; a hierarchical prior whose strength grows as
    /// the coverage falls, not a switch.
    public func coverageFactor(_ share: Double) -> Double {
        guard share.isFinite, fullCoverage > 0 else { return 1 }
        let ratio = min(max(share / fullCoverage, 0), 1)
        guard ratio > 0 else { return minimumCoverageFactor }
        return max(exponential(coverageExponent * naturalLog(ratio)), minimumCoverageFactor)
    }
}
