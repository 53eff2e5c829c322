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
    /// Runs `body` on a new thread; returns 0, or `pthread_create`'s error number when the system would not make one.
    public static func start(_ body: @escaping @Sendable () -> Void) -> Int32 {
        switch make(body) {
        case .success(let thread):
            pthread_detach(thread)
            return 0
        case .failure(let error):
            return error.number
        }
    }

    /// A joinable thread running `body`, or `pthread_create`'s error number.
    static func make(_ body: @escaping @Sendable () -> Void) -> Result<pthread_t, CreateError> {
        let start = Unmanaged.passRetained(Start(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                Unmanaged<Start>.fromOpaque(context).takeRetainedValue().body()
                return nil
            }, start)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            return .failure(CreateError(number: result))
        }
        return .success(thread)
    }

    /// `pthread_create`'s error number.
    struct CreateError: Error {
        var number: Int32
    }

    /// What the thread runs; travels through pthread's `void *` argument.
    private final class Start: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
