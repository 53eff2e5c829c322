import TestFixtures
import Testing

@testable import WhereaboutsCore

@Suite("The grid filter's fixed lag", .ownThread)
struct FixedLagTests {
    /// 10 s standing at (3, 2), then 1 m/s around the west room and through the door into the east one.
    static let route = [
        Point(x: 3, y: 2), Point(x: 8, y: 2), Point(x: 8, y: 7), Point(x: 3, y: 7), Point(x: 9.3, y: 8.5),
        Point(x: 10.7, y: 8.5), Point(x: 17, y: 8.5), Point(x: 17, y: 2),
    ]

    static func truth(at time: Double) -> Point {
        var walked = max(time - 10, 0)
        for (from, to) in zip(route, route.dropFirst()) {
            let length = from.distance(to: to)
            if walked <= length { return from + (to - from) * (walked / length) }
            walked -= length
        }
        return route[route.count - 1]
    }

    struct Run {
        /// Each update's time, and the estimates (with their zone events) it gave.
        var updates: [(now: Double, estimates: [TagEstimate], events: [ZoneTransition])] = []
        var estimates: [TagEstimate] { updates.flatMap(\.estimates) }
    }

    /// One tag along the route, an update a second, with `lag` seconds of fixed lag.
    func walk(lag: Double, seed: UInt64, seconds: Int = 50) throws -> Run {
        let map = try FreeSpaceTrackingTests.map(blocksWalking: true)
        var configuration = LocatorEngine.Configuration()
        configuration.positioning = .grid
        configuration.grid.lag = lag
        var engine = LocatorEngine(map: map, configuration: configuration)
        let generator = ReadingGenerator(map: map)
        var random = SplitMix64(seed: seed)
        let tag = demoTag(1)
        var run = Run()
        for second in 0..<seconds {
            let now = 1_000_000 + Double(second)
            for (agentIndex, reading) in generator.readings(
                tag: tag, at: Self.truth(at: Double(second)), floor: 1, time: now, using: &random)
            {
                engine.ingest(reading, agentIndex: agentIndex, now: now)
            }
            let update = engine.update(now: now)
            run.updates.append((now, update.estimates, update.events))
        }
        return run
    }

    func meanError(_ run: Run) -> Double {
        let errors = run.estimates.map { $0.position.distance(to: Self.truth(at: $0.time - 1_000_000)) }
        return errors.reduce(0, +) / Double(max(errors.count, 1))
    }

    @Test("with a 1 s lag, each update is reported once, a second late, in order; zone events carry that time")
    func timing() throws {
        let run = try walk(lag: 1, seed: 1)
        let times = run.estimates.map(\.time)
        #expect(run.updates.first?.estimates.isEmpty == true, "nothing is a second old at the first update")
        for update in run.updates {
            for estimate in update.estimates { #expect(estimate.time == update.now - 1) }
            for event in update.events { #expect(event.time <= update.now - 1) }
        }
        #expect(times.count == run.updates.count - 1)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
        #expect(run.updates.flatMap(\.events).contains { $0.kind == .enter && $0.zone.minor == 2 }, "into the east")
        // Without a lag, every update reports itself.
        let prompt = try walk(lag: 0, seed: 1)
        for update in prompt.updates {
            #expect(update.estimates.map(\.time) == [update.now])
        }
    }

    @Test("a lag follows a walk more closely than the filter alone")
    func accuracy() throws {
        var filtered = 0.0
        var smoothed = 0.0
        var longer = 0.0
        for seed: UInt64 in 1...4 {
            filtered += meanError(try walk(lag: 0, seed: seed))
            smoothed += meanError(try walk(lag: 1, seed: seed))
            longer += meanError(try walk(lag: 2, seed: seed))
        }
        print(
            "fixed lag, mean error over 4 walks: \(filtered / 4) m filtered, \(smoothed / 4) m with 1 s, \(longer / 4) m with 2 s"
        )
        #expect(smoothed < filtered)
        #expect(longer < filtered)
    }

    @Test("with a 2 s lag, the newest estimate is of the newest update at least 2 s old, and the chain spans 3 updates")
    func target() throws {
        let run = try walk(lag: 2, seed: 3, seconds: 20)
        let last = try #require(run.estimates.last)
        #expect(last.time == 1_000_000 + 17)
        #expect(run.estimates.count == 18)
        #expect(run.estimates.allSatisfy { $0.accuracy.isFinite && $0.accuracy > 0 })
        // Smoothing over two later updates is not the same as over one: the lag is used, not only the delay.
        let one = try walk(lag: 1, seed: 3, seconds: 20)
        let shared = Dictionary(uniqueKeysWithValues: one.estimates.map { ($0.time, $0.position) })
        #expect(run.estimates.contains { estimate in shared[estimate.time].map { $0 != estimate.position } ?? false })
    }
}
