// The real functions (logarithm10, exponential, rounded(toDecimals:)) come from WhereaboutsCore.

/// The median of some values; nil when there are none.
func median(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The `fraction` percentile of some values, interpolated linearly between ranks (as ``AccuracyReport`` does).
func percentile(_ values: [Double], _ fraction: Double) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    let rank = fraction * Double(sorted.count - 1)
    let low = Int(rank.rounded(.down))
    let high = min(low + 1, sorted.count - 1)
    return sorted[low] + (sorted[high] - sorted[low]) * (rank - Double(low))
}

/// The root mean square of some values; nil when there are none.
func rootMeanSquare(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    return (values.reduce(0) { $0 + $1 * $1 } / Double(values.count)).squareRoot()
}
