#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Starts a detached thread of its own for a loop that blocks (in `poll`, `select` or `read`).
///
/// Not a Dispatch queue: on Linux Dispatch's workers are the few threads Swift's tasks share, as wide as the
/// machine, so a loop blocked there would hold one of them (or wait behind busy tasks for one). Used by the MQTT
/// client's network loop, the HCI host's reader and the HTTP server's poll loop.
public enum DetachedThread {
    /// Runs `body` on a new thread named `name` (as `top -H` and `perf` show it; cut to 15 bytes); returns 0, or
    /// `pthread_create`'s error number when the system would not make one.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Int32 {
        switch make(name: name, body) {
        case .success(let thread):
            pthread_detach(thread)
            return 0
        case .failure(let error):
            return error.number
        }
    }

    /// A joinable thread named `name` running `body`, or `pthread_create`'s error number.
    static func make(name: String, _ body: @escaping @Sendable () -> Void) -> Result<pthread_t, CreateError> {
        let start = Unmanaged.passRetained(Start(name: name, body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                Unmanaged<Start>.fromOpaque(context).takeRetainedValue().run()
                return nil
            }, start)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            return .failure(CreateError(number: result))
        }
        return .success(thread)
    }

    /// Names the calling thread through `/proc/thread-self/comm` (`pthread_setname_np` is not in Swift's Glibc
    /// module); a name that cannot be set is left as it was.
    private static func nameThisThread(_ name: String) {
        let file = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard file >= 0 else { return }
        defer { close(file) }
        _ = Array(name.utf8).withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
    }

    /// `pthread_create`'s error number.
    struct CreateError: Error {
        var number: Int32
    }

    /// What the thread runs; travels through pthread's `void *` argument.
    private final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void
        /// Names the thread, then runs the body. Unnamed, a thread keeps its creator's name, which on Linux is often
        /// one of Swift's shared workers ("…default-qos"): every thread of the locator looked alike.
        func run() {
            nameThisThread(name)
            body()
        }

        init(name: String, _ body: @escaping @Sendable () -> Void) {
            // Linux allows 15 bytes and a terminating zero; a longer name would be refused whole.
            var bytes = Array(name.utf8.prefix(15))
            while String(validating: bytes, as: UTF8.self) == nil { bytes.removeLast() }
            self.name = String(decoding: bytes, as: UTF8.self)
            self.body = body
        }
    }
}
