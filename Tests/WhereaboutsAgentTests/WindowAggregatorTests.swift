import Testing
import WhereaboutsAdvertising
import WhereaboutsAgent

@Suite("Window aggregation")
struct WindowAggregatorTests {
    @Test("windows are aligned to multiples of their length in Unix time, whoever starts when")
    func alignment() {
        let slot = WindowSlot(containing: 1_764_475_200.7, length: 1)
        #expect(slot.start == 1_764_475_200)
        #expect(slot.end == 1_764_475_201)
        let five = WindowSlot(containing: 1_764_475_203.2, length: 5)
        #expect(five.start == 1_764_475_200)
        #expect(five.end == 1_764_475_205)
        #expect(WindowSlot(containing: 1_764_475_205, length: 5).start == 1_764_475_205)
        // Two agents started at different moments share boundaries.
        var early = WindowAggregator(configuration: .init(windowLength: 2))
        var late = WindowAggregator(configuration: .init(windowLength: 2))
        _ = early.advance(to: 1000.1)
        _ = late.advance(to: 1001.9)
        #expect(early.current == late.current)
        let closedEarly = early.advance(to: 1002.0)
        #expect(closedEarly.map(\.slot.start) == [1000])
    }

    @Test("a window closes when time reaches its end, and empty windows close too")
    func closing() throws {
        var aggregator = WindowAggregator()
        let none = aggregator.add(sighting(1, rssi: -60), at: 100.2) + aggregator.add(sighting(1, rssi: -62), at: 100.9)
        #expect(none.isEmpty)
        let closed = aggregator.advance(to: 103.5)
        #expect(closed.map(\.slot.start) == [100, 101, 102])
        let first = try #require(closed.first)
        #expect(first.aggregates.map(\.tag) == [tag(1)])
        #expect(first.aggregates.first?.count == 2)
        #expect(first.aggregates.first?.rssi == -61)
        #expect(closed.dropFirst().allSatisfy { $0.aggregates.isEmpty })
        let last = aggregator.flush()
        let afterLast = aggregator.flush()
        #expect(last?.slot.start == 103)
        #expect(afterLast == nil)
    }

    @Test("the robust mean ignores outliers outside the IQR fence")
    func robustMean() throws {
        let values: [Double] = [-60, -61, -59, -60, -62, -58, -60, -95]
        let statistics = try #require(RobustStatistics(values))
        #expect(statistics.used == 7)
        #expect(statistics.mean == -60)
        // The plain mean would be pulled to about -64.4.
        #expect(abs(values.reduce(0, +) / Double(values.count) - statistics.mean) > 4)
    }

    @Test("with fewer than four values the median stands in for the mean")
    func medianFallback() throws {
        let three = try #require(RobustStatistics([-60, -90, -61]))
        #expect(three.mean == -61)
        #expect(three.used == 3)
        let two = try #require(RobustStatistics([-60, -70]))
        #expect(two.mean == -65)
        let one = try #require(RobustStatistics([-70]))
        #expect(one.mean == -70)
        #expect(one.variance == nil)
        #expect(RobustStatistics([]) == nil)
    }

    @Test("variance is the sample variance of the values the mean stands for")
    func variance() throws {
        let statistics = try #require(RobustStatistics([-58, -60, -62, -60]))
        // Mean -60; squares 4 + 0 + 4 + 0 = 8; n - 1 = 3.
        #expect(statistics.mean == -60)
        let variance = try #require(statistics.variance)
        #expect(abs(variance - 8.0 / 3.0) < 1e-12)
        let constant = try #require(RobustStatistics([-70, -70, -70, -70, -70]))
        #expect(constant.variance == 0)
    }

    @Test("a window holds at most the configured number of tags and counts the overflow")
    func overflowCap() throws {
        var aggregator = WindowAggregator(configuration: .init(maximumTags: 3))
        for minor in 0..<5 {
            _ = aggregator.add(sighting(UInt16(minor), rssi: -60), at: 10.1)
        }
        // A known tag is still counted once the window is full.
        _ = aggregator.add(sighting(0, rssi: -64), at: 10.2)
        #expect(aggregator.tagCount == 3)
        #expect(aggregator.overflow == 2)
        let closed = aggregator.advance(to: 11)
        let window = try #require(closed.first)
        #expect(window.aggregates.count == 3)
        #expect(window.overflow == 2)
        #expect(window.aggregates.first { $0.tag == tag(0) }?.count == 2)
        // The next window starts with an empty table and no overflow of its own.
        _ = aggregator.add(sighting(4, rssi: -60), at: 11.5)
        let next = aggregator.flush()
        #expect(next?.overflow == 0)
        #expect(aggregator.overflow == 2)
    }

    @Test("the last measured power and telemetry are kept per tag")
    func lastValues() throws {
        var aggregator = WindowAggregator()
        let telemetry = BeaconTelemetry(batteryMillivolts: 2900, temperatureCelsius: 21.5)
        _ = aggregator.add(sighting(7, rssi: -60, power: -59), at: 50.1)
        _ = aggregator.add(sighting(7, rssi: -61, power: -61, telemetry: telemetry), at: 50.3)
        _ = aggregator.add(sighting(7, rssi: -62, power: nil), at: 50.4)
        let flushed = aggregator.flush()
        let aggregate = try #require(flushed?.aggregates.first)
        #expect(aggregate.measuredPower == -61)
        #expect(aggregate.telemetry == telemetry)
        #expect(aggregate.lastHeard == 50.4)
        #expect(aggregate.count == 3)
    }

    @Test("a late sighting joins the current window; a clock stepping back starts a new one")
    func clockSteps() throws {
        var aggregator = WindowAggregator()
        _ = aggregator.add(sighting(1, rssi: -60), at: 200.5)
        let late = aggregator.add(sighting(1, rssi: -60), at: 199.9)
        #expect(late.isEmpty)
        let stepped = aggregator.add(sighting(1, rssi: -60), at: 150.2)
        #expect(stepped.map(\.slot.start) == [200])
        #expect(stepped.first?.aggregates.first?.count == 2)
        #expect(aggregator.current?.start == 150)
    }

    @Test("a long jump forward closes at most the catch-up limit of empty windows")
    func catchUpLimit() {
        var aggregator = WindowAggregator(configuration: .init(maximumCatchUpWindows: 5))
        _ = aggregator.advance(to: 0.5)
        let closed = aggregator.advance(to: 100.5)
        #expect(closed.count == 6)
        #expect(closed.first?.slot.start == 0)
        #expect(closed.last?.slot.start == 99)
        #expect(aggregator.skippedWindows == 94)
    }

    @Test("the samples kept per tag are bounded while the count goes on")
    func boundedSamples() throws {
        var aggregator = WindowAggregator(configuration: .init(samplesPerTag: 4))
        for _ in 0..<10 { _ = aggregator.add(sighting(1, rssi: -90), at: 1.1) }
        for _ in 0..<4 { _ = aggregator.add(sighting(1, rssi: -50), at: 1.2) }
        let flushed = aggregator.flush()
        let aggregate = try #require(flushed?.aggregates.first)
        #expect(aggregate.count == 14)
        #expect(aggregate.rssi == -50)
    }
}
