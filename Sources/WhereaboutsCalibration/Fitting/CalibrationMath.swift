#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// libm, for the functions the standard library lacks. The package links `m` for every target.

/// Base-10 logarithm.
@inline(__always) func logarithm10(_ x: Double) -> Double { log10(x) }

/// e to the power `x`.
@inline(__always) func exponential(_ x: Double) -> Double { exp(x) }

extension Double {
    /// This value with `decimals` decimal places at most.
    func rounded(toDecimals decimals: Int) -> Double {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        return (self * scale).rounded() / scale
    }
}

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
