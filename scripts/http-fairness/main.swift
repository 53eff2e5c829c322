// The HTTP server alone, as `whereabouts web` runs it (default configuration), for scripts/http-fairness.py measure:
// a 32 KiB page at every path but /stream, the event stream at /stream, a small event broadcast ten times a second
// (a busy dashboard). Prints the port, then the statistics every second and when it ends (after the seconds given),
// flushed each time.
// Built against a release build of the server's module: see scripts/http-fairness.sh.
import Foundation
import WhereaboutsHTTPServer

let seconds = CommandLine.arguments.dropFirst().first.flatMap { Double($0) } ?? 120
var configuration = HTTPServerConfiguration()
configuration.port = 0
configuration.log = { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
let page = [UInt8](repeating: UInt8(ascii: "p"), count: 32 * 1024)
let server = try HTTPServer(configuration) { request in
    if request.path == "/stream" {
        return HTTPResponse(
            status: 200, headers: [("Content-Type", "text/event-stream")],
            body: .stream(initial: Array("retry: 1000\n\n".utf8)))
    }
    return HTTPResponse(status: 200, headers: [("Content-Type", "text/html")], body: .complete(page))
}
print(server.port)
fflush(stdout)
try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { try await server.run() }
    group.addTask {
        var number = 0
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            number += 1
            server.broadcast(Array("event: tag\ndata: {\"seq\":\(number),\"x\":1.5,\"y\":2.5}\n\n".utf8))
            if number % 10 == 0 {
                print("statistics: \(server.statistics)")
                fflush(stdout)
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        server.stop()
    }
    try await group.waitForAll()
}
print("statistics: \(server.statistics)")
