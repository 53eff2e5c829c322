import Foundation
import Glibc
import Synchronization

/// A real Prometheus (Debian's `prometheus` package), run as a child process on a free loopback port for one test,
/// scraping one target every second into a scratch directory.
///
/// ```swift
/// let prometheus = try await PrometheusServer.start(target: "127.0.0.1:\(metricsPort)")
/// defer { prometheus.cleanup() }
/// let samples = try prometheus.query("rate(whereabouts_readings_total[30s])")
/// ```
///
/// A missing `prometheus` binary throws ``BrokerFixtureError/toolMissing(name:package:)``, so the test fails rather
/// than being skipped (scripts/bootstrap.sh installs it).
public final class PrometheusServer: Sendable {
    /// The port its web API listens on.
    public let port: Int
    /// The temporary directory holding its configuration, database and log.
    public let directory: String
    private let child: Mutex<ChildProcess?>

    /// One sample of a query's answer: the series' labels and its value.
    public struct Sample: Sendable {
        public var labels: [String: String]
        public var value: Double
    }

    private init(port: Int, directory: String, process: ChildProcess) {
        self.port = port
        self.directory = directory
        child = Mutex(process)
    }

    deinit {
        cleanup()
    }

    /// Starts Prometheus scraping `target` (`host:port`, path `/metrics`) as job `job` every `interval` seconds, and
    /// waits until it is ready.
    public static func start(
        target: String, job: String = "whereabouts", interval: Int = 1
    ) async throws(BrokerFixtureError) -> PrometheusServer {
        let executable = try ExternalTool.locate("prometheus", package: "prometheus")
        let directory = NSTemporaryDirectory() + "whereabouts-prometheus-" + UUID().uuidString
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .fileNotWritten(path: directory, reason: "\(error)")
        }
        let configuration = """
            global:
              scrape_interval: \(interval)s
              scrape_timeout: \(interval)s
              evaluation_interval: \(interval)s
            scrape_configs:
              - job_name: \(job)
                static_configs:
                  - targets: ['\(target)']

            """
        try TestCertificates.write(configuration, to: directory + "/prometheus.yml")
        var lastLog = ""
        for _ in 0..<5 {
            let port = try LoopbackPort.pickFree()
            let process = try ChildProcess(
                executable: executable,
                arguments: [
                    "--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/data",
                    "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
                ],
                outputPath: directory + "/prometheus.log")
            // Ready once /-/ready answers 200 (it loads its empty database first); a port taken in between makes it
            // exit, and another port is tried.
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline, process.isRunning {
                if (try? LoopbackHTTP.get(port: port, "/-/ready", timeout: 2))?.status == 200 {
                    return PrometheusServer(port: port, directory: directory, process: process)
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
            process.send(SIGKILL)
            process.waitForExitBlocking()
            lastLog = (try? String(contentsOfFile: directory + "/prometheus.log", encoding: .utf8)) ?? ""
        }
        throw .toolFailed(command: "prometheus", output: "did not become ready; its log:\n\(lastLog)")
    }

    /// The log Prometheus wrote, for failure messages.
    public var log: String {
        (try? String(contentsOfFile: directory + "/prometheus.log", encoding: .utf8)) ?? ""
    }

    /// Evaluates a PromQL expression (`/api/v1/query`) at `time` (Unix seconds; nil: now) and returns its vector's
    /// samples, or a scalar as one sample without labels. Throws with Prometheus's error for a query it refuses.
    public func query(_ expression: String, at time: Double? = nil) throws(BrokerFixtureError) -> [Sample] {
        var target = "/api/v1/query?query=" + LoopbackHTTP.encode(expression)
        if let time { target += "&time=" + String(format: "%.3f", time) }
        let response = try LoopbackHTTP.get(port: port, target)
        guard let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
            object["status"] as? String == "success", let data = object["data"] as? [String: Any]
        else {
            throw .toolFailed(command: "query \(expression)", output: "\(response.status): \(response.text)")
        }
        if data["resultType"] as? String == "scalar", let pair = data["result"] as? [Any] {
            return [Sample(labels: [:], value: Self.value(pair))]
        }
        let result = data["result"] as? [[String: Any]] ?? []
        return result.map {
            Sample(labels: $0["metric"] as? [String: String] ?? [:], value: Self.value($0["value"] as? [Any] ?? []))
        }
    }

    /// A `[time, "value"]` pair's value (NaN when it is not one).
    private static func value(_ pair: [Any]) -> Double {
        guard pair.count == 2, let text = pair[1] as? String else { return .nan }
        switch text {
        case "+Inf": return .infinity
        case "-Inf": return -.infinity
        default: return Double(text) ?? .nan
        }
    }

    /// Stops Prometheus and removes its directory (unless `WHEREABOUTS_KEEP_BROKER_DIRS` is set). Safe to call more
    /// than once.
    public func cleanup() {
        // Its database is scratch: no need for a graceful stop.
        killScratchProcess(child, removing: directory)
    }
}
