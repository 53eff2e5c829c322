import DetachedThread
public import Testing

/// Runs each test of a suite on a thread of its own, not on Swift's shared workers, one such test at a time.
///
/// The tests of a process run side by side on Swift's shared workers, as many as the machine has cores (two here). A
/// test that computes for a minute holds one of them for that minute. Two such tests at once held both, and every test
/// of the process that waits on a broker, a child process or a timer stood still until one ended: a broker test that
/// takes 1.5 s alone took 30 s beside two of them, and in full runs ran past its time limit. A test marked
/// `.ownThread` runs on a thread made for it (``ThreadExecutor``), so that the shared workers stay free for the tests
/// that wait; and such tests take turns (``turns``), so that they do not crowd the cores instead (all at once, they
/// made the timing of the end-to-end tests fail). For tests that compute, not for ones that need several tasks to run
/// at once: every task of such a test runs on that one thread.
public struct OwnThreadTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    /// One marked test runs at a time.
    static let turns = Turns()

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // The scope of a suite, or of a test as a whole, is left as it is: each test case gets the thread.
        guard testCase != nil else { return try await function() }
        await Self.turns.take()
        guard let executor = ThreadExecutor() else {
            await Self.turns.give()
            return try await function()
        }
        do {
            try await withTaskExecutorPreference(executor) { try await function() }
        } catch {
            await Self.end(executor)
            throw error
        }
        await Self.end(executor)
    }

    /// Ends the executor's thread from a shared worker (a thread cannot wait for itself to end), then gives the turn
    /// to the next test.
    private static func end(_ executor: ThreadExecutor) async {
        await Task.detached { executor.shutdown() }.value
        await turns.give()
    }

    /// A turn at a time, in the order asked for; waiting suspends, it holds no thread.
    actor Turns {
        private var busy = false
        private var waiting: [CheckedContinuation<Void, Never>] = []

        func take() async {
            guard busy else {
                busy = true
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func give() {
            if waiting.isEmpty {
                busy = false
            } else {
                waiting.removeFirst().resume()
            }
        }
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Each test on a thread of its own (``OwnThreadTrait``).
    public static var ownThread: Self { Self() }
}
