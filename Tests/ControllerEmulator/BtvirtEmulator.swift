import BrokerFixture
import Foundation
import Glibc
import Synchronization

/// BlueZ's controller emulator (`btvirt -s`, Debian's bluez-test-tools) in a directory of its own.
///
/// btvirt serves its controllers on fixed paths (/tmp/bt-server-le, /tmp/bt-server-bredrle, …), so each emulator
/// runs in a private mount namespace whose /tmp is a fresh directory: tests running at once get separate "airs".
/// On kernels without AF_ALG it needs the LD_PRELOAD shim that scripts/btvirt/build-shim.sh builds; it is used
/// everywhere (harmless where AF_ALG exists).
public final class BtvirtEmulator: Sendable {
    /// The directory holding the emulator's sockets.
    public let directory: String
    private let process: Mutex<ChildProcess?>

    /// Why the emulator cannot run here, or nil if it can: btvirt installed, and root (for the mount namespace).
    public static let unavailableReason: String? = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/btvirt") else {
            return "btvirt is not installed (Debian bluez-test-tools; scripts/bootstrap.sh installs it)"
        }
        guard getuid() == 0 else { return "btvirt needs a private mount namespace, which needs root" }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return "no unshare(1)" }
        return nil
    }()

    /// Whether the emulator can run here; prints why not when it cannot.
    public static var isAvailable: Bool {
        if let reason = unavailableReason {
            print("btvirt emulator tests skipped: \(reason)")
            return false
        }
        return true
    }

    /// The LE-only controller socket; every connection is a new controller on the emulator's one air.
    public var lowEnergy: String { directory + "/bt-server-le" }
    /// The dual-mode controller socket.
    public var dualMode: String { directory + "/bt-server-bredrle" }

    /// Builds the shim and starts btvirt in a new directory.
    public init() throws {
        var template = Array((NSTemporaryDirectory() + "/whereabouts-btvirt-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw EmulatorError("mkdtemp failed")
        }
        directory = String(cString: made)
        process = Mutex(nil)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/btvirt/build-shim.sh").path
        let build = try ChildProcess(
            executable: "/bin/bash", arguments: [script, directory + "/af-alg-shim.so"],
            outputPath: directory + "/build-shim.log")
        build.waitForExitBlocking()
        guard build.exitCode == 0 else {
            let log = (try? String(contentsOfFile: directory + "/build-shim.log", encoding: .utf8)) ?? ""
            throw EmulatorError("\(script) failed to build the AF_ALG shim: \(log)")
        }
        try start()
    }

    /// Starts btvirt again in the same directory, after ``stop()``: a new air, on the same socket paths.
    public func restart() throws {
        stop()
        try start()
    }

    private func start() throws {
        let child = try ChildProcess(
            executable: "/usr/bin/unshare",
            arguments: [
                "--mount", "--propagation", "private", "/bin/sh", "-c",
                "mount --bind \"$0\" /tmp && LD_PRELOAD=/tmp/af-alg-shim.so exec /usr/bin/btvirt -s -l0", directory,
            ], outputPath: directory + "/btvirt.log")
        process.withLock { $0 = child }
        // Ready once both sockets accept a connection (after a restart, the old socket files are still there).
        let deadline = Date().addingTimeInterval(30)
        while !Self.accepts(lowEnergy) || !Self.accepts(dualMode) {
            guard child.isRunning, Date() < deadline else {
                stop()
                let log = (try? String(contentsOfFile: directory + "/btvirt.log", encoding: .utf8)) ?? ""
                throw EmulatorError("btvirt did not serve its sockets in \(directory): \(log)")
            }
            usleep(20_000)
        }
    }

    /// Whether a Unix stream socket at `path` accepts a connection (closed at once: btvirt drops that controller).
    static func accepts(_ path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return UnixSocket.connect(descriptor, to: path)
    }

    /// Whether btvirt runs, and what it printed: for a test's failure message.
    public var state: String {
        let running = process.withLock { $0?.isRunning ?? false }
        let log = (try? String(contentsOfFile: directory + "/btvirt.log", encoding: .utf8)) ?? ""
        return "btvirt \(running ? "running" : "not running"); its log: \(log.isEmpty ? "(empty)" : log)"
    }

    /// Kills the emulator (SIGKILL, as a crash would): every controller it serves goes away at once.
    public func stop() {
        guard let child = process.withLock({ $0 }) else { return }
        child.send(SIGKILL)
        child.waitForExitBlocking()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Why an emulator or relay could not be set up.
public struct EmulatorError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
