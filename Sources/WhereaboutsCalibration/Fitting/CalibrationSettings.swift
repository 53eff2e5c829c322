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

    public init() {}
}
