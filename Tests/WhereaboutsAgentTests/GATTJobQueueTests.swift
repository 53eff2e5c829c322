import Testing
import WhereaboutsAgent
import WhereaboutsCore
import WhereaboutsWire

@Suite("GATT job queue")
struct GATTJobQueueTests {
    static func request(_ id: String, deadline: Double = 10) -> [UInt8] {
        Array(#"{"id":"\#(id)","tag":"mac-c01122334455","operation":"battery","deadline":\#(deadline)}"#.utf8)
    }

    /// The tag every fixture request names; each result echoes it.
    static let tag = TagIdentity.address(0xC011_2233_4455)

    static func id(_ text: String) -> GATTJobID {
        guard let id = GATTJobID(text) else { preconditionFailure("fixture job id must be valid") }
        return id
    }

    static func started(_ actions: [GATTJobQueue.Action]) -> [String] {
        actions.compactMap { if case .start(let request, _) = $0 { request.id.rawValue } else { nil } }
    }

    static func published(_ actions: [GATTJobQueue.Action]) -> [GATTJobResult] {
        actions.compactMap { if case .publish(let result) = $0 { result } else { nil } }
    }

    static func ok(_ id: String, battery: Int = 80) -> GATTJobResult {
        GATTJobResult(id: Self.id(id), tag: Self.tag, status: .ok, values: GATTJobValues(battery: battery))
    }

    @Test("starts a job at once when the radio is idle, with its whole deadline")
    func startsAtOnce() {
        var queue = GATTJobQueue()
        let actions = queue.receive(Self.request("a", deadline: 12), now: 100)
        #expect(actions.count == 1)
        guard case .start(let request, let remaining)? = actions.first else {
            Issue.record("no start: \(actions)")
            return
        }
        #expect(request.id == Self.id("a"))
        #expect(remaining == 12)
        #expect(queue.runningJob == Self.id("a"))
    }

    @Test("runs one job at a time and starts the next, with what is left of its deadline, when one finishes")
    func oneAtATime() {
        var queue = GATTJobQueue()
        _ = queue.receive(Self.request("a"), now: 0)
        #expect(queue.receive(Self.request("b", deadline: 10), now: 1).isEmpty)
        #expect(queue.receive(Self.request("c"), now: 2).isEmpty)
        #expect(queue.waitingJobs == [Self.id("b"), Self.id("c")])
        let actions = queue.finished(Self.id("a"), Self.ok("a"), now: 4)
        #expect(Self.published(actions) == [Self.ok("a")])
        #expect(actions.last == .start(GATTJobRequest.decodeForTest(Self.request("b")), remaining: 7))
        #expect(queue.runningJob == Self.id("b"))
        #expect(queue.counters.completed == 1)
    }

    @Test("answers busy when the queue is full, and queues again once there is room")
    func busyWhenFull() {
        var queue = GATTJobQueue(capacity: 2)
        _ = queue.receive(Self.request("run"), now: 0)
        _ = queue.receive(Self.request("w1"), now: 0)
        _ = queue.receive(Self.request("w2"), now: 0)
        let full = queue.receive(Self.request("w3"), now: 0)
        #expect(Self.published(full) == [GATTJobResult(id: Self.id("w3"), tag: Self.tag, status: .busy)])
        #expect(queue.waitingJobs == [Self.id("w1"), Self.id("w2")])
        #expect(queue.counters.busy == 1)
        _ = queue.finished(Self.id("run"), Self.ok("run"), now: 1)
        #expect(queue.receive(Self.request("w3"), now: 1).isEmpty)
        #expect(queue.waitingJobs == [Self.id("w2"), Self.id("w3")])
    }

    @Test("holds the default eight jobs behind the running one")
    func defaultCapacity() {
        var queue = GATTJobQueue()
        for index in 0...8 { _ = queue.receive(Self.request("j\(index)"), now: 0) }
        #expect(queue.waitingJobs.count == 8)
        #expect(Self.published(queue.receive(Self.request("j9"), now: 0)).first?.status == .busy)
    }

    @Test("times out a running job at its deadline, cancels it, and starts the next only once it stopped")
    func timesOutRunning() {
        var queue = GATTJobQueue()
        _ = queue.receive(Self.request("a", deadline: 5), now: 0)
        _ = queue.receive(Self.request("b", deadline: 60), now: 1)
        #expect(queue.tick(now: 5).isEmpty)
        let expired = queue.tick(now: 5.5)
        #expect(
            expired == [
                .publish(GATTJobResult(id: Self.id("a"), tag: Self.tag, status: .timeout)), .cancel(Self.id("a")),
            ])
        // A second tick does not answer or cancel it again, and b waits for a to stop.
        #expect(queue.tick(now: 6).isEmpty)
        #expect(queue.runningJob == Self.id("a"))
        // The cancelled job's own late result is dropped; b starts.
        let stopped = queue.finished(
            Self.id("a"), GATTJobResult(id: Self.id("a"), tag: Self.tag, status: .linkLost), now: 7)
        #expect(Self.published(stopped).isEmpty)
        #expect(Self.started(stopped) == ["b"])
        #expect(queue.counters.timedOut == 1)
        #expect(queue.counters.late == 1)
    }

    @Test("answers timeout for a job that finished after its deadline before a tick saw it")
    func finishedLate() {
        var queue = GATTJobQueue()
        _ = queue.receive(Self.request("a", deadline: 5), now: 0)
        let actions = queue.finished(Self.id("a"), Self.ok("a"), now: 6)
        #expect(Self.published(actions) == [GATTJobResult(id: Self.id("a"), tag: Self.tag, status: .timeout)])
    }

    @Test("times out waiting jobs whose deadline passed in the queue, without running them")
    func timesOutWaiting() {
        var queue = GATTJobQueue()
        _ = queue.receive(Self.request("a", deadline: 100), now: 0)
        _ = queue.receive(Self.request("short", deadline: 2), now: 0)
        _ = queue.receive(Self.request("long", deadline: 50), now: 0)
        let actions = queue.tick(now: 3)
        #expect(actions == [.publish(GATTJobResult(id: Self.id("short"), tag: Self.tag, status: .timeout))])
        #expect(queue.waitingJobs == [Self.id("long")])
        // One that expires between ticks is answered when its turn comes, and the next one runs.
        _ = queue.receive(Self.request("brief", deadline: 1), now: 40)
        let next = queue.finished(Self.id("a"), Self.ok("a"), now: 60)
        #expect(Self.published(next).map(\.status) == [.ok, .timeout, .timeout])
        #expect(Self.published(next).map(\.id) == [Self.id("a"), Self.id("long"), Self.id("brief")])
        #expect(Self.started(next).isEmpty)
        #expect(queue.runningJob == nil)
    }

    @Test("refuses malformed requests with a result, and keeps running the others")
    func refusesMalformed() {
        var queue = GATTJobQueue()
        _ = queue.receive(Self.request("a"), now: 0)
        for bytes in [[], [0xFF], Array(#"{"id":"x","operation":"battery"}"#.utf8)] {
            let actions = queue.receive(bytes, now: 0)
            #expect(actions.count == 1)
            guard case .refused? = Self.published(actions).first?.status else {
                Issue.record("not refused: \(actions)")
                continue
            }
        }
        #expect(
            Self.published(queue.receive(Array(#"{"id":"x","operation":"battery"}"#.utf8), now: 0)).first?.id
                == Self.id("x"))
        #expect(queue.runningJob == Self.id("a"))
        #expect(queue.counters.refused == 4)
    }

    @Test("refuses a job id already running or waiting")
    func refusesDuplicate() {
        var queue = GATTJobQueue()
        _ = queue.receive(Self.request("a"), now: 0)
        _ = queue.receive(Self.request("b"), now: 0)
        for id in ["a", "b"] {
            let result = Self.published(queue.receive(Self.request(id), now: 0)).first
            #expect(result?.id == Self.id(id))
            guard case .refused? = result?.status else {
                Issue.record("not refused: \(String(describing: result))")
                continue
            }
        }
        #expect(queue.waitingJobs == [Self.id("b")])
    }

    @Test("ignores a finish for a job that is not running")
    func ignoresStrayFinish() {
        var queue = GATTJobQueue()
        _ = queue.receive(Self.request("a"), now: 0)
        #expect(queue.finished(Self.id("zz"), Self.ok("zz"), now: 1).isEmpty)
        #expect(queue.runningJob == Self.id("a"))
        #expect(queue.counters.late == 1)
    }

    @Test("answers every request exactly once, whatever the order of events (seeded)")
    func answersEveryRequestOnce() {
        var generator = SplitMix64(seed: 0x47)
        for _ in 0..<200 {
            var queue = GATTJobQueue(capacity: 3)
            var answers: [String: Int] = [:]
            var now = 0.0
            var sent = 0
            func record(_ actions: [GATTJobQueue.Action]) {
                for result in Self.published(actions) { answers[result.id?.rawValue ?? "?", default: 0] += 1 }
            }
            for _ in 0..<40 {
                now += Double(generator.next() % 4)
                switch generator.next() % 3 {
                case 0:
                    record(
                        queue.receive(Self.request("j\(sent)", deadline: Double(1 + generator.next() % 8)), now: now))
                    sent += 1
                case 1:
                    if let id = queue.runningJob {
                        record(queue.finished(id, GATTJobResult(id: id, tag: Self.tag, status: .ok), now: now))
                    }
                default: record(queue.tick(now: now))
                }
            }
            // Drain: finish whatever runs, and let every deadline pass.
            now += 100
            record(queue.tick(now: now))
            while let id = queue.runningJob {
                record(queue.finished(id, GATTJobResult(id: id, tag: Self.tag, status: .ok), now: now))
            }
            #expect(answers.count == sent)
            #expect(answers.values.allSatisfy { $0 == 1 }, "\(answers)")
        }
    }
}

extension GATTJobRequest {
    fileprivate static func decodeForTest(_ bytes: [UInt8]) -> GATTJobRequest {
        guard case .success(let request) = decode(bytes) else { preconditionFailure("fixture request must decode") }
        return request
    }
}
