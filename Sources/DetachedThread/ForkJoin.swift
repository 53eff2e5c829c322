#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Runs a few pieces of work side by side on threads of their own and returns when all are done.
///
/// For the engine's update, which splits its tags among a handful of workers a few dozen times a second: threads made
/// for the call, joined before it returns, so nothing outlives it and nothing needs shutting down. Not Swift's task
/// pool, whose threads the locator's service loop and its MQTT callbacks also wait on.
public enum ForkJoin {
    /// Calls `body(0)` … `body(count - 1)`, each on a thread of its own but the first, which runs on the caller's;
    /// returns when every call has returned. A piece whose thread the system will not make runs on the caller's
    /// thread instead, so the work is always done.
    public static func run(_ count: Int, _ body: @Sendable (Int) -> Void) {
        guard count > 1 else {
            if count == 1 { body(0) }
            return
        }
        withoutActuallyEscaping(body) { body in
            // Every thread is joined below, before `body` goes out of scope: it does not really escape.
            var threads: [pthread_t] = []
            var inline: [Int] = []
            for index in 1..<count {
                switch DetachedThread.make(name: "estimate-\(index)", { body(index) }) {
                case .success(let thread): threads.append(thread)
                case .failure: inline.append(index)
                }
            }
            body(0)
            for index in inline { body(index) }
            for thread in threads { pthread_join(thread, nil) }
        }
    }
}
