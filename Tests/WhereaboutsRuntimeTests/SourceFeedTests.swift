import BrokerFixture
import Synchronization
import Testing
import WhereaboutsRuntime

/// What a source did, in order: each input handed over, and what each `send` returned.
enum FeedStep: Sendable, Hashable {
    case delivered(Int)
    case returned(Int, Bool)
}

/// A log of a feed's steps that the test can wait on.
final class FeedLog: Sendable {
    private let steps = Mutex<[FeedStep]>([])

    var all: [FeedStep] { steps.withLock { $0 } }

    func append(_ step: FeedStep) {
        steps.withLock { $0.append(step) }
    }

    /// Waits until `step` is logged; throws once the waiter has spent `timeout` awake (``Patience``), which only
    /// turns a hang into a failure.
    func waitFor(_ step: FeedStep, timeout: Duration = .seconds(10)) async throws {
        try await poll(
            "\(step)", timeout: timeout, interval: .milliseconds(5), seen: { "\(self.all)" },
            { self.all.contains(step) ? true : nil })
    }
}

// Five minutes, as for the broker suites: the limit only catches a hang.
@Suite("Source feed", .timeLimit(.minutes(5)))
struct SourceFeedTests {
    /// A source that sends `count` inputs in a row, logging each step, until `send` says stop.
    static func runSource(count: Int, limit: Int, credits: AsyncStream<Void>, log: FeedLog) async {
        var feed = SourceFeed<Int>(credits: credits, limit: limit) { log.append(.delivered($0)) }
        for input in 1...count {
            let more = await feed.send(input)
            log.append(.returned(input, more))
            if !more { return }
        }
    }

    @Test("a source that gets `limit` inputs ahead waits for a credit, and send says false once credits end")
    func backPressure() async throws {
        let (credits, creditContinuation) = AsyncStream.makeStream(of: Void.self)
        let log = FeedLog()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await Self.runSource(count: 10, limit: 2, credits: credits, log: log) }

            // Two inputs untaken: the second send waits.
            try await log.waitFor(.delivered(2))
            // Not a timing assertion: a feed that did not wait would have gone on at once.
            try await Task.sleep(for: .milliseconds(100))
            #expect(log.all == [.delivered(1), .returned(1, true), .delivered(2)])

            // The service takes one: the source sends one more and waits again.
            creditContinuation.yield()
            try await log.waitFor(.delivered(3))
            try await Task.sleep(for: .milliseconds(100))
            #expect(log.all == [.delivered(1), .returned(1, true), .delivered(2), .returned(2, true), .delivered(3)])

            // The service stops taking inputs: the waiting send returns false and the source ends.
            creditContinuation.finish()
            try await group.waitForAll()
        }
        #expect(
            log.all == [
                .delivered(1), .returned(1, true), .delivered(2), .returned(2, true), .delivered(3),
                .returned(3, false),
            ])
    }

    @Test("credits given ahead of time are not lost: the source runs on until they are used up")
    func creditsAhead() async {
        let (credits, creditContinuation) = AsyncStream.makeStream(of: Void.self)
        for _ in 0..<3 { creditContinuation.yield() }
        creditContinuation.finish()
        let log = FeedLog()
        // limit 1: every send needs a credit. Three were given, then the service stopped: the fourth send says stop.
        await Self.runSource(count: 10, limit: 1, credits: credits, log: log)
        #expect(
            log.all == [
                .delivered(1), .returned(1, true), .delivered(2), .returned(2, true), .delivered(3),
                .returned(3, true), .delivered(4), .returned(4, false),
            ])
    }

    @Test("a limit below one counts as one: each send waits for its credit")
    func limitAtLeastOne() async throws {
        let (credits, creditContinuation) = AsyncStream.makeStream(of: Void.self)
        let log = FeedLog()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await Self.runSource(count: 2, limit: 0, credits: credits, log: log) }
            try await log.waitFor(.delivered(1))
            try await Task.sleep(for: .milliseconds(100))
            #expect(log.all == [.delivered(1)])
            creditContinuation.yield()
            try await log.waitFor(.delivered(2))
            creditContinuation.yield()
            try await group.waitForAll()
        }
        #expect(log.all == [.delivered(1), .returned(1, true), .delivered(2), .returned(2, true)])
    }

    @Test("a cancelled source's send returns false")
    func cancelled() async {
        let (credits, creditContinuation) = AsyncStream.makeStream(of: Void.self)
        for _ in 0..<10 { creditContinuation.yield() }
        let log = FeedLog()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await Self.runSource(count: 5, limit: 4, credits: credits, log: log)
        }
        await task.value
        #expect(log.all == [.delivered(1), .returned(1, false)])
    }
}
