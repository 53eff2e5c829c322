import Testing
import WhereaboutsCore
import WhereaboutsSimulation
import WhereaboutsWire

@Suite("Accuracy report")
struct AccuracyReportTests {
    static let tag = TagIdentity.address(0xA1)
    static let other = TagIdentity.address(0xB2)

    static func truth(_ time: Double, _ x: Double, _ y: Double, floor: UInt16 = 1, tag: TagIdentity = tag)
        -> TruthRecord
    {
        TruthRecord(time: time, tag: tag, x: x, y: y, floor: floor)
    }

    static func position(
        _ time: Double, _ x: Double, _ y: Double, floor: UInt16 = 1, zone: UInt16? = nil, tag: TagIdentity = tag
    ) -> PositionRecord {
        PositionRecord(time: time, tag: tag, x: x, y: y, floor: floor, zone: zone, accuracy: 1)
    }

    @Test("errors against truth interpolated in time, with exact percentiles")
    func errors() {
        // Truth walks along x at 1 m/s; positions sit 0, 1, 2, 3, 4 m beside it.
        let truth = [Self.truth(0, 0, 0), Self.truth(10, 10, 0)]
        let positions = (0...4).map { Self.position(Double($0) * 2.5, Double($0) * 2.5, Double($0)) }
        let report = AccuracyReport(positions: positions, truth: truth)
        #expect(report.scored == 5)
        #expect(report.error?.median == 2)
        #expect(report.error?.mean == 2)
        #expect(abs((report.error?.p90 ?? 0) - 3.6) < 1e-12)
        #expect(abs((report.error?.p95 ?? 0) - 3.8) < 1e-12)
        #expect(report.error?.maximum == 4)
        #expect(report.floorAccuracy == 1)
        #expect(report.zoneAccuracy == nil, "no map, no zones")
        #expect(abs(report.tagHours - 10.0 / 3600) < 1e-12)
    }

    @Test("positions outside the truth's span or for unknown tags are not scored; floors are compared")
    func unscored() {
        let truth = [Self.truth(0, 0, 0), Self.truth(10, 0, 0)]
        let positions = [
            Self.position(-1, 0, 0), Self.position(5, 0, 0), Self.position(6, 0, 0, floor: 2),
            Self.position(11, 0, 0), Self.position(5, 0, 0, tag: Self.other),
        ]
        let report = AccuracyReport(positions: positions, truth: truth)
        #expect(report.scored == 2)
        #expect(report.unscored == 3)
        #expect(report.floorAccuracy == 0.5)
    }

    @Test("zone accuracy, zone changes per tag-hour and the delay to detect a change")
    func zones() throws {
        let map = try scenarioMap("open-office")
        // The tag stands in zone 1 for 30 s, crosses the corridor at t = 30 into zone 3, stays 30 s.
        var truth: [TruthRecord] = []
        for second in 0...60 { truth.append(Self.truth(Double(second), 5, second < 30 ? 3 : 12)) }
        // The locator follows 4 s late.
        var positions: [PositionRecord] = []
        for second in 0...60 {
            let late = second < 34
            positions.append(Self.position(Double(second), 5, late ? 3 : 12, zone: late ? 1 : 3))
        }
        let report = AccuracyReport(positions: positions, truth: truth, map: map)
        #expect(report.scored == 61)
        #expect(abs((report.zoneAccuracy ?? 0) - 57.0 / 61.0) < 1e-12)
        #expect(report.detectionDelay?.count == 1)
        #expect(report.detectionDelay?.median == 4)
        #expect(report.missedZoneChanges == 0)
        #expect(abs((report.trueZoneChangesPerTagHour ?? 0) - 60) < 1e-9, "one change in a minute")
        #expect(abs((report.reportedZoneChangesPerTagHour ?? 0) - 60) < 1e-9)

        // A locator that never notices misses the change.
        let stuck = positions.map { Self.position($0.time, 5, 3, zone: 1) }
        let missed = AccuracyReport(positions: stuck, truth: truth, map: map)
        #expect(missed.missedZoneChanges == 1)
        #expect(missed.detectionDelay == nil)
        #expect(missed.reportedZoneChangesPerTagHour == 0)
    }
}
