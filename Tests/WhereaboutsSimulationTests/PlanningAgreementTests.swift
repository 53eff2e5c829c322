import Foundation
import TestFixtures
import Testing
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsSimulation
import WhereaboutsWire

/// Issue 46, item 3: the planning view's expected accuracy (``AccuracyPlan``, made from the map alone) agrees with
/// what the simulator measures, zone by zone, on the demo office and the four harness scenarios.
///
/// Per zone, the measured figure is the 68th percentile of the errors of the fixes whose truth lies in the zone (the
/// plan's accuracy is the radius that should hold 68 % of fixes), beside the mean accuracy the locator published for
/// them. The plan's one fitted constant, ``AccuracyPlan/Configuration/boundScale``, was fitted on seed 1 (the plan's
/// zone means against the published ones); this test runs seed 46, which the fit never saw.
///
/// Why these bounds. A zone's 68th percentile rests on a few visits by a few walkers, each error lasting for many
/// seconds: simulated again with another seed, the same zone's figure moves by up to 1.7 times (two floors, west
/// room upstairs: 2.74 m at seed 1, 4.42 m at seed 46), and the zones' order agrees with itself across the two seeds
/// at a Spearman correlation of only 0.59. So a factor of 2 either way, which the ratios (0.61–1.50 at seed 1,
/// 0.69–1.58 at seed 46) keep with room; the plan predicts the published accuracy much more closely (0.87–1.11 at
/// both seeds), held to 0.8–1.25; and the plan must rank the zones' measured errors at 0.3 or better (0.32 at seed 1,
/// 0.47 at seed 46; the locator's own published accuracy ranks them at 0.42 and 0.50).
@Suite("The planning view agrees with the simulator", .ownThread)
struct PlanningAgreementTests {
    /// Zones with fewer fixes than this are printed, not held to the factor: their 68th percentile is too noisy.
    static let minimumFixes = 150
    /// Measured / expected within [1 / factor, factor] for every zone with enough fixes.
    static let factor = 2.0
    /// Published / expected within this range for the same zones.
    static let publishedRange = 0.8...1.25
    /// Spearman's rank correlation of expected against measured over all those zones together, at least.
    static let minimumRankCorrelation = 0.3

    /// One zone's figures.
    struct ZoneRow {
        var map: String
        var zone: Zone
        var fixes: Int
        var measured: Double
        var published: Double
        var expected: Double?
    }

    /// The simulation's seed: 46, or PLAN_SEED (the fit's was 1: `PLAN_SEED=1 swift test --filter PlanningAgreement`).
    static var seed: UInt64 { ProcessInfo.processInfo.environment["PLAN_SEED"].flatMap { UInt64($0) } ?? 46 }

    static let maps = ["demo-office", "open-office", "walled-rooms", "two-floors", "sparse-agents"]

    static func map(_ name: String) throws -> FloorMap {
        name == "demo-office" ? try shippedMap("demo-office.json") : try scenarioMap(name)
    }

    @Test("per zone, the simulator's 68th-percentile error is within a factor of 2 of the plan's expected accuracy")
    func agreement() throws {
        var rows: [ZoneRow] = []
        for name in Self.maps {
            rows += try Self.zoneRows(name: name, map: try Self.map(name), seed: Self.seed)
        }
        print("zone                               fixes  measured p68  published mean  expected  measured/expected")
        for row in rows {
            let ratio = row.expected.map { fixed(row.measured / $0) } ?? "-"
            print(
                "\(row.map)/\(row.zone.floor)/\(row.zone.name)".rightPadded(34)
                    + "\(row.fixes)".leftPadded(6) + fixed(row.measured).leftPadded(14)
                    + fixed(row.published).leftPadded(16) + (row.expected.map(fixed) ?? "-").leftPadded(10)
                    + ratio.leftPadded(19))
        }
        let held = rows.filter { $0.fixes >= Self.minimumFixes && $0.expected != nil }
        #expect(held.count >= 25, "only \(held.count) zones with \(Self.minimumFixes) fixes or more")
        for row in held {
            let expected = row.expected ?? 1
            #expect(
                row.measured / expected >= 1 / Self.factor && row.measured / expected <= Self.factor,
                "\(row.map)/\(row.zone.name): measured \(fixed(row.measured)) m against expected \(fixed(expected)) m")
            #expect(
                Self.publishedRange.contains(row.published / expected),
                "\(row.map)/\(row.zone.name): published \(fixed(row.published)) m against expected \(fixed(expected)) m"
            )
        }
        let expected = held.map { $0.expected ?? 0 }
        let measured = held.map { $0.measured / ($0.expected ?? 1) }.sorted()
        let published = held.map { $0.published / ($0.expected ?? 1) }.sorted()
        let correlation = spearman(expected, held.map(\.measured))
        print(
            "planning agreement: \(held.count) zones; measured / expected \(fixed(measured.first ?? 0))–"
                + "\(fixed(measured.last ?? 0)), median \(fixed(measured[measured.count / 2])); published / expected "
                + "\(fixed(published.first ?? 0))–\(fixed(published.last ?? 0)); Spearman expected-measured "
                + "\(fixed(correlation)), expected-published \(fixed(spearman(expected, held.map(\.published)))), "
                + "published-measured \(fixed(spearman(held.map(\.published), held.map(\.measured))))")
        #expect(correlation >= Self.minimumRankCorrelation, "rank correlation \(correlation)")
        #expect(spearman(expected, held.map(\.published)) >= 0.75, "the plan ranks zones as the locator publishes")
    }

    /// Simulates the map's walkers, replays the readings through the locator, and scores its fixes by the zone
    /// their truth is in.
    static func zoneRows(name: String, map: FloorMap, seed: UInt64) throws -> [ZoneRow] {
        var configuration = SimulationConfiguration()
        configuration.tagCount = 8
        configuration.duration = 900
        var simulator = try Simulator(map: map, configuration: configuration, seed: seed)
        var readings: [RecordedReading] = []
        var truth: [TruthRecord] = []
        while let window = simulator.nextWindow() {
            for batch in window.batches { readings += batch.recordedReadings }
            truth += window.truth
        }
        let (output, _) = LocatorReplay.run(map: map, readings: readings)
        let truthAt = Dictionary(
            truth.map { (TruthKey(tag: $0.tag, time: $0.time), $0) }, uniquingKeysWith: { first, _ in first })
        var errors: [ZoneKey: [Double]] = [:]
        var published: [ZoneKey: [Double]] = [:]
        for position in output.positions {
            // The locator updates at the simulator's window ends, where the truth is sampled.
            guard let real = truthAt[TruthKey(tag: position.tag, time: position.time)] else { continue }
            let point = Point(x: real.x, y: real.y)
            guard let zone = map.zones.first(where: { $0.floor == real.floor && $0.polygon.contains(point) }) else {
                continue
            }
            errors[zone.key, default: []].append(point.distance(to: Point(x: position.x, y: position.y)))
            published[zone.key, default: []].append(position.accuracy)
        }
        #expect(!errors.isEmpty, "\(name): no fix matched the truth")
        let plans = AccuracyPlan.floors(of: map)
        return map.zones.compactMap { zone in
            guard let zoneErrors = errors[zone.key], !zoneErrors.isEmpty else { return nil }
            let accuracy = published[zone.key] ?? []
            let expected = plans.first { $0.floor == zone.floor }?.zones.first { $0.key == zone.key }?.accuracy
            return ZoneRow(
                map: name, zone: zone, fixes: zoneErrors.count, measured: percentile(zoneErrors, 0.68),
                published: accuracy.reduce(0, +) / Double(max(accuracy.count, 1)), expected: expected)
        }
    }
}

/// A truth sample's key: the tag and the window end (to the millisecond, as the recordings round times).
private struct TruthKey: Hashable {
    var tag: TagIdentity
    var millisecond: Int64

    init(tag: TagIdentity, time: Double) {
        self.tag = tag
        millisecond = Int64((time * 1000).rounded())
    }
}

/// The `fraction` percentile of `values`, interpolated between order statistics.
func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let position = fraction * Double(sorted.count - 1)
    let below = Int(position.rounded(.down))
    let above = min(below + 1, sorted.count - 1)
    return sorted[below] + (sorted[above] - sorted[below]) * (position - Double(below))
}

/// Spearman's rank correlation of two samples of the same length (tied values share their mean rank).
func spearman(_ a: [Double], _ b: [Double]) -> Double {
    func ranks(_ values: [Double]) -> [Double] {
        let order = values.indices.sorted { values[$0] < values[$1] }
        var ranks = [Double](repeating: 0, count: values.count)
        var start = 0
        while start < order.count {
            var end = start
            while end + 1 < order.count, values[order[end + 1]] == values[order[start]] { end += 1 }
            for index in start...end { ranks[order[index]] = Double(start + end) / 2 }
            start = end + 1
        }
        return ranks
    }
    let (ra, rb) = (ranks(a), ranks(b))
    let n = Double(a.count)
    guard n > 1 else { return 0 }
    let meanA = ra.reduce(0, +) / n
    let meanB = rb.reduce(0, +) / n
    var covariance = 0.0
    var varianceA = 0.0
    var varianceB = 0.0
    for (x, y) in zip(ra, rb) {
        covariance += (x - meanA) * (y - meanB)
        varianceA += (x - meanA) * (x - meanA)
        varianceB += (y - meanB) * (y - meanB)
    }
    return varianceA > 0 && varianceB > 0 ? covariance / (varianceA * varianceB).squareRoot() : 0
}

/// Two decimals.
private func fixed(_ value: Double) -> String { "\((value * 100).rounded() / 100)" }

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }

    fileprivate func rightPadded(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
