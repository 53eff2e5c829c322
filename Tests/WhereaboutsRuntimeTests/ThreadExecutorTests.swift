import DetachedThread
import Glibc
import Synchronization
import Testing

/// A flag tasks can share.
final class Flag: Sendable {
    private let value = Atomic(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}

/// Which threads ran a task, how many ran, and whether two ever ran at once.
final class RunRecord: Sendable {
    private let seen = Mutex<(threads: Set<UInt>, runs: Int)>(([], 0))
    private let inside = Atomic(0)
    let overlapped = Flag()

    var threads: Int { seen.withLock { $0.threads.count } }
    var runs: Int { seen.withLock { $0.runs } }

    func run() {
        if inside.add(1, ordering: .acquiringAndReleasing).newValue > 1 { overlapped.set() }
        seen.withLock {
            $0.threads.insert(UInt(pthread_self()))
            $0.runs += 1
        }
        inside.subtract(1, ordering: .acquiringAndReleasing)
    }
}

// Five minutes, as for the broker suites: the limit only catches a hang.
@Suite("Thread executor", .timeLimit(.minutes(5)))
struct ThreadExecutorTests {
    @Test("a task that prefers the executor runs while every one of Swift's shared workers is busy")
    func runsBesideBusyWorkers() async throws {
        let executor = try #require(ThreadExecutor())
        defer { executor.shutdown() }
        let flag = Flag()
        // More spinning tasks than the shared workers (as wide as the machine): each holds its worker until the
        // flag is set, or gives up after 5 s. Only a thread outside them can set it in time.
        let spinners = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) + 2
        let released = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<spinners {
                group.addTask {
                    let deadline = ContinuousClock.now + .seconds(5)
                    while !flag.isSet, ContinuousClock.now < deadline {}
                    return flag.isSet
                }
            }
            group.addTask(executorPreference: executor) {
                flag.set()
                return true
            }
            var all: [Bool] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(released.count == spinners + 1)
        #expect(released.allSatisfy { $0 }, "a spinner gave up: the executor's task waited for a shared worker")
    }

    @Test("tasks that prefer it all run, one at a time on its one thread, and shutdown waits for them")
    func runsEveryTask() async throws {
        let executor = try #require(ThreadExecutor())
        let record = RunRecord()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<1_000 {
                group.addTask(executorPreference: executor) { record.run() }
            }
        }
        executor.shutdown()
        executor.shutdown()  // a second time does nothing
        #expect(record.threads == 1)
        #expect(record.runs == 1_000)
        #expect(!record.overlapped.isSet)
    }

    @Test("its thread, and every thread started by name, carries that name as top -H and perf show it")
    func namesItsThreads() async throws {
        let executor = try #require(ThreadExecutor(name: "prepare"))
        defer { executor.shutdown() }
        let onExecutor = await Task(executorPreference: executor) { Self.threadName() }.value
        #expect(onExecutor == "prepare")
        // Linux keeps 15 bytes of a name; a longer one is cut there, not refused (a refused one would leave the
        // creator's, one of Swift's shared workers').
        let (names, continuation) = AsyncStream.makeStream(of: String.self)
        #expect(DetachedThread.start(name: "a-name-longer-than-fifteen") { continuation.yield(Self.threadName()) } == 0)
        var iterator = names.makeAsyncIterator()
        #expect(await iterator.next() == "a-name-longer-t")
    }

    /// The calling thread's name, from `/proc/thread-self/comm`.
    static func threadName() -> String {
        let file = open("/proc/thread-self/comm", O_RDONLY)
        guard file >= 0 else { return "" }
        defer { close(file) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
        // The kernel ends the name with a newline.
        return String(decoding: bytes.prefix(max(count, 0)).filter { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }
}
