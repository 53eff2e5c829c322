import BrokerFixture
import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsMQTT
import WhereaboutsWire

/// whereabouts-locator's metrics endpoint (`--metrics-listen`) scraped every second by a real Prometheus, while
/// agents send known batches through a real mosquitto: Prometheus's answers are checked against what was sent.
@Suite("Prometheus end to end", .serialized)
struct PrometheusEndToEndTests {
    /// Rounds of batches, four a second: each sending agent sends one batch of ``tagsPerBatch`` readings a round.
    static let rounds = 40
    static let tagsPerBatch = 5
    /// How long before sending each batch claims to have been sent: its input lag, by the agent's clock.
    static let claimedLag = 1.5

    /// The metrics port the locator says it listens on (`--metrics-listen 0` lets the kernel pick it).
    static func metricsPort(_ locator: LocatorProcess) -> Int? {
        guard let range = locator.log.range(of: "metrics on http://127.0.0.1:") else { return nil }
        return Int(locator.log[range.upperBound...].prefix { $0.isNumber })
    }

    /// The one value of an instant query; nil when it has no sample (or more than one).
    static func value(_ prometheus: PrometheusServer, _ expression: String, at time: Double? = nil) -> Double? {
        guard let samples = try? prometheus.query(expression, at: time), samples.count == 1 else { return nil }
        return samples[0].value
    }

    @Test("Prometheus reads the readings the agents sent, per agent, their rate, the gaps, and the lag quantile")
    func scrapedFigures() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let map = try Fixtures.map("corridor.json")
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        let senders = try ["west", "east"].map { try TestAgent($0, site: map.site.uuid, broker: broker) }
        let tags = try (1...Self.tagsPerBatch).map {
            try #require(TagIdentity("ibeacon-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d-7-\($0)"))
        }
        let locator = try LocatorProcess(
            map: try Fixtures.path("corridor.json"), broker: broker, scratch: scratch,
            extra: ["--warm-up", "1", "--metrics-listen", "0"])
        try await waitFor("the locator's metrics endpoint") { Self.metricsPort(locator) != nil }
        let metricsPort = try #require(Self.metricsPort(locator))
        // The endpoint itself: the exposition format's content type, and only /metrics.
        let direct = try LoopbackHTTP.get(port: metricsPort, "/metrics")
        #expect(direct.status == 200)
        #expect(direct.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        #expect(direct.text.contains("# TYPE whereabouts_readings_total counter"))
        #expect(try LoopbackHTTP.get(port: metricsPort, "/").status == 404)

        let prometheus = try await PrometheusServer.start(target: "127.0.0.1:\(metricsPort)")
        defer { prometheus.cleanup() }
        try await waitFor("Prometheus's first scrape of every agent's counter at 0") {
            Self.value(prometheus, "up{job=\"whereabouts\"}") == 1
                && (try? prometheus.query("whereabouts_readings_total == 0"))?.count == map.agents.count
        }
        let firstScrape = now()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for agent in senders { group.addTask { await agent.run() } }
            for agent in senders { try await agent.waitUntilConnected() }
            // Samples of 0 for two seconds more: the rate's window below starts on them.
            try await Task.sleep(for: .seconds(2))
            let start = now()
            for round in 0..<Self.rounds {
                // Paced by the clock, not by sleeps added up: four rounds a second however long a send takes.
                let due = start + Double(round) * 0.25
                if due > now() { try await Task.sleep(for: .milliseconds(Int((due - now()) * 1000))) }
                if round == Self.rounds / 2 { senders[0].skip(3) }
                for agent in senders {
                    let sent = now() - Self.claimedLag
                    let readings = tags.map {
                        ReadingBatch.Reading(tag: $0, time: sent, rssi: -70, count: 3, variance: 4)
                    }
                    try await agent.send(readings, sent: sent)
                }
            }
            let expected = Double(Self.rounds * Self.tagsPerBatch)
            try await waitFor("Prometheus to have scraped every reading") {
                Self.value(prometheus, "sum(whereabouts_readings_total)") == 2 * expected
            }
            let end = now()
            // The whole run, from a window that starts on the samples of 0 taken before the first batch.
            let window = Int(end - firstScrape)
            try checkRates(prometheus, expected: expected, window: window, at: end)
            try checkHistograms(prometheus, window: window, at: end)
            #expect(Self.value(prometheus, "whereabouts_batches_total") == Double(2 * Self.rounds))
            #expect(Self.value(prometheus, "whereabouts_batches_missing{agent=\"west\"}") == 3)
            #expect(Self.value(prometheus, "whereabouts_batches_missing{agent=\"east\"}") == 0)
            #expect(Self.value(prometheus, "whereabouts_readings_total{agent=\"mid-a\"}") == 0)
            #expect(Self.value(prometheus, "whereabouts_lease_role{role=\"single\"}") == 1)
            #expect(Self.value(prometheus, "whereabouts_tags_tracked") == Double(Self.tagsPerBatch))
            let build = try prometheus.query("whereabouts_build_info")
            #expect(build.count == 1 && build.first?.labels["version"]?.isEmpty == false)
            try checkDashboard(prometheus, at: end)
            for agent in senders { agent.client.disconnect() }
            group.cancelAll()
        }
        #expect(await locator.stop() == 0)
    }

    @Test("a --metrics-listen that is not [HOST:]PORT is bad usage (2); a port already taken fails the start (1)")
    func refusedAddresses() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        let map = try Fixtures.path("corridor.json")
        for bad in ["10.0.0.5", "localhost:http", "[::1]:9479", "127.0.0.1:65536", ":9479"] {
            let locator = try LocatorProcess(
                map: map, broker: broker, scratch: scratch, extra: ["--metrics-listen", bad])
            _ = await locator.process.waitForExit(timeout: .seconds(30))
            #expect(locator.process.exitCode == 2, "\(bad)")
            #expect(locator.log.contains("--metrics-listen must be PORT or HOST:PORT"), "\(bad): \(locator.log)")
        }
        // The broker's own port: something listens there already.
        let taken = try LocatorProcess(
            map: map, broker: broker, scratch: scratch, extra: ["--metrics-listen", "\(broker.port)"])
        _ = await taken.process.waitForExit(timeout: .seconds(30))
        #expect(taken.process.exitCode == 1)
        #expect(taken.log.contains("cannot listen on 127.0.0.1:\(broker.port) for the metrics"), "\(taken.log)")
    }

    /// `rate` and `increase` over the run against what was sent. Prometheus extrapolates a counter's increase to its
    /// window's end (by at most 1.1 scrape intervals) but never below 0 at its start, so the answer is the exact count
    /// times at most `1 + 1.1 / (window − 2)`: what a 1 s scrape of a figure 1 s old allows, however busy the machine.
    func checkRates(_ prometheus: PrometheusServer, expected: Double, window: Int, at end: Double) throws {
        let most = 1 + 1.5 / Double(window - 3)
        let rates = try prometheus.query("rate(whereabouts_readings_total{job=\"whereabouts\"}[\(window)s])", at: end)
        for agent in ["west", "east"] {
            let rate = try #require(rates.first { $0.labels["agent"] == agent }?.value, "\(agent): \(rates)")
            let sent = expected / Double(window)
            #expect(rate >= sent * 0.99 && rate <= sent * most, "\(agent): \(rate)/s, sent \(sent)/s")
        }
        let total = try #require(
            Self.value(prometheus, "sum(increase(whereabouts_readings_total[\(window)s]))", at: end))
        #expect(total >= 2 * expected * 0.99 && total <= 2 * expected * most, "\(total) of \(2 * expected)")
    }

    /// The latency histograms: every batch counted once; the input lag's median and 99th percentile in the bucket
    /// that holds the lag the batches claimed (1 to 2.5 s: 1.5 s and the way through the broker).
    func checkHistograms(_ prometheus: PrometheusServer, window: Int, at end: Double) throws {
        let batches = Double(2 * Self.rounds)
        #expect(Self.value(prometheus, "whereabouts_update_latency_seconds_count") == batches)
        #expect(Self.value(prometheus, "whereabouts_input_lag_seconds_count") == batches)
        for quantile in [0.5, 0.99] {
            let lag = try #require(
                Self.value(
                    prometheus,
                    "histogram_quantile(\(quantile), sum by (le) (increase(whereabouts_input_lag_seconds_bucket[\(window)s])))",
                    at: end))
            #expect(lag > 1 && lag <= 2.5, "input lag p\(Int(quantile * 100)): \(lag) s")
            let update = try #require(
                Self.value(
                    prometheus,
                    "histogram_quantile(\(quantile), sum by (le) (increase(whereabouts_update_latency_seconds_bucket[\(window)s])))",
                    at: end))
            #expect(update.isFinite && update >= 0, "update latency p\(Int(quantile * 100)): \(update) s")
        }
    }

    /// Every query of the shipped Grafana dashboard is one Prometheus takes, and most find series.
    func checkDashboard(_ prometheus: PrometheusServer, at end: Double) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("deploy/grafana/whereabouts.json"))
        let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        let expressions = panels.flatMap {
            ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String }
        }
        var answered = 0
        for expression in expressions {
            let query = expression.replacingOccurrences(of: "$__rate_interval", with: "5s")
                .replacingOccurrences(of: "$job", with: ".*").replacingOccurrences(of: "$instance", with: ".*")
            do {
                if try !prometheus.query(query, at: end).isEmpty { answered += 1 }
            } catch {
                Issue.record("the dashboard's query \(expression) is refused: \(error)")
            }
        }
        #expect(answered >= expressions.count / 2, "\(answered) of \(expressions.count) queries found series")
    }
}
