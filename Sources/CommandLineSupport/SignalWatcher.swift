@preconcurrency import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Turns SIGINT and SIGTERM (and SIGHUP) into async streams, so that a task group can shut down (or reload) in order.
///
/// A watched signal gets a handler that writes its number to a pipe (all a handler may safely do), and one Dispatch
/// read source on the pipe hands it to every stream watching that signal. A handler, unlike an ignored signal
/// read through Dispatch's signal sources, works whichever thread the kernel picks: those sources read a signalfd,
/// which sees only a signal every thread blocks, and a process with threads that do not (each libmosquitto client
/// runs one) dropped it. `whereabouts sim --broker`, with an MQTT client per simulated agent, ignored SIGTERM and
/// Ctrl-C that way.
public enum SignalWatcher {
    /// A stream of the termination signals received (SIGINT, SIGTERM); iterate it in one task.
    public static func terminationSignals() -> AsyncStream<Int32> {
        signals([SIGINT, SIGTERM])
    }

    /// A stream of the SIGHUPs received (reload, by the daemon convention); iterate it in one task.
    public static func hangups() -> AsyncStream<Int32> {
        signals([SIGHUP])
    }

    private static func signals(_ numbers: [Int32]) -> AsyncStream<Int32> {
        AsyncStream { continuation in
            let id = SignalRelay.shared.add(numbers, continuation)
            continuation.onTermination = { _ in SignalRelay.shared.remove(id) }
        }
    }
}

/// The write end of the signal pipe, for the handler (a C function pointer captures nothing).
private let signalPipeWrite = Atomic<Int32>(-1)

/// The signals' one pipe, its reader, and the streams each signal goes to.
private final class SignalRelay: Sendable {
    static let shared = SignalRelay()

    private struct Watchers {
        var next = 0
        var streams: [Int: (numbers: [Int32], continuation: AsyncStream<Int32>.Continuation)] = [:]
        var handled: Set<Int32> = []
    }

    private let watchers = Mutex(Watchers())
    private let readEnd: Int32
    private let source: (any DispatchSourceRead)?

    private init() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            readEnd = -1
            source = nil
            return
        }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        readEnd = ends[0]
        signalPipeWrite.store(ends[1], ordering: .releasing)
        let source = DispatchSource.makeReadSource(
            fileDescriptor: ends[0], queue: DispatchQueue(label: "whereabouts.signals"))
        self.source = source
        source.setEventHandler { [readEnd = ends[0]] in SignalRelay.shared.drain(readEnd) }
        source.resume()
    }

    /// Starts sending `numbers` to `continuation`; the first watcher of a signal installs its handler.
    func add(_ numbers: [Int32], _ continuation: AsyncStream<Int32>.Continuation) -> Int {
        watchers.withLock { watchers in
            let id = watchers.next
            watchers.next += 1
            watchers.streams[id] = (numbers, continuation)
            for number in numbers where !watchers.handled.contains(number) {
                watchers.handled.insert(number)
                var action = sigaction()
                action.__sigaction_handler.sa_handler = { number in
                    var byte = UInt8(truncatingIfNeeded: number)
                    let descriptor = signalPipeWrite.load(ordering: .acquiring)
                    if descriptor >= 0 { _ = write(descriptor, &byte, 1) }
                }
                sigemptyset(&action.sa_mask)
                action.sa_flags = SA_RESTART
                sigaction(number, &action, nil)
            }
            return id
        }
    }

    /// Stops a stream. The handler stays: a signal no one watches any more is read and dropped, as before.
    func remove(_ id: Int) {
        _ = watchers.withLock { $0.streams.removeValue(forKey: id) }
    }

    /// Reads the signals that arrived and yields each to the streams watching it.
    private func drain(_ descriptor: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { return }
            let streams = watchers.withLock { Array($0.streams.values) }
            for byte in buffer[0..<count] {
                let number = Int32(byte)
                for stream in streams where stream.numbers.contains(number) { stream.continuation.yield(number) }
            }
        }
    }
}

/// Tells systemd about the service's state (sd_notify), without linking libsystemd.
///
/// Does nothing when the service was not started by systemd with `Type=notify` (no `NOTIFY_SOCKET`).
public struct SystemdNotifier: Sendable {
    private let path: String?
    /// How often to send `WATCHDOG=1`, when the unit has `WatchdogSec=`: half the watchdog interval.
    public let watchdogInterval: Double?

    public init() {
        path = Environment.value("NOTIFY_SOCKET")
        watchdogInterval = Environment.value("WATCHDOG_USEC").flatMap(Double.init).map { $0 / 2_000_000 }
    }

    /// Sends `READY=1`.
    public func ready() { send("READY=1") }
    /// Sends `WATCHDOG=1`.
    public func watchdog() { send("WATCHDOG=1") }
    /// Sends `STOPPING=1`.
    public func stopping() { send("STOPPING=1") }

    private func send(_ message: String) {
        guard let path, !path.isEmpty else { return }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        // An abstract socket name starts with '@' in the variable and with a NUL byte on the wire.
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        var text = message
        text.withUTF8 { payload in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    _ = sendto(descriptor, payload.baseAddress, payload.count, 0, socketAddress, length)
                }
            }
        }
    }
}
