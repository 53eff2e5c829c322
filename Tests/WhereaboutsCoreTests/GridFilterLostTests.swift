import TestFixtures
import Testing
import WhereaboutsMapFile

@testable import WhereaboutsCore

/// Issue 45, item 4: the power prior of a tag the map names, and a tag whose readings its posterior cannot explain.
@Suite("The grid filter's power prior and lost tags", .ownThread)
struct GridFilterLostTests {

    let map: FloorMap
    let grid: FloorGrid

    init() throws {
        // Two rooms of 10 × 10 m side by side, three agents in each, no walls.
        map = try twoRoomsMap()
        let floor = try #require(map.floor(major: 1))
        grid = FloorGrid(
            floor: floor, map: map, zones: map.zones(onFloor: 1), walls: [], obstacles: [], barriers: [],
            radio: RadioConstants(map: map), configuration: GridFilter.Configuration())
    }

    /// Every agent's reading of a tag at `point`, as loud as the path loss makes it (no noise).
    func observations(at point: Point) -> [GridFilter.Observation] {
        map.agents.indices.map { agent in
            let height = map.agents[agent].height - map.model.tagHeight
            let planar = map.agents[agent].position.distance(to: point)
            let distance = (planar * planar + height * height).squareRoot()
            return GridFilter.Observation(slot: grid.slotOfAgent[agent], level: -20 * logarithm10(max(distance, 1)))
        }
    }

    @Test("a tag whose power the map names keeps its power offset within that sigma; another learns it from 10 dB")
    func powerPrior() throws {
        var filter = GridFilter(configuration: GridFilter.Configuration())
        var named: GridPosterior?
        var unnamed: GridPosterior?
        let readings = observations(at: Point(x: 5, y: 5))
        _ = try #require(
            filter.update(
                &named, observations: readings, loudest: nil, powerSigma: 3, grids: [grid], gridIndex: 0, now: 0))
        _ = try #require(
            filter.update(&unnamed, observations: readings, loudest: nil, grids: [grid], gridIndex: 0, now: 0))
        let namedVariance = try #require(named?.offsetVariance)
        let unnamedVariance = try #require(unnamed?.offsetVariance)
        #expect(namedVariance <= 9)
        #expect(unnamedVariance > 9)
    }

    /// Two rooms of 10 × 10 m with a wall between them at x = 10 that walking cannot cross except by a door at its
    /// north end (y 9–10), and that costs the radio 6 dB; three agents in each room.
    static func walledMap() throws -> FloorMap {
        try twoRoomsMap(
            #""walls": [{"floor": 1, "from": [10, 0], "to": [10, 10], "loss": 6, "blocks_walking": true, "doors": [{"at": [10, 9.5], "width": 1}]}]"#
        )
    }

    /// Per second: the estimate's error and its published accuracy, for a tag whose readings come from `first` for
    /// `settle` seconds, then from `second`.
    func lostRun(
        _ grid: GridFilter.Configuration, first: Point, second: Point, settle: Int, seconds: Int, seed: UInt64
    ) throws -> [(error: Double, accuracy: Double)] {
        let map = try Self.walledMap()
        var configuration = LocatorEngine.Configuration()
        configuration.positioning = .grid
        configuration.grid = grid
        configuration.estimateInterval = 1
        configuration.stillEstimateInterval = 1
        var engine = LocatorEngine(map: map, configuration: configuration)
        let generator = ReadingGenerator(map: map)
        var random = SplitMix64(seed: seed)
        let tag = demoTag(1)
        var result: [(error: Double, accuracy: Double)] = []
        for index in 0..<seconds {
            let now = 1_000_000 + Double(index)
            let truth = index < settle ? first : second
            for (agentIndex, reading) in generator.readings(tag: tag, at: truth, floor: 1, time: now, using: &random) {
                engine.ingest(reading, agentIndex: agentIndex, now: now)
            }
            let estimate = try #require(engine.update(now: now).estimates.first)
            result.append((estimate.position.distance(to: truth), estimate.accuracy))
        }
        return result
    }

    /// How a tag fares, on one seed, whose readings come from (15, 3) in the east room for 20 s and then from
    /// (5, 3) in the west room: the estimate, settled in the east, can reach the west only by the door 7 m north,
    /// and the readings pin it against the wall near (10.3, 3), about 5 m from the truth, where the loudest agent
    /// (w3 or e3) is 2–3 m away: the rule that restarts a window heard loudest at a far agent (15 m) never fires.
    struct LostRun {
        /// Seconds after the switch until the error is first under 2 m (nil: not in 20 s).
        var back: Int?
        /// The mean published accuracy over the 10 s before the switch, and over the seconds it was wrong after.
        var settledAccuracy: Double
        var wrongAccuracy: Double
        /// The mean error over the seconds it was wrong.
        var wrongError: Double
    }

    func lost(_ configuration: GridFilter.Configuration, seed: UInt64) throws -> LostRun {
        let run = try lostRun(
            configuration, first: Point(x: 15, y: 3), second: Point(x: 5, y: 3), settle: 20, seconds: 40, seed: seed)
        let back = run.indices.first { $0 >= 20 && run[$0].error < 2 }.map { $0 - 20 }
        let wrong = run[20..<(20 + max(back ?? 20, 1))]
        func mean(_ values: some Collection<Double>) -> Double { values.reduce(0, +) / Double(values.count) }
        return LostRun(
            back: back, settledAccuracy: mean(run[10..<20].map(\.accuracy)), wrongAccuracy: mean(wrong.map(\.accuracy)),
            wrongError: mean(wrong.map(\.error)))
    }

    @Test(
        "an estimate pinned behind a wall its readings contradict restarts within seconds; without the misfit rule it stays"
    )
    func lostBehindWall() throws {
        var off = GridFilter.Configuration()
        off.lostMisfit = .infinity
        // And no re-seeding (``reseedBringsBack()``), which brings the estimate back by another way.
        off.reseedMisfit = .infinity
        let seeds: [UInt64] = Array(1...16)
        let with = try seeds.map { try lost(GridFilter.Configuration(), seed: $0) }
        let without = try seeds.map { try lost(off, seed: $0) }
        for (seed, (on, off)) in zip(seeds, zip(with, without)) {
            print(
                "lost behind a wall, seed \(seed): back after \(on.back.map(String.init) ?? "-") s with the rule, "
                    + "\(off.back.map(String.init) ?? "-") s without; accuracy settled \(on.settledAccuracy) m, while "
                    + "wrong \(on.wrongAccuracy) m with the rule, \(off.wrongAccuracy) m without (error \(off.wrongError) m)"
            )
        }
        // The construction holds: the estimate is about 5 m off once the readings switch.
        #expect(without.allSatisfy { $0.wrongError > 4 })
        // With the rule, most seeds are back within 5 s and every one within 20 s (measured: 9 of 16 within 5 s,
        // the slowest 14 s); without it, none within 5 s and most not within 20 s (measured: 12 of 16).
        let quickWith = with.filter { ($0.back ?? 99) <= 5 }.count
        let quickWithout = without.filter { ($0.back ?? 99) <= 5 }.count
        #expect(quickWith >= 8, "\(quickWith) of \(seeds.count) back within 5 s with the rule")
        #expect(with.allSatisfy { $0.back != nil })
        #expect(quickWithout == 0)
        #expect(without.filter { $0.back == nil }.count >= 10)
        // Issue 45, 4c: while wrong, the published accuracy grows well above its settled value. The posterior pinned
        // against the wall is narrower than when settled, so widening its spread by the misfit alone left the
        // accuracy (mostly the model's term) at 2.4–3.5 m against an error of about 6 m (rule off: 2.74 m while wrong
        // against 2.48 m settled); a surprising update scales the whole accuracy by √ of its misfit.
        func average(_ runs: [LostRun], _ value: KeyPath<LostRun, Double>) -> Double {
            runs.map { $0[keyPath: value] }.reduce(0, +) / Double(runs.count)
        }
        let settled = average(with, \.settledAccuracy)
        let wrong = average(with, \.wrongAccuracy)
        #expect(average(without, \.wrongAccuracy) < 1.3 * average(without, \.settledAccuracy))
        #expect(wrong > 1.5 * settled, "accuracy settled \(settled) m, while wrong \(wrong) m")
    }

    @Test("a re-seed after readings that fit badly brings back an estimate pinned behind a wall, without a restart")
    func reseedBringsBack() throws {
        // Issue 45, item 4: pruning at 1 % of the peak drops the west room once the tag settles in the east; a small
        // uniform share around the loudest agent after a badly fitting update lets the readings bring it back.
        var reseeding = GridFilter.Configuration()
        reseeding.lostMisfit = .infinity
        var neither = reseeding
        neither.reseedMisfit = .infinity
        let seeds: [UInt64] = Array(1...16)
        let with = try seeds.map { try lost(reseeding, seed: $0) }
        let without = try seeds.map { try lost(neither, seed: $0) }
        let quickWith = with.filter { ($0.back ?? 99) <= 5 }.count
        let quickWithout = without.filter { ($0.back ?? 99) <= 5 }.count
        print(
            "re-seeding: \(quickWith) of 16 back within 5 s, \(with.filter { $0.back != nil }.count) within 20 s; "
                + "without: \(quickWithout) and \(without.filter { $0.back != nil }.count)")
        #expect(quickWithout == 0)
        #expect(quickWith >= 8, "\(quickWith) of \(seeds.count) back within 5 s by re-seeding")
    }
}
