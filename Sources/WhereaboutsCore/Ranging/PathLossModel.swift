/// The log-distance path-loss model: how received power falls with distance.
///
/// `d = 10^((P1m − (RSSI + offset)) / (10 n))`, where `P1m` is the RSSI at 1 m, `offset` the dB the map adds to
/// the agent's raw RSSI, and `n` the path-loss exponent.
public struct PathLossModel: Sendable, Hashable {
    /// RSSI at 1 m, in dBm.
    public var measuredPower: Double
    /// The path-loss exponent (2 in free space, 2.5–3.5 indoors).
    public var exponent: Double
    /// Decibels added to the raw RSSI before ranging.
    public var rssiOffset: Double

    public init(measuredPower: Double, exponent: Double, rssiOffset: Double = 0) {
        self.measuredPower = measuredPower
        self.exponent = exponent
        self.rssiOffset = rssiOffset
    }

    /// The 3-D distance in metres at which this RSSI is expected; never zero, never infinite.
    public func distance(forRSSI rssi: Double) -> Double {
        let exponentTerm = (measuredPower - (rssi + rssiOffset)) / (10 * exponent)
        // Clamp to 1 cm … 1 km: beyond that the model means nothing and the maths would over- or underflow.
        return min(max(pow10(exponentTerm), 0.01), 1000)
    }

    /// The RSSI expected at a 3-D distance in metres (the inverse of `distance(forRSSI:)`).
    public func expectedRSSI(atDistance distance: Double) -> Double {
        measuredPower - 10 * exponent * logarithm10(max(distance, 0.01)) - rssiOffset
    }

    /// The 1-sigma error in metres of a range `distance` estimated from an RSSI with `rssiSigma` dB of error.
    ///
    /// A dB error is a ratio error: it grows with distance, by `d · ln(10) / (10 n)` per dB.
    public func rangeSigma(atDistance distance: Double, rssiSigma: Double) -> Double {
        distance * 2.302_585_092_994_046 / (10 * exponent) * rssiSigma
    }
}

/// The horizontal part of a 3-D range, given the height difference between antenna and tag.
///
/// A range shorter than the height difference (noise, or a tag right under the antenna) gives 0, never NaN.
public func horizontalRange(_ range: Double, heightDifference: Double) -> Double {
    let squared = range * range - heightDifference * heightDifference
    return squared > 0 ? squared.squareRoot() : 0
}

/// Proximity in CoreLocation's terms.
public enum Proximity: String, Sendable, Hashable, CaseIterable {
    /// Within about half a metre.
    case immediate
    /// Within a few metres.
    case near
    /// Farther, but heard.
    case far
    /// Not heard recently enough to say.
    case unknown

    /// The proximity band of a range in metres, with CoreLocation's rough limits (0.5 m and 3 m).
    public init(range: Double?) {
        guard let range, range.isFinite else {
            self = .unknown
            return
        }
        self = range < 0.5 ? .immediate : range < 3 ? .near : .far
    }
}
