import Foundation
import Glibc
import Synchronization

/// A real `mosquitto` broker, run as a child process on a free loopback port for one test.
///
/// ```swift
/// let broker = try await MosquittoBroker.start()
/// defer { broker.cleanup() }
/// // connect clients to broker.host : broker.port …
/// await broker.stop()           // SIGTERM, as systemd would
/// try await broker.restart()    // same port, so clients can reconnect by themselves
/// ```
///
/// Each broker gets a fresh temporary directory holding its `mosquitto.conf`, log, password and ACL
/// files, persistence database and certificates. The broker runs in the foreground as a child
/// process (not `-d`, whose exit status says nothing about startup), spawned with an empty signal
/// mask so that SIGTERM reaches it, and counts as started once its log says it is running and its
/// port accepts TCP connections. If the kernel-chosen port is taken
/// by someone else in the meantime, the start is retried on another port.
///
/// A missing `mosquitto` binary throws ``BrokerFixtureError/toolMissing(name:package:)``, so the test
/// fails rather than being skipped. Set `WHEREABOUTS_KEEP_BROKER_DIRS=1` to keep the directories
/// after ``cleanup()`` for a post-mortem.
public final class MosquittoBroker: Sendable {
    /// The address the broker listens on; always loopback.
    public let host = "127.0.0.1"
    /// The TCP port the broker listens on; ``restart()`` keeps it.
    public let port: Int
    /// The temporary directory holding the configuration, log and database.
    public let directory: String
    /// The options the broker was started with.
    public let options: BrokerOptions
    /// The certificates of the TLS listener, when ``BrokerOptions/tls`` is on.
    public let certificates: TestCertificates?

    private let executable: String
    private let child: Mutex<ChildProcess?>

    private init(
        port: Int, directory: String, options: BrokerOptions, certificates: TestCertificates?, executable: String,
        process: ChildProcess
    ) {
        self.port = port
        self.directory = directory
        self.options = options
        self.certificates = certificates
        self.executable = executable
        self.child = Mutex(process)
    }

    deinit {
        cleanup()
    }

    /// Prepares a directory, starts mosquitto with `options` on a free loopback port and waits until it listens.
    public static func start(_ options: BrokerOptions = BrokerOptions()) async throws(BrokerFixtureError)
        -> MosquittoBroker
    {
        let executable = try ExternalTool.locate("mosquitto", package: "mosquitto")
        let directory = try makeDirectory()
        let certificates = options.tls ? try TestCertificates.make(in: directory) : nil
        if !options.accounts.isEmpty {
            let passwd = try ExternalTool.locate("mosquitto_passwd", package: "mosquitto")
            let passwordFile = directory + "/passwords"
            try TestCertificates.write("", to: passwordFile)
            for (user, password) in options.accounts.sorted(by: { $0.key < $1.key }) {
                try ExternalTool.run(passwd, ["-b", passwordFile, user, password], in: directory)
            }
        }
        if let rules = options.aclRules {
            try TestCertificates.write(rules.joined(separator: "\n") + "\n", to: directory + "/acl")
        }
        var lastLog = ""
        for _ in 0..<5 {
            let port = try LoopbackPort.pickFree()
            let configuration = configurationText(options, port: port, directory: directory, tls: certificates)
            try TestCertificates.write(configuration, to: directory + "/mosquitto.conf")
            switch await launch(executable, directory: directory, port: port) {
            case .success(let process):
                return MosquittoBroker(
                    port: port, directory: directory, options: options, certificates: certificates,
                    executable: executable, process: process
                )
            case .failure(let log):
                lastLog = log
            }
        }
        throw .brokerDidNotStart(port: 0, log: lastLog)
    }

    /// Starts a broker, runs `body` with it, and cleans up whatever happens.
    public static func with<Result>(
        _ options: BrokerOptions = BrokerOptions(),
        isolation: isolated (any Actor)? = #isolation,
        _ body: (MosquittoBroker) async throws -> Result
    ) async throws -> Result {
        let broker = try await start(options)
        defer { broker.cleanup() }
        return try await body(broker)
    }

    /// Whether the broker process is alive.
    public var isRunning: Bool {
        child.withLock { $0?.isRunning ?? false }
    }

    /// Stops the broker gracefully (SIGTERM, as systemd does) and waits until it has exited.
    ///
    /// With persistence on, mosquitto writes its database before exiting. If it is still alive after
    /// 10 s it is killed.
    public func stop() async {
        guard let process = child.withLock({ $0 }) else { return }
        process.send(SIGTERM)
        if await !process.waitForExit(timeout: .seconds(10)) {
            process.send(SIGKILL)
            _ = await process.waitForExit(timeout: .seconds(5))
        }
    }

    /// Kills the broker without warning (SIGKILL), as a crash or power loss would, and waits for it to exit.
    public func kill() async {
        guard let process = child.withLock({ $0 }) else { return }
        process.send(SIGKILL)
        _ = await process.waitForExit(timeout: .seconds(5))
    }

    /// Starts the broker again on the same port with the same directory, stopping it first if it runs.
    ///
    /// Retries for a few seconds in case the port is briefly unavailable, then throws with the log.
    public func restart() async throws(BrokerFixtureError) {
        await stop()
        var lastLog = ""
        for _ in 0..<10 {
            switch await Self.launch(executable, directory: directory, port: port) {
            case .success(let process):
                child.withLock { $0 = process }
                return
            case .failure(let log):
                lastLog = log
                try? await Task.sleep(for: .milliseconds(300))
            }
        }
        throw .brokerDidNotStart(port: port, log: lastLog)
    }

    /// The broker's log file and anything it wrote to stdout/stderr, for failure messages.
    public var log: String {
        Self.readLog(directory: directory)
    }

    /// Kills the broker if it still runs and removes its directory (unless `WHEREABOUTS_KEEP_BROKER_DIRS` is set).
    ///
    /// Safe to call more than once; ``deinit`` calls it too.
    public func cleanup() {
        killScratchProcess(child, removing: directory)
    }

    // MARK: - Internals

    private enum Launch {
        case success(ChildProcess)
        case failure(log: String)
    }

    private static func launch(_ executable: String, directory: String, port: Int) async -> Launch {
        // On a restart the log already says "running" once: wait for one more.
        let runningBefore = occurrences(of: " running", in: readLog(directory: directory))
        let process: ChildProcess
        do {
            process = try ChildProcess(
                executable: executable, arguments: ["-c", directory + "/mosquitto.conf"],
                outputPath: directory + "/mosquitto.out"
            )
        } catch {
            return .failure(log: "\(error)")
        }
        // mosquitto logs "running" after opening its listeners; the TCP probe double-checks that the
        // port is really ours (a foreign listener would have made our bind fail and the process exit).
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            guard process.isRunning else { break }
            if occurrences(of: " running", in: readLog(directory: directory)) > runningBefore,
                LoopbackPort.acceptsConnections(port)
            {
                if process.isRunning { return .success(process) }
                break
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        process.send(SIGKILL)
        _ = await process.waitForExit(timeout: .seconds(5))
        return .failure(log: readLog(directory: directory))
    }

    private static func occurrences(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    private static func readLog(directory: String) -> String {
        let logFile = (try? String(contentsOfFile: directory + "/mosquitto.log", encoding: .utf8)) ?? ""
        let output = (try? String(contentsOfFile: directory + "/mosquitto.out", encoding: .utf8)) ?? ""
        return output.isEmpty ? logFile : logFile + "\n--- stdout/stderr ---\n" + output
    }

    private static func makeDirectory() throws(BrokerFixtureError) -> String {
        var template = Array((NSTemporaryDirectory() + "/whereabouts-broker-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
        guard let made else { throw .fileNotWritten(path: NSTemporaryDirectory(), reason: "mkdtemp: errno \(errno)") }
        return made
    }

    static func configurationText(
        _ options: BrokerOptions, port: Int, directory: String, tls: TestCertificates?
    ) -> String {
        var lines: [String] = []
        // As root, mosquitto drops to user `mosquitto` and then cannot write into our directory.
        if getuid() == 0 {
            lines.append("user root")
        }
        lines += [
            "per_listener_settings false",
            "allow_anonymous \(options.allowAnonymous)",
            "log_dest file \(directory)/mosquitto.log",
            "log_type all",
            "connection_messages true",
        ]
        if options.persistence {
            lines += [
                "persistence true",
                "persistence_location \(directory)/",
                "autosave_on_changes true",
                "autosave_interval 1",
            ]
        } else {
            lines.append("persistence false")
        }
        if !options.accounts.isEmpty {
            lines.append("password_file \(directory)/passwords")
        }
        if options.aclRules != nil {
            lines.append("acl_file \(directory)/acl")
        }
        if let maxPacketSize = options.maxPacketSize {
            lines.append("max_packet_size \(maxPacketSize)")
        }
        lines.append("listener \(port) 127.0.0.1")
        if let tls {
            lines += [
                "cafile \(tls.caFile)",
                "certfile \(tls.serverCertificateFile)",
                "keyfile \(tls.serverKeyFile)",
                "require_certificate \(options.requireClientCertificate)",
            ]
        }
        lines += options.extraConfiguration
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Kills a test's child process with SIGKILL (its state is scratch) if it still runs, waits for it, and removes its
/// directory unless `WHEREABOUTS_KEEP_BROKER_DIRS` is set: the cleanup of every program a fixture starts.
func killScratchProcess(_ child: borrowing Mutex<ChildProcess?>, removing directory: String) {
    child.withLock { process in
        if let running = process {
            running.send(SIGKILL)
            running.waitForExitBlocking()
        }
        process = nil
    }
    if ProcessInfo.processInfo.environment["WHEREABOUTS_KEEP_BROKER_DIRS"] == nil {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
