import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A task executor with one thread of its own: a task that prefers it runs there, beside Swift's shared workers
/// instead of among them.
///
/// For a stage of a pipeline that must run at the same time as the stage it feeds. Two tasks that hand work to each
/// other through async streams on Swift's global executor on Linux were seen to run by turns, one idle while the other
/// worked, though the machine had a core free for each (the locator's decoding and its loop: see docs/scale.md).
///
/// The thread lives as long as the executor; ``shutdown()`` ends it once the jobs already enqueued have run. Call it
/// before letting the executor go, from another thread: `deinit` calls it too, and a `deinit` run by one of the
/// executor's own jobs (the last reference dropped there) could not wait for its own thread.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: the semaphore is the pthread one, initialized once and destroyed only after the thread has been
    // joined; the rest is under mutexes.
    private struct State {
        var jobs: [UnownedJob] = []
        var next = 0
        var stopping = false
    }

    private let state = Mutex(State())
    private let wake: UnsafeMutablePointer<sem_t>
    private let thread = Mutex<pthread_t?>(nil)

    /// Starts the executor's thread, named `name` (as `top -H` shows it; 15 bytes at most); nil when the system will
    /// not make one.
    public init?(name: String = "executor") {
        wake = .allocate(capacity: 1)
        sem_init(wake, 0, 0)
        // Unretained: the thread ends in `shutdown()`, which `deinit` calls and waits for.
        let this = Unmanaged.passUnretained(self)
        switch DetachedThread.make(name: name, { this.takeUnretainedValue().serve() }) {
        case .success(let made): thread.withLock { $0 = made }
        case .failure: return nil
        }
    }

    deinit {
        shutdown()
        sem_destroy(wake)
        wake.deallocate()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        state.withLock { $0.jobs.append(job) }
        sem_post(wake)
    }

    /// Ends the thread after the jobs already enqueued and waits for it. Jobs enqueued later are never run.
    public func shutdown() {
        let first = state.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first, let made = thread.withLock({ $0 }) else { return }
        sem_post(wake)
        pthread_join(made, nil)
    }

    private func serve() {
        while true {
            while sem_wait(wake) != 0 {}
            let job = state.withLock { state -> UnownedJob? in
                guard state.next < state.jobs.count else { return nil }
                let job = state.jobs[state.next]
                state.next += 1
                if state.next == state.jobs.count {
                    state.jobs.removeAll(keepingCapacity: true)
                    state.next = 0
                }
                return job
            }
            if let job {
                job.runSynchronously(on: asUnownedTaskExecutor())
            } else if state.withLock({ $0.stopping }) {
                return
            }
        }
    }
}
