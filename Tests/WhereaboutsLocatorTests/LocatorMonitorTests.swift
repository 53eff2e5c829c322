import Testing
import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

@testable import WhereaboutsLocator

@Suite("Locator monitor")
struct LocatorMonitorTests {
    let start = 1_764_000_000.0

    func logs(_ actions: [ServiceAction<LocatorEffect>]) -> [(LogLevel, String)] {
        actions.compactMap {
            guard case .log(let level, let line) = $0 else { return nil }
            return (level, line)
        }
    }

    @Test("a rejection is logged as a warning at once, then at most once a minute per reason, with the count held back")
    func rejectionsRateLimited() throws {
        var monitor = LocatorMonitor(metricsInterval: 10, maximumTags: 100)
        let agent = try #require(AgentID("g-lobby"))
        var actions: [ServiceAction<LocatorEffect>] = []
        monitor.reject(.duplicateBatch, agent: agent, now: start, actions: &actions)
        monitor.reject(.duplicateBatch, agent: agent, now: start + 10, actions: &actions)
        monitor.reject(.duplicateBatch, agent: agent, now: start + 20, actions: &actions)
        monitor.reject(.nonFinite, agent: nil, now: start + 20, actions: &actions)
        monitor.reject(.duplicateBatch, agent: agent, now: start + 60, actions: &actions)
        let lines = logs(actions)
        #expect(lines.map(\.0) == [.warning, .warning, .warning])
        #expect(lines[0].1 == "dropped a reading from agent g-lobby: \(RejectionReason.duplicateBatch)")
        #expect(lines[1].1.contains("a topic with an invalid agent id"))
        #expect(lines[2].1.hasSuffix("(2 more since the last report)"))
        #expect(monitor.counters.rejected == [.duplicateBatch: 4, .nonFinite: 1])
    }

    @Test("metrics go out every interval on the given topic, not retained; counts untold since are noticed")
    func metricsEveryInterval() throws {
        let map = try PipelineHarness().map
        let engine = LocatorEngine(map: map)
        let topic = Topics(site: map.site.uuid).locatorMetrics
        var monitor = LocatorMonitor(metricsInterval: 10, maximumTags: 100)
        var published: [Publication] = []
        for second in 0..<25 {
            for case .publish(let publication) in monitor.tick(
                now: start + Double(second), engine: engine, map: map, deduplicator: BatchDeduplicator(), topic: topic)
            {
                published.append(publication)
            }
        }
        #expect(published.count == 3)
        #expect(published.allSatisfy { $0.topic == topic && !$0.retain })
        #expect(!monitor.hasUntoldCounts(now: start + 30))
        monitor.counters.accepted += 1
        #expect(monitor.hasUntoldCounts(now: start + 30))
        #expect(!monitor.hasUntoldCounts(now: start + 25), "not before the metrics are due")
    }

    @Test("batches taken late show as input lag, and a median lag of 2 s or more is a warning once a minute")
    func behindItsInput() throws {
        let map = try PipelineHarness().map
        let engine = LocatorEngine(map: map)
        let topic = Topics(site: map.site.uuid).locatorMetrics
        var monitor = LocatorMonitor(metricsInterval: 10, maximumTags: 100)
        var lines: [(LogLevel, String)] = []
        for second in 0..<130 {
            let now = start + Double(second)
            monitor.batchTaken(sent: now - 2.5, now: now)
            lines += logs(
                monitor.tick(now: now, engine: engine, map: map, deduplicator: BatchDeduplicator(), topic: topic))
        }
        #expect(lines.count == 3, "at 0, 60 and 120 s")
        #expect(lines.allSatisfy { $0.0 == .warning && $0.1.contains("reached the engine 2.5 s after") })
        #expect(
            monitor.metrics(now: start + 130, engine: engine, map: map, deduplicator: BatchDeduplicator()).inputLagP50
                == 2500)
    }
}
