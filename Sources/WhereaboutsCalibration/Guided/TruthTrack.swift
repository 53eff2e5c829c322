public import WhereaboutsCore
public import WhereaboutsWire

/// Where each tag really was, interpolated in time as ``AccuracyReport`` does: linearly between a tag's truth
/// samples, on the earlier sample's floor. Times outside a tag's samples, or inside a gap between samples longer
/// than ``maximumGap``, have no truth (a survey paused, or the robot was carried elsewhere), unless both samples are
/// at the same place on the same floor: a reference point's two lines (arrival and leaving, docs/calibration.md) hold
/// the truth between them however long the tag stood there.
public struct TruthTrack: Sendable {
    /// A gap between truth samples longer than this (seconds) is not interpolated across.
    public let maximumGap: Double
    private var samplesByTag: [TagIdentity: [TruthRecord]]

    /// Indexes truth records by tag, sorted by time (file order among equal times).
    public init(_ records: [TruthRecord], maximumGap: Double = 5) {
        self.maximumGap = maximumGap
        samplesByTag = Dictionary(grouping: records.filter { $0.time.isFinite && $0.x.isFinite && $0.y.isFinite }) {
            $0.tag
        }
        .mapValues { samples in
            samples.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
        }
    }

    /// The tags that have truth.
    public var tags: [TagIdentity] { samplesByTag.keys.sorted() }

    /// Where `tag` was at `time`, or nil when that is not known.
    public func position(of tag: TagIdentity, at time: Double) -> (point: Point, floor: UInt16)? {
        guard let samples = samplesByTag[tag], let first = samples.first, let last = samples.last,
            time >= first.time, time <= last.time
        else { return nil }
        // The last sample at or before `time`.
        var low = 0
        var high = samples.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if samples[middle].time <= time { low = middle } else { high = middle - 1 }
        }
        let before = samples[low]
        guard low + 1 < samples.count, time > before.time else {
            return (Point(x: before.x, y: before.y), before.floor)
        }
        let after = samples[low + 1]
        let span = after.time - before.time
        let stood = after.x == before.x && after.y == before.y && after.floor == before.floor
        guard span <= maximumGap || stood else { return nil }
        guard span > 0, after.floor == before.floor else { return (Point(x: before.x, y: before.y), before.floor) }
        let fraction = (time - before.time) / span
        return (
            Point(x: before.x + (after.x - before.x) * fraction, y: before.y + (after.y - before.y) * fraction),
            before.floor
        )
    }
}
