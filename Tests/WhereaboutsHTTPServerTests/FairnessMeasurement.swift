import Foundation
import Testing
import WhereaboutsHTTPServer

/// The goal at full size, by hand (off unless `WHEREABOUTS_HTTP_FAIRNESS` names the count per kind):
///
///     WHEREABOUTS_HTTP_FAIRNESS=2000 swift test --skip-build --filter FairnessMeasurement
///
/// The server with its default configuration and a 32 KiB page, broadcasting a small event ten times a second (a
/// busy dashboard); `scripts/http-fairness.py measure` connects a stream reader, then the count of slowloris, idle and
/// never-reading stream clients each, then makes 100 page loads of 2 s each. Prints its report and the server's
/// statistics; passes when at least 95 % of the loads succeeded and the reader kept receiving.
///
/// This is the debug build, in the test process: on the shared 2-core machine (load average 5-11) it measured 93-96 of
/// 100 within 2 s, median 180-350 ms, the server's loop being the bottleneck. `scripts/http-fairness.sh` measures the
/// same against a release build of the server module, as shipped: 100 of 100, median 3-4 ms.
@Suite("HTTP server fairness, measured at full size")
struct FairnessMeasurement {
    static let count = ProcessInfo.processInfo.environment["WHEREABOUTS_HTTP_FAIRNESS"].flatMap { Int($0) }

    @Test(
        "hostile connections of each kind: page loads within 2 s, and the stream reader's events",
        .enabled(if: count != nil))
    func fullSize() async throws {
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        let page = [UInt8](repeating: UInt8(ascii: "p"), count: 32 * 1024)
        let handler: HTTPServer.Handler = { request in
            if request.path == "/stream" { return testHandler(request) }
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/html")], body: .complete(page))
        }
        try await withServer(configuration, handler: handler) { server in
            let broadcasting = Task {
                var number = 0
                while !Task.isCancelled {
                    number += 1
                    server.broadcast(Array("event: tag\ndata: {\"seq\":\(number),\"x\":1.5,\"y\":2.5}\n\n".utf8))
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            defer { broadcasting.cancel() }
            let process = Process()
            let output = Pipe()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = [
                HostileFlood.scripts.appendingPathComponent("http-fairness.py").path, "measure", String(server.port),
                "--count", String(Self.count ?? 2000), "--loads", "100",
            ]
            process.standardOutput = output
            try process.run()
            let report = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            print("fairness report: \(String(decoding: report, as: UTF8.self))")
            print("server statistics: \(server.statistics)")
            #expect(process.terminationStatus == 0)
        }
    }
}
