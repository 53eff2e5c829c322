import Foundation
import Glibc

/// BlueZ's controller emulator (`btvirt -s`, Debian's bluez-test-tools) in a directory of its own.
///
/// btvirt serves its controllers on fixed paths (/tmp/bt-server-le, /tmp/bt-server-bredrle, …), so each emulator
/// runs in a private mount namespace whose /tmp is a fresh directory: tests running at once get separate "airs".
/// On kernels without AF_ALG it needs the LD_PRELOAD shim that scripts/btvirt/build-shim.sh builds; it is used
/// everywhere (harmless where AF_ALG exists).
final class BtvirtEmulator: Sendable {
    let directory: String
    private let process: Process

    /// Why the emulator cannot run here, or nil if it can: btvirt installed, and root (for the mount namespace).
    static let unavailableReason: String? = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/btvirt") else {
            return "btvirt is not installed (Debian bluez-test-tools; scripts/bootstrap.sh installs it)"
        }
        guard getuid() == 0 else { return "btvirt needs a private mount namespace, which needs root" }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return "no unshare(1)" }
        return nil
    }()

    static var isAvailable: Bool {
        if let reason = unavailableReason {
            print("btvirt emulator tests skipped: \(reason)")
            return false
        }
        return true
    }

    /// The LE-only controller socket; every connection is a new controller on the emulator's one air.
    var lowEnergy: String { directory + "/bt-server-le" }
    /// The dual-mode controller socket.
    var dualMode: String { directory + "/bt-server-bredrle" }

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/whereabouts-btvirt-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw EmulatorError("mkdtemp failed")
        }
        directory = String(cString: made)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/btvirt/build-shim.sh").path
        let build = Process()
        build.executableURL = URL(fileURLWithPath: "/bin/bash")
        build.arguments = [script, directory + "/af-alg-shim.so"]
        try build.run()
        build.waitUntilExit()
        guard build.terminationStatus == 0 else { throw EmulatorError("\(script) failed to build the AF_ALG shim") }

        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = [
            "--mount", "--propagation", "private", "/bin/sh", "-c",
            "mount --bind \"$0\" /tmp && LD_PRELOAD=/tmp/af-alg-shim.so exec /usr/bin/btvirt -s -l0", directory,
        ]
        let log = FileHandle(forWritingAtPath: "/dev/null")
        process.standardOutput = log
        process.standardError = log
        try process.run()
        let deadline = Date().addingTimeInterval(5)
        while !FileManager.default.fileExists(atPath: lowEnergy) || !FileManager.default.fileExists(atPath: dualMode) {
            guard process.isRunning, Date() < deadline else {
                stop()
                throw EmulatorError("btvirt did not create its sockets in \(directory)")
            }
            usleep(20_000)
        }
    }

    /// Stops the emulator: every controller it serves goes away.
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

struct EmulatorError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
