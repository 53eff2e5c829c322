import DetachedThread
import TestFixtures
import Testing
import WhereaboutsCore

/// Runs the engine's pieces of work on threads, as the runtime's runner does (the Core tests do not import the runtime).
private let threads = WorkRunner(name: "threads") { count, body in ForkJoin.run(count, body) }

/// An update may split its estimates among threads (`workers`). Each tag's estimate depends on its own state only,
/// so every output must be the same, bit for bit and in the same order, whatever the number of workers.
@Suite("Estimates split among workers (issue 16)", .ownThread)
struct EngineWorkersTests {
    /// Runs the same readings through engines that differ only in `workers`; returns every update of each.
    ///
    /// With `slices` above 1, each second is cut in that many updates, as the live locator's are: the readings of
    /// the agents whose index is `s` modulo `slices` come in the `s`th, with its time. A tag then waits out its
    /// estimate interval between batches, and one whose zone change is due is estimated with every batch.
    func updates(
        positioning: LocatorEngine.Configuration.Positioning, workers: [Int], tags: Int, seconds: Int,
        slices: Int = 1
    ) throws -> [[EngineUpdate]] {
        let map = try loadShippedMap("demo-office.json")
        let floor = try #require(map.floor(major: 1))
        let bounds = floor.outline.bounds
        var random = SplitMix64(seed: 16)
        func place() -> Point {
            while true {
                let point = Point(
                    x: bounds.minimum.x + Double.random(in: 0..<1, using: &random)
                        * (bounds.maximum.x - bounds.minimum.x),
                    y: bounds.minimum.y + Double.random(in: 0..<1, using: &random)
                        * (bounds.maximum.y - bounds.minimum.y))
                if floor.outline.contains(point) { return point }
            }
        }
        // A third walk from place to place at 1 m/s; the rest stand still. One falls silent after 5 s, to time out.
        var positions = (0..<tags).map { _ in place() }
        var goals = positions.map { _ in place() }
        var engines = workers.map { count in
            var configuration = LocatorEngine.Configuration()
            configuration.positioning = positioning
            configuration.workers = count
            configuration.runner = threads
            return LocatorEngine(map: map, configuration: configuration)
        }
        var results = Array(repeating: [EngineUpdate](), count: workers.count)
        let generator = ReadingGenerator(map: map)
        for second in 0..<seconds {
            let now = 1_000_000 + Double(second)
            for index in 0..<tags {
                if index % 3 == 0 {
                    let offset = Point(x: goals[index].x - positions[index].x, y: goals[index].y - positions[index].y)
                    let length = (offset.x * offset.x + offset.y * offset.y).squareRoot()
                    if length <= 1 {
                        positions[index] = goals[index]
                        goals[index] = place()
                    } else {
                        positions[index] = Point(
                            x: positions[index].x + offset.x / length, y: positions[index].y + offset.y / length)
                    }
                }
            }
            for slice in 0..<slices {
                let time = now + Double(slice) / Double(slices)
                for index in 0..<tags {
                    if index == 1, second >= 5 { continue }
                    let tag = TagIdentity.iBeacon(uuid: demoSite, major: 100, minor: UInt16(1_000 + index))
                    for (agentIndex, reading) in generator.readings(
                        tag: tag, at: positions[index], floor: 1, time: time, using: &random)
                    where agentIndex % slices == slice {
                        for engine in engines.indices {
                            engines[engine].ingest(reading, agentIndex: agentIndex, now: time)
                        }
                    }
                }
                for engine in engines.indices { results[engine].append(engines[engine].update(now: time)) }
            }
        }
        return results
    }

    func expectSame(_ results: [[EngineUpdate]], enoughForWorkers workers: Int) {
        let reference = results[0]
        // The split happens only with at least 64 tags per worker: make sure it did.
        #expect(reference.map(\.estimates.count).max() ?? 0 >= workers * 64)
        #expect(reference.contains { !$0.events.isEmpty }, "no zone changed: the comparison would miss the zones")
        #expect(reference.contains { !$0.lostTags.isEmpty }, "no tag timed out")
        for other in results.dropFirst() {
            #expect(other.count == reference.count)
            // Compared as a whole, each update by each part; a mismatch names the update rather than printing both.
            let differing = zip(reference, other).enumerated().compactMap { index, pair -> String? in
                let (a, b) = pair
                var parts: [String] = []
                if a.estimates != b.estimates { parts.append("estimates") }
                if a.events != b.events { parts.append("events") }
                if a.occupancyChanges != b.occupancyChanges { parts.append("occupancy") }
                if a.lostTags != b.lostTags { parts.append("lost tags") }
                return parts.isEmpty ? nil : "update \(index): \(parts.joined(separator: ", "))"
            }
            #expect(differing.isEmpty, "\(differing.count) updates differ, first \(differing.prefix(3))")
        }
    }

    @Test("trilateration: 1, 2 and 3 workers give the same estimates, events and occupancy")
    func trilateration() throws {
        expectSame(
            try updates(positioning: .trilateration, workers: [1, 2, 3], tags: 240, seconds: 50), enoughForWorkers: 3)
    }

    @Test("trilateration updated five times a second, as live: 1 and 2 workers give the same outputs")
    func trilaterationSliced() throws {
        expectSame(
            try updates(positioning: .trilateration, workers: [1, 2], tags: 400, seconds: 45, slices: 5),
            enoughForWorkers: 2)
    }

    @Test("grid filter: 1 and 2 workers give the same estimates, events and occupancy")
    func grid() throws {
        expectSame(try updates(positioning: .grid, workers: [1, 2], tags: 140, seconds: 40), enoughForWorkers: 2)
    }
}
