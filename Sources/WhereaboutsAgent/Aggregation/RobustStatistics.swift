/// The robust mean and spread of one tag's RSSI values over a window.
///
/// RSSI is noisy with heavy tails (a body in the way, a reflection), so a plain mean is pulled by single
/// outliers. With 4 or more values the mean is taken inside Tukey's fences, `[Q1 − 1.5·IQR, Q3 + 1.5·IQR]`
/// (quartiles by linear interpolation); with fewer, the quartiles mean little and the median is used instead.
/// The variance is the sample variance (n − 1) of the values the mean stands for: the inliers, or all values
/// when the median is used. It is nil for a single value.
public struct RobustStatistics: Sendable, Hashable {
    /// The robust mean, dBm.
    public var mean: Double
    /// The sample variance of the values used, dB²; nil for one value.
    public var variance: Double?
    /// How many values the mean stands for (the inliers).
    public var used: Int

    /// The fewest values for which the IQR fence is used rather than the median.
    public static let minimumForFence = 4

    /// The statistics of `values`; nil when there are none.
    public init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let count = sorted.count
        if count < Self.minimumForFence {
            let middle = count / 2
            mean = count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
            variance = Self.sampleVariance(sorted)
            used = count
            return
        }
        let lowerQuartile = Self.quantile(sorted, 0.25)
        let upperQuartile = Self.quantile(sorted, 0.75)
        let spread = upperQuartile - lowerQuartile
        let fence = (lowerQuartile - 1.5 * spread)...(upperQuartile + 1.5 * spread)
        let inliers = sorted.filter { fence.contains($0) }
        // The middle half always lies inside the fence, so `inliers` is never empty.
        mean = inliers.reduce(0, +) / Double(inliers.count)
        variance = Self.sampleVariance(inliers)
        used = inliers.count
    }

    /// The `p` quantile of sorted values, interpolating between neighbours (Hyndman and Fan's type 7).
    static func quantile(_ sorted: [Double], _ p: Double) -> Double {
        let position = p * Double(sorted.count - 1)
        let below = Int(position.rounded(.down))
        let above = min(below + 1, sorted.count - 1)
        let fraction = position - Double(below)
        return sorted[below] + (sorted[above] - sorted[below]) * fraction
    }

    static func sampleVariance(_ values: [Double]) -> Double? {
        guard values.count > 1 else { return nil }
        let mean = values.reduce(0, +) / Double(values.count)
        let squares = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
        return squares / Double(values.count - 1)
    }
}
