public import WhereaboutsCore
public import WhereaboutsWire

/// Gathers the adverts one agent hears during a window and turns them into one reading per tag, as the real
/// agent does: the count, a robust mean, the variance, and the last measured power the tag advertised.
///
/// Tags come out in the order they were first heard in the window, so that the same adverts always give the
/// same batch.
public struct AdvertAggregator: Sendable {
    private struct Pending: Sendable {
        var tag: TagIdentity
        var rssi: [Double]
        var power: Int?
    }

    private var pending: [Pending] = []
    private var indexByTag: [TagIdentity: Int] = [:]

    public init() {}

    /// Whether no advert is waiting.
    public var isEmpty: Bool { pending.isEmpty }

    /// Takes one advert.
    public mutating func add(tag: TagIdentity, rssi: Double, power: Int?) {
        if let index = indexByTag[tag] {
            pending[index].rssi.append(rssi)
            if let power { pending[index].power = power }
        } else {
            indexByTag[tag] = pending.count
            pending.append(Pending(tag: tag, rssi: [rssi], power: power))
        }
    }

    /// Ends the window: one reading per tag heard, stamped with the window's end, and starts the next window.
    public mutating func flush(windowEnd: Double) -> [ReadingBatch.Reading] {
        defer {
            pending.removeAll(keepingCapacity: true)
            indexByTag.removeAll(keepingCapacity: true)
        }
        return pending.map { entry in
            let summary = Self.summarize(entry.rssi)
            return ReadingBatch.Reading(
                tag: entry.tag,
                time: windowEnd,
                rssi: summary.mean.rounded(toDecimals: 2),
                count: summary.count,
                variance: summary.variance.map { $0.rounded(toDecimals: 2) },
                power: entry.power
            )
        }
    }

    /// A robust summary of a window's RSSI values: adverts more than 2.5 robust sigmas from the median are
    /// dropped (a reflection, a collision), then the rest are averaged.
    ///
    /// - Returns: the mean of the kept values, their sample variance (nil for a single value), and how many
    ///   were kept.
    public static func summarize(_ values: [Double]) -> (mean: Double, variance: Double?, count: Int) {
        guard !values.isEmpty else { return (0, nil, 0) }
        var kept = values
        if values.count >= 4 {
            let median = Self.median(values)
            let deviation = Self.median(values.map { abs($0 - median) })
            // 1.4826 turns a median absolute deviation into a Gaussian sigma; never trust less than 1.5 dB of spread.
            let limit = 2.5 * max(1.4826 * deviation, 1.5)
            kept = values.filter { abs($0 - median) <= limit }
            if kept.isEmpty { kept = values }
        }
        let count = kept.count
        let mean = kept.reduce(0, +) / Double(count)
        guard count >= 2 else { return (mean, nil, count) }
        let variance = kept.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(count - 1)
        return (mean, variance, count)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
