public import Glibc
import Synchronization

/// A child process (mosquitto, or one of our executables in end-to-end tests) started with `posix_spawn`, with an empty signal mask and default signal actions.
///
/// Foundation's `Process` passes on the spawning thread's signal mask, and Dispatch worker threads block
/// SIGTERM: mosquitto then never sees SIGTERM (it only waits with its inherited mask), and a graceful
/// stop turns into a 10 s timeout and a SIGKILL. Spawning directly lets us reset the mask.
public final class ChildProcess: Sendable {
    /// The child's process id.
    public let pid: pid_t
    private let exitStatus = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments`, stdin from `inputPath` (/dev/null unless a test feeds it, through a FIFO
    /// say) and stdout+stderr appended to `outputPath`.
    public init(
        executable: String, arguments: [String], outputPath: String, inputPath: String = "/dev/null"
    ) throws(BrokerFixtureError) {
        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        posix_spawn_file_actions_addopen(&fileActions, 0, inputPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&fileActions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&fileActions, 1, 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &fileActions, &attributes, argv, environ)
        guard status == 0 else {
            throw .toolFailed(command: executable, output: "posix_spawn: \(String(cString: strerror(status)))")
        }
        self.pid = pid
    }

    /// Whether the process has not exited yet; reaps it once it has.
    public var isRunning: Bool {
        exitStatus.withLock { exitStatus in
            guard exitStatus == nil else { return false }
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || (reaped < 0 && errno == ECHILD) {
                exitStatus = status
                return false
            }
            return true
        }
    }

    var exitStatusValue: Int32? { exitStatus.withLock { $0 } }

    /// Sends `signal` unless the process has already been reaped (its pid could belong to someone else).
    public func send(_ signal: Int32) {
        exitStatus.withLock { exitStatus in
            if exitStatus == nil { _ = kill(pid, signal) }
        }
    }

    /// Polls until the process has exited or `timeout` passes; returns whether it exited.
    public func waitForExit(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while isRunning {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Blocks until the process has exited (for `deinit`-time cleanup after SIGKILL, which is prompt).
    public func waitForExitBlocking() {
        while isRunning {
            usleep(5000)
        }
    }
}

extension ChildProcess {
    /// The exit code, once the process has exited normally; nil while running or after a signal.
    public var exitCode: Int32? {
        guard !isRunning else { return nil }
        return exitStatusValue.flatMap { status in (status & 0x7F) == 0 ? (status >> 8) & 0xFF : nil }
    }
}
