import CommandLineSupport
import Glibc
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsRuntime
import WhereaboutsSettings

/// `whereabouts-bench engine`: readings per CPU second through the whole engine, single thread.
///
/// Each second of reading time, every agent's window of readings goes through `LocatorEngine.ingest`, then one
/// `update(now:)` recomputes every tag heard (smoothing, ranging, floor, motion, trilateration, tracking, zones,
/// occupancy). Only those calls are timed, on this thread's CPU clock; making the readings is not. The first
/// `--warm-up` seconds (tags being created) are run but not counted.
///
/// With `--workers N` (default 1) the engine splits each update's estimates among N threads; the CPU clock is then
/// the calling thread's alone, so compare `readings_per_wall_second` between runs with different N.
///
/// With `--problems FILE`, the ranges of a sample of the engine's fixes are written as JSON Lines for the scipy
/// reference (`scripts/bench/trilateration_scipy.py`): the same ranges, the same agents, the same truth.
enum EngineBench {
    static let table: [Setting] = [
        .value("problems"), .value("agents"), .value("tags"), .value("seconds"), .value("warm-up"), .value("seed"),
        .value("problem-count"), .value("positioning"), .value("workers"), .value("lag"),
        .value("cell-size"),
    ]

    static func run(_ settings: Settings) throws -> ExitStatus {
        let agents = try settings.integer("agents") ?? 50
        let tagCount = try settings.integer("tags") ?? 1000
        let seconds = try settings.integer("seconds") ?? 30
        let warmUp = try settings.integer("warm-up") ?? 10
        let seed = UInt64(try settings.integer("seed") ?? 7)
        let problemsPath = settings.value("problems")
        let problemCount = try settings.integer("problem-count") ?? 3000
        // The engine's own default (the grid filter) unless asked otherwise: the bench measures what ships.
        let positioningName = settings.value("positioning") ?? "grid"
        let workers = try settings.integer("workers") ?? 1
        let lag = try settings.number("lag", in: 0...10) ?? 0
        let cellSize = try settings.number("cell-size", in: 0.1...5)
        guard let positioning = LocatorEngine.Configuration.Positioning(rawValue: positioningName) else {
            throw UsageError("--positioning grid or trilateration")
        }
        // The problems are trilateration's fixes, which scipy solves again: the grid makes none.
        guard problemsPath == nil || positioning == .trilateration else {
            throw UsageError("--problems needs --positioning trilateration")
        }
        guard agents >= 3, tagCount >= 1, seconds >= 1, warmUp >= 0, (1...256).contains(workers) else {
            throw UsageError("--agents ≥ 3, --tags ≥ 1, --seconds ≥ 1, --warm-up ≥ 0, --workers 1…256")
        }

        let layout = try BenchMap(agents: agents)
        let map = layout.map
        var load = SyntheticLoad(
            map: map, width: layout.width, height: layout.height, tagCount: tagCount, seed: seed)
        var configuration = LocatorEngine.Configuration()
        configuration.positioning = positioning
        configuration.workers = workers
        configuration.runner = .threads
        configuration.grid.lag = lag
        configuration.grid.cellSize = cellSize
        var engine = LocatorEngine(map: map, configuration: configuration)
        let start = 1_767_225_600.0
        var readingCount = 0
        var estimateCount = 0
        var eventCount = 0
        var occupancyCount = 0
        var cpu = 0.0
        var wall = 0.0
        var errors: [Double] = []
        var problems = ""
        var problemsWritten = 0
        var recentTruth: [Double: [TagIdentity: Point]] = [:]

        for second in 0..<(warmUp + seconds) {
            let end = start + Double(second + 1)
            let heard = load.nextWindow()
            // Build the engine's input outside the timed part, as the locator's decoder would have.
            let windows: [[Reading]] = heard.map { list in
                list.map { reading in
                    Reading(
                        tag: load.tags[reading.tag].identity, time: end, rssi: reading.rssi, count: reading.count,
                        variance: reading.variance, measuredPower: SyntheticLoad.measuredPower)
                }
            }
            let now = end + 0.05
            let cpuBefore = Measure.threadCPUTime()
            let wallBefore = Measure.monotonic()
            for (agentIndex, readings) in windows.enumerated() {
                engine.ingest(readings, agentIndex: agentIndex, now: now)
            }
            let update = engine.update(now: now)
            let cpuAfter = Measure.threadCPUTime()
            let wallAfter = Measure.monotonic()
            guard second >= warmUp else { continue }
            cpu += cpuAfter - cpuBefore
            wall += wallAfter - wallBefore
            readingCount += windows.reduce(0) { $0 + $1.count }
            estimateCount += update.estimates.count
            eventCount += update.events.count
            occupancyCount += update.occupancyChanges.count
            // Sanity, untimed: the engine must be doing real work, so say how close it gets (against the truth
            // when each estimate was made: with a lag, an earlier update's).
            var truth: [TagIdentity: Point] = [:]
            let last = second == warmUp + seconds - 1
            let scored = second >= warmUp + seconds - 1 - Int(lag.rounded(.up))
            if scored || (problemsPath != nil && problemsWritten < problemCount) {
                for tag in load.tags { truth[tag.identity] = tag.position }
            }
            if scored { recentTruth[now] = truth }
            if last {
                for estimate in update.estimates {
                    if let real = recentTruth[estimate.time]?[estimate.tag] {
                        errors.append(real.distance(to: estimate.position))
                    }
                }
            }
            if problemsPath != nil {
                for estimate in update.estimates where problemsWritten < problemCount {
                    guard let real = truth[estimate.tag], estimate.ranges.count >= 3 else { continue }
                    problems += problemLine(estimate, truth: real, map: map)
                    problemsWritten += 1
                }
            }
        }
        if let problemsPath { try FileAccess.write(Array(problems.utf8), to: problemsPath) }
        errors.sort()
        Measure.emit([
            ("figure", .string("engine")),
            ("positioning", .string(configuration.positioning.rawValue)),
            ("workers", .number(Double(workers))),
            ("lag", .number(lag)),
            ("agents", .number(Double(map.agents.count))),
            ("zones", .number(Double(map.zones.count))),
            ("tags", .number(Double(tagCount))),
            ("seconds", .number(Double(seconds))),
            ("readings", .number(Double(readingCount))),
            ("solves", .number(Double(estimateCount))),
            ("readings_per_solve", .number(Double(readingCount) / Double(max(estimateCount, 1)))),
            ("zone_events", .number(Double(eventCount))),
            ("occupancy_changes", .number(Double(occupancyCount))),
            ("cpu_seconds", .number(cpu)),
            ("wall_seconds", .number(wall)),
            ("readings_per_cpu_second", .number(Double(readingCount) / cpu)),
            ("readings_per_wall_second", .number(Double(readingCount) / wall)),
            ("solves_per_cpu_second", .number(Double(estimateCount) / cpu)),
            ("median_error_m", Measure.quantile(errors, 0.5).map(JSONValue.number) ?? .null),
            ("problems_written", .number(Double(problemsWritten))),
            // The whole bench process at its peak: the engine, and the synthetic load (small beside it).
            ("vmhwm_kb", ProcessSample(pid: getpid()).map { .number(Double($0.peakResidentKB)) } ?? .null),
            ("cell_size_m", cellSize.map(JSONValue.number) ?? .null),
        ])
        return .success
    }

    /// One fix's inputs for the reference: every current range (nearest first) with its agent's position.
    private static func problemLine(_ estimate: TagEstimate, truth: Point, map: FloorMap) -> String {
        let ranges = estimate.ranges.map { range -> JSONValue in
            let agent = map.agents[range.agentIndex]
            return .array([
                .number(agent.position.x), .number(agent.position.y), .number(agent.height - map.model.tagHeight),
                .number(range.distance), .number(range.accuracy),
            ])
        }
        let line = JSONValue.object(
            JSONObject([
                ("ranges", .array(ranges)),
                ("truth", .array([.number(truth.x), .number(truth.y)])),
                ("engine", .array([.number(estimate.position.x), .number(estimate.position.y)])),
            ]))
        return JSONWriter().string(line) + "\n"
    }
}
