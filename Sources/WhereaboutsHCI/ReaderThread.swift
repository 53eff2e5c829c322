import Glibc

/// Starts a detached thread: a transport's reader blocks in `poll`, which must not hold one of the few threads
/// Dispatch and Swift's tasks share on Linux.
enum ReaderThread {
    /// Runs `body` on a new thread; false when the system would not make one.
    static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
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
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// What the thread runs; travels through pthread's `void *` argument.
    private final class Start: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
