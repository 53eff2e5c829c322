/// Counts of observed values by upper bound, with their sum: a Prometheus histogram's state since start.
///
/// Each value falls in the first bucket whose bound it does not exceed, or past the last bound (`+Inf`). The counts
/// are kept per bucket and made cumulative when read (``cumulativeCounts``), as the exposition format wants them.
/// Non-finite values are not counted: a sum of NaN or infinity would poison every later quantile.
public struct Histogram: Sendable, Hashable {
    /// The buckets' upper bounds, ascending, without the `+Inf` that always follows.
    public let bounds: [Double]
    /// Values per bucket: one per bound, then the values above the last (`+Inf`).
    public private(set) var counts: [Int]
    /// The sum of every value counted.
    public private(set) var sum: Double = 0
    /// How many values were counted.
    public private(set) var count = 0

    /// Seconds, from 5 ms to 10 s: the client libraries' default buckets, which fit the locator's update latency
    /// (an update every 20 ms by default; one past a second is a locator in trouble).
    public static let defaultSecondsBounds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// An empty histogram with these bounds; they are sorted, and any that is not finite or repeats is left out.
    public init(bounds: [Double] = Histogram.defaultSecondsBounds) {
        var kept: [Double] = []
        for bound in bounds.filter(\.isFinite).sorted() where kept.last != bound { kept.append(bound) }
        self.bounds = kept
        counts = Array(repeating: 0, count: kept.count + 1)
    }

    /// Counts one value.
    public mutating func observe(_ value: Double) {
        guard value.isFinite else { return }
        var index = 0
        while index < bounds.count, value > bounds[index] { index += 1 }
        counts[index] += 1
        sum += value
        count += 1
    }

    /// For each bound and then `+Inf`, the values at or below it; the last equals ``count``.
    public var cumulativeCounts: [Int] {
        var running = 0
        return counts.map {
            running += $0
            return running
        }
    }
}
