public import WhereaboutsCore
public import WhereaboutsWire

/// How well reported positions match the truth: position error, floor and zone accuracy, zone-change counts
/// and the delay to detect a zone change.
///
/// Truth is interpolated in time per tag (linearly between its samples; the floor of the earlier sample), so
/// positions need not fall on truth samples. Positions before a tag's first truth sample or after its last are
/// not scored.
public struct AccuracyReport: Sendable, Equatable {
    /// Summary statistics of a list of values.
    public struct Distribution: Sendable, Equatable {
        public var count: Int
        public var median: Double
        public var mean: Double
        public var p90: Double
        public var p95: Double
        public var maximum: Double

        /// Summarises values; nil when there are none.
        public init?(_ values: [Double]) {
            guard !values.isEmpty else { return nil }
            let sorted = values.sorted()
            count = sorted.count
            median = Self.percentile(sorted, 0.5)
            mean = sorted.reduce(0, +) / Double(sorted.count)
            p90 = Self.percentile(sorted, 0.9)
            p95 = Self.percentile(sorted, 0.95)
            maximum = sorted[sorted.count - 1]
        }

        /// The `fraction` percentile of sorted values, interpolated linearly between ranks.
        static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
            let rank = fraction * Double(sorted.count - 1)
            let low = Int(rank.rounded(.down))
            let high = min(low + 1, sorted.count - 1)
            return sorted[low] + (sorted[high] - sorted[low]) * (rank - Double(low))
        }
    }

    /// Positions scored against the truth.
    public var scored: Int
    /// Positions that could not be scored (no truth for the tag at that time).
    public var unscored: Int
    /// Horizontal error in metres (whatever the floor).
    public var error: Distribution?
    /// Share of scored positions whose error is within their own ``PositionRecord/accuracy``: about 0.68 when the
    /// accuracy is honest (it is the radius that holds the true position 68 % of the time).
    public var withinAccuracy: Double?
    /// Share of scored positions on the right floor.
    public var floorAccuracy: Double?
    /// Share of scored positions whose zone is the zone of the true position (none = none counts as right);
    /// nil without a map.
    public var zoneAccuracy: Double?
    /// Hours of scored tag time (each tag's span from first to last scored position).
    public var tagHours: Double
    /// Zone changes reported, per tag-hour (nil without a map or with no time).
    public var reportedZoneChangesPerTagHour: Double?
    /// Zone changes in the truth over the same spans, per tag-hour.
    public var trueZoneChangesPerTagHour: Double?
    /// Seconds from a true zone change to the first position reporting the new zone, for changes to a zone held
    /// at least ``minimumVisit`` seconds; only changes that were detected.
    public var detectionDelay: Distribution?
    /// True zone changes (held long enough) never reported while the tag stayed.
    public var missedZoneChanges: Int
    /// The calibration of zone probabilities: of the zones positions gave at least ``confidentProbability``, the
    /// share the tag was truly in (nil without a map or without such zones). A calibrated locator scores at least
    /// 0.8 here.
    public var confidentZoneAccuracy: Double?
    /// How many zones positions gave at least ``confidentProbability``.
    public var confidentZones: Int

    /// The probability from which a zone counts as confidently given, for ``confidentZoneAccuracy``.
    public static let confidentProbability = 0.8

    /// Zone visits shorter than this (seconds) do not count toward the detection delay: the zone hysteresis is
    /// designed to ignore them.
    public static let minimumVisit = 10.0

    /// Scores positions against truth, using the map (when given) for zones.
    public init(positions: [PositionRecord], truth: [TruthRecord], map: FloorMap? = nil) {
        let truthByTag = Dictionary(grouping: truth, by: \.tag).mapValues { samples in
            samples.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
        }
        let positionsByTag = Dictionary(grouping: positions, by: \.tag)
        let zoneFinder = map.map(ZoneFinder.init)
        var tally = Tally()
        for tag in positionsByTag.keys.sorted() {
            let reports = (positionsByTag[tag] ?? []).enumerated()
                .sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
            guard let samples = truthByTag[tag], let first = samples.first, let last = samples.last else {
                tally.unscored += reports.count
                continue
            }
            let inSpan = reports.filter { $0.time >= first.time && $0.time <= last.time }
            tally.unscored += reports.count - inSpan.count
            guard let start = inSpan.first?.time, let end = inSpan.last?.time else { continue }
            tally.seconds += end - start
            tally.score(inSpan, against: samples, zones: zoneFinder)
            guard let zoneFinder else { continue }
            // Zone changes: reported ones from the positions; true ones from the truth samples in the same span.
            tally.countZoneChanges(
                inSpan, truth: samples.filter { $0.time >= start && $0.time <= end }, zones: zoneFinder)
        }
        let errors = tally.errors
        scored = errors.count
        unscored = tally.unscored
        error = Distribution(errors)
        floorAccuracy = errors.isEmpty ? nil : Double(tally.floorHits) / Double(errors.count)
        withinAccuracy = errors.isEmpty ? nil : Double(tally.withinAccuracy) / Double(errors.count)
        zoneAccuracy = errors.isEmpty || map == nil ? nil : Double(tally.zoneHits) / Double(errors.count)
        tagHours = tally.seconds / 3600
        let perHour = map != nil && tally.seconds > 0
        reportedZoneChangesPerTagHour = perHour ? Double(tally.reportedChanges) / tagHours : nil
        trueZoneChangesPerTagHour = perHour ? Double(tally.trueChanges) / tagHours : nil
        detectionDelay = Distribution(tally.delays)
        missedZoneChanges = tally.missed
        confidentZones = tally.confident
        confidentZoneAccuracy = tally.confident > 0 ? Double(tally.confidentHits) / Double(tally.confident) : nil
    }

    /// The counts and values the report is made of, added up tag by tag.
    private struct Tally {
        var errors: [Double] = []
        var floorHits = 0
        var withinAccuracy = 0
        var zoneHits = 0
        var unscored = 0
        var seconds = 0.0
        var reportedChanges = 0
        var trueChanges = 0
        var delays: [Double] = []
        var missed = 0
        var confident = 0
        var confidentHits = 0

        /// Scores one tag's positions, in time order, against its truth at their times: the error, the floor, and
        /// (with zones) the zone and the zones given confidently.
        mutating func score(
            _ reports: [PositionRecord], against samples: [TruthRecord], zones zoneFinder: ZoneFinder?
        ) {
            var cursor = 0
            for report in reports {
                let truth = AccuracyReport.interpolate(samples, at: report.time, cursor: &cursor)
                let error = Point(x: report.x, y: report.y).distance(to: Point(x: truth.x, y: truth.y))
                errors.append(error)
                if error <= report.accuracy { withinAccuracy += 1 }
                if truth.floor == report.floor { floorHits += 1 }
                if let zoneFinder {
                    let trueZone = zoneFinder.zone(at: Point(x: truth.x, y: truth.y), floor: truth.floor)
                    let reported = report.zone.map { ZoneKey(floor: report.floor, minor: $0) }
                    if trueZone == reported { zoneHits += 1 }
                    // The zones the position lists, or else (a recording from before lists existed) its own zone.
                    let given =
                        report.zones.isEmpty
                        ? report.zone.map { [ZoneShare(zone: $0, probability: report.probability ?? 0)] } ?? []
                        : report.zones
                    for share in given where share.probability >= AccuracyReport.confidentProbability {
                        confident += 1
                        if trueZone == ZoneKey(floor: report.floor, minor: share.zone) { confidentHits += 1 }
                    }
                }
            }
        }

        /// Counts one tag's zone changes, reported and true, over the span of its positions (`truth` is its truth
        /// in that span), and how long each true change held long enough took to be reported, or that it never was.
        mutating func countZoneChanges(
            _ reports: [PositionRecord], truth: [TruthRecord], zones zoneFinder: ZoneFinder
        ) {
            let reportedZones = reports.map { report in report.zone.map { ZoneKey(floor: report.floor, minor: $0) } }
            reportedChanges += zip(reportedZones, reportedZones.dropFirst()).filter { $0 != $1 }.count
            let trueZones = truth.map { zoneFinder.zone(at: Point(x: $0.x, y: $0.y), floor: $0.floor) }
            var visits: [(zone: ZoneKey?, start: Double, end: Double)] = []
            for (sample, zone) in zip(truth, trueZones) {
                if let lastVisit = visits.last, lastVisit.zone == zone {
                    visits[visits.count - 1].end = sample.time
                } else {
                    if !visits.isEmpty { visits[visits.count - 1].end = sample.time }
                    visits.append((zone, sample.time, sample.time))
                }
            }
            trueChanges += max(visits.count - 1, 0)
            for visit in visits.dropFirst() where visit.end - visit.start >= AccuracyReport.minimumVisit {
                let detected = zip(reports, reportedZones).first { report, zone in
                    report.time >= visit.start && report.time <= visit.end && zone == visit.zone
                }
                if let detected {
                    delays.append(detected.0.time - visit.start)
                } else {
                    missed += 1
                }
            }
        }
    }

    /// The truth at `time`, from samples sorted by time; `cursor` remembers where the last search ended.
    static func interpolate(_ samples: [TruthRecord], at time: Double, cursor: inout Int) -> TruthRecord {
        while cursor + 1 < samples.count, samples[cursor + 1].time <= time { cursor += 1 }
        let before = samples[cursor]
        guard cursor + 1 < samples.count, time > before.time else { return before }
        let after = samples[cursor + 1]
        let span = after.time - before.time
        guard span > 0, after.floor == before.floor else { return before }
        let fraction = (time - before.time) / span
        return TruthRecord(
            time: time,
            tag: before.tag,
            x: before.x + (after.x - before.x) * fraction,
            y: before.y + (after.y - before.y) * fraction,
            floor: before.floor
        )
    }
}

/// Finds the zone a point is in.
struct ZoneFinder: Sendable {
    let zonesByFloor: [UInt16: [Zone]]

    init(map: FloorMap) {
        zonesByFloor = Dictionary(grouping: map.zones, by: \.floor)
    }

    func zone(at point: Point, floor: UInt16) -> ZoneKey? {
        zonesByFloor[floor]?.first { $0.polygon.contains(point) }?.key
    }
}
