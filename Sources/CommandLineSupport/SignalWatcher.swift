@preconcurrency import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Turns SIGINT and SIGTERM (and SIGHUP) into async streams, so that a task group can shut down (or reload) in order.
///
/// The signals are ignored by default handling while watched (so they no longer kill the process) and
/// delivered through Dispatch signal sources.
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
            let queue = DispatchQueue(label: "whereabouts.signals")
            var sources: [any DispatchSourceSignal] = []
            for number in numbers {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { continuation.yield(number) }
                source.resume()
                sources.append(source)
            }
            let held = sources
            continuation.onTermination = { _ in
                for source in held { source.cancel() }
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
