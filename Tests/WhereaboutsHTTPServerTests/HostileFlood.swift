import Foundation
import Glibc

/// Hostile clients from a child process (`scripts/http-fairness.py flood`): `count` connections of one kind kept open
/// (each reopened when the server closes it) until ``disperse()``. The descriptors live in the child, so that the
/// test process's own stay few (libmosquitto's select() in other tests fails past 1,024).
final class HostileFlood {
    enum Kind: String {
        /// Connects and sends nothing.
        case idle
        /// Sends the start of a head, then a byte a second.
        case slowloris
        /// Asks for the event stream and never reads.
        case sse
    }

    /// The repository's `scripts/` folder, from this file's place in it.
    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts")

    private let process = Process()
    private let output = Pipe()

    /// Starts the flood and returns once every connection has connected once (or the child gave up waiting).
    init(port: UInt16, kind: Kind, count: Int) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            Self.scripts.appendingPathComponent("http-fairness.py").path, "flood", String(port), kind.rawValue,
            String(count),
        ]
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
    }

    deinit { disperse() }

    /// Closes every connection by ending the child (SIGKILL: a test runner may leave SIGTERM ignored).
    func disperse() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// `count` page loads one after another, each on a new connection: how many were answered 200 (each within the
/// client's 5 s timeout).
func pageLoads(port: UInt16, count: Int, path: String = "/") -> Int {
    var answered = 0
    for _ in 0..<count {
        let response = try? RawClient.exchange(port: port, "GET \(path) HTTP/1.1\r\nHost: t\r\n\r\n")
        if let response, status(of: response) == 200 { answered += 1 }
    }
    return answered
}
