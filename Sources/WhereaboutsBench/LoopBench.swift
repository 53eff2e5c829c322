import CommandLineSupport
import Glibc
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsLocator
import WhereaboutsRuntime
import WhereaboutsSession
import WhereaboutsSettings
import WhereaboutsWire

/// `whereabouts-bench loop`: what the locator's service loop costs per reading, without a broker.
///
/// The locator's loop is one task: every batch goes through it (the engine's intake, the updates, the payloads, the
/// outbox) while its decoding and part of each update's estimates run on threads beside it. So the loop's CPU per
/// reading bounds how many readings a second one locator can take, however many cores it has: at 10,000 tags it was
/// the limit long before the cores were busy. The end-to-end benches measure it through mosquitto on a shared
/// machine, where one run can be half another; this one drives the very same code (``ServiceState`` around
/// ``LocatorService``, as the locator's shell does) on one thread, with the clock simulated, and times it on that
/// thread's CPU clock.
///
/// Each second, every agent of a ``BenchMap`` sends its window's batch at its own phase (agent i of N at i/N s), as
/// in `latency`; the service ticks every `--update-interval` of simulated time, as the shell's timer does, and every
/// publication the session hands out is taken at once (QoS 1 ones acknowledged at once), as libmosquitto would. The
/// batches' decoding (the service's ``MessagePreparation``, on its own thread in the locator) is timed apart. The first
/// `--warm-up` seconds are run but not counted. Every reading sent must come out accepted or counted as rejected.
enum LoopBench {
    static let table: [Setting] = [
        .value("agents"), .value("tags"), .value("seconds"), .value("warm-up"), .value("seed"), .value("distinct"),
        .value("workers"), .value("update-interval"),
    ]

    static func run(_ settings: Settings) throws -> ExitStatus {
        let agents = try settings.integer("agents") ?? 200
        let tagCount = try settings.integer("tags") ?? 10_000
        let seconds = try settings.integer("seconds") ?? 20
        let warmUp = try settings.integer("warm-up") ?? 5
        let seed = UInt64(try settings.integer("seed") ?? 7)
        let distinct = try settings.integer("distinct") ?? 4
        let workers = try settings.integer("workers") ?? Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let updateInterval = try settings.number("update-interval", in: 0.001...10) ?? 0.02
        guard agents >= 3, tagCount >= 1, seconds >= 1, warmUp >= 0, distinct >= 1, (1...256).contains(workers) else {
            throw UsageError("--agents ≥ 3, --tags ≥ 1, --seconds ≥ 1, --warm-up ≥ 0, --distinct ≥ 1, --workers 1…256")
        }

        let layout = try BenchMap(agents: agents)
        let map = layout.map
        // The windows are made before the clock starts and played in turn, as `stream` and `latency` do.
        var load = SyntheticLoad(map: map, width: layout.width, height: layout.height, tagCount: tagCount, seed: seed)
        let windows = BatchTemplate.windows(of: &load, count: distinct)
        let agentIDs = map.agents.map(\.id)
        let readingTopics = try layout.readingTopics()

        // The locator as `whereabouts-locator` makes it with its defaults (and the benches' short warm-up).
        var configuration = LocatorPipeline.Configuration()
        configuration.engine.workers = workers
        configuration.engine.runner = .threads
        configuration.warmUp = 2
        configuration.homeAssistantDiscovery = false
        let service = LocatorService(
            pipeline: LocatorPipeline(map: map, configuration: configuration), updateInterval: updateInterval)
        var state = ServiceState(pipeline: service)
        let start = 1_767_225_600.0
        var counts = Counts()
        var nextMessageID = 1
        func time(_ now: Double) -> ServiceTime { ServiceTime(now: now, monotonic: now - start) }
        /// Hands out what the session sends, as the runner does, and acknowledges QoS 1 at once. (The session's other
        /// commands, its log lines, are not needed here.)
        func drain(at now: Double) {
            while let entry = state.nextToSend() {
                let messageID = nextMessageID
                nextMessageID = nextMessageID % 65_535 + 1
                counts.publications += 1
                _ = state.sent(id: entry.id, result: .accepted(messageID: messageID), at: time(now))
                if entry.publication.qos == .atLeastOnce {
                    _ = state.acknowledged(messageID: messageID, success: true, at: time(now))
                }
            }
        }
        _ = state.connected(at: time(start))
        drain(at: start)

        var loopCPU = 0.0
        var decodeCPU = 0.0
        var readings = 0
        var publicationsBefore = 0
        // Both taken when the counted seconds start (`seconds` ≥ 1, so they always do).
        var processAtWarmUp = 0.0
        var wallAtWarmUp = 0.0
        var nextTick = start
        for second in 0..<(warmUp + seconds) {
            let counted = second >= warmUp
            if second == warmUp {
                processAtWarmUp = ProcessSample(pid: getpid())?.cpuSeconds ?? 0
                wallAtWarmUp = Measure.monotonic()
                publicationsBefore = counts.publications
            }
            let window = windows[second % distinct]
            for agent in 0..<agents {
                let now = start + Double(second) + Double(agent) / Double(agents)
                // Ticks fall due between batches, as the shell's timer fires between messages.
                while nextTick <= now {
                    let before = Measure.threadCPUTime()
                    _ = state.tick(at: time(nextTick))
                    drain(at: nextTick)
                    if counted { loopCPU += Measure.threadCPUTime() - before }
                    nextTick += updateInterval
                }
                let payload = window[agent].payload(agent: agentIDs[agent], epoch: 1, seq: second, time: now)
                let decodeBefore = Measure.threadCPUTime()
                let prepared = state.pipeline.preparation?.prepare(
                    topic: readingTopics[agent], payload: payload, at: time(now))
                let loopBefore = Measure.threadCPUTime()
                if let prepared {
                    _ = state.receive(topic: readingTopics[agent], payload: payload, prepared: prepared, at: time(now))
                } else {
                    _ = state.receive(topic: readingTopics[agent], payload: payload, at: time(now))
                }
                drain(at: now)
                let loopAfter = Measure.threadCPUTime()
                if counted {
                    decodeCPU += loopBefore - decodeBefore
                    loopCPU += loopAfter - loopBefore
                    readings += window[agent].count
                }
                counts.sent += window[agent].count
            }
        }
        let wall = Measure.monotonic() - wallAtWarmUp
        let processCPU = (ProcessSample(pid: getpid())?.cpuSeconds ?? 0) - processAtWarmUp
        let metrics = state.pipeline.pipeline.metrics(now: nextTick)
        let rejected = metrics.readingsRejected.values.reduce(0, +)
        // Nothing may be dropped unseen: every reading sent came out accepted or counted.
        guard metrics.readingsAccepted + rejected == counts.sent else {
            throw RuntimeError(
                "\(counts.sent) readings sent, but \(metrics.readingsAccepted) accepted and \(rejected) rejected")
        }
        Measure.emit([
            ("figure", .string("loop")),
            ("agents", .number(Double(agents))),
            ("tags", .number(Double(tagCount))),
            ("workers", .number(Double(workers))),
            ("seconds", .number(Double(seconds))),
            ("readings", .number(Double(readings))),
            ("readings_per_second_of_load", .number(Double(readings) / Double(seconds))),
            ("rejected", .number(Double(rejected))),
            ("publications", .number(Double(counts.publications - publicationsBefore))),
            ("loop_cpu_seconds", .number(loopCPU)),
            ("loop_us_per_reading", .number(loopCPU / Double(max(readings, 1)) * 1e6)),
            // The most readings a second the loop could take on its own core, if nothing else held it back.
            ("loop_readings_per_cpu_second", .number(Double(readings) / loopCPU)),
            ("decode_us_per_reading", .number(decodeCPU / Double(max(readings, 1)) * 1e6)),
            // Every thread of the bench while counted: the loop, the decoding and the update's workers.
            ("process_us_per_reading", .number(processCPU / Double(max(readings, 1)) * 1e6)),
            ("wall_seconds", .number(wall)),
            ("tags_tracked", .number(Double(metrics.tagsTracked))),
        ])
        return .success
    }

    private struct Counts {
        var sent = 0
        var publications = 0
    }
}
