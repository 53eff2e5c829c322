import Foundation

/// Runs the command-line tools the fixture depends on (`mosquitto`, `mosquitto_passwd`, `openssl`).
enum ExternalTool {
    /// The directories searched, in order: `PATH` first, then the sbin directories Debian puts mosquitto in,
    /// which are often missing from a non-root `PATH`.
    static var searchDirectories: [String] {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin", "/sbin"]
    }

    /// The absolute path of the executable `name`, or a `BrokerFixtureError.toolMissing` naming the package.
    static func locate(_ name: String, package: String) throws(BrokerFixtureError) -> String {
        for directory in searchDirectories where !directory.isEmpty {
            let candidate = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) {
                return candidate
            }
        }
        throw .toolMissing(name: name, package: package)
    }

    /// Runs `executable` with `arguments` to completion and throws if it exits with a non-zero status.
    static func run(_ executable: String, _ arguments: [String], in directory: String) throws(BrokerFixtureError) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do {
            try process.run()
        } catch {
            throw .toolFailed(command: ([executable] + arguments).joined(separator: " "), output: "\(error)")
        }
        // Read before waiting: a chatty tool would otherwise block on a full pipe.
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw .toolFailed(
                command: ([executable] + arguments).joined(separator: " "),
                output: String(decoding: data, as: UTF8.self)
            )
        }
    }
}
