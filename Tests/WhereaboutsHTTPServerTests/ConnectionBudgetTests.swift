import Testing

@testable import WhereaboutsHTTPServer

/// The budget's choices, without sockets.
@Suite("Connection budget and refusal log")
struct ConnectionBudgetTests {
    @Test("under the limit a newcomer is admitted; at it, the oldest unfinished connection is given up")
    func oldestUnfinishedFirst() {
        var budget = ConnectionBudget(limit: 3, perAddressLimit: 3)
        for id in 1...3 { budget.admit(id, address: "a") }
        budget.set(1, .busy)  // being answered: never given up
        #expect(budget.decide(newcomerFrom: "a") == .evict(2))
        budget.remove(2)
        #expect(budget.decide(newcomerFrom: "a") == .admit)
        budget.admit(4, address: "a")
        #expect(budget.decide(newcomerFrom: "a") == .evict(3))
    }

    @Test("a connection that only lingers goes before any unfinished one; when all are busy the newcomer is refused")
    func lingeringFirstBusyNever() {
        var budget = ConnectionBudget(limit: 3, perAddressLimit: 3)
        for id in 1...3 { budget.admit(id, address: "a") }
        budget.set(3, .busy)
        budget.set(3, .lingering)
        #expect(budget.decide(newcomerFrom: "a") == .evict(3))
        budget.set(3, .busy)  // never happens in the server; here it shows that standing is what counts
        budget.set(1, .busy)
        budget.set(2, .busy)
        #expect(budget.decide(newcomerFrom: "a") == .refuse)
    }

    @Test("an address at its own limit gives up its own oldest; a full budget takes from the address holding most")
    func perAddress() {
        var budget = ConnectionBudget(limit: 6, perAddressLimit: 4)
        budget.admit(1, address: "quiet")
        budget.admit(2, address: "quiet")
        for id in 3...6 { budget.admit(id, address: "loud") }
        #expect(budget.decide(newcomerFrom: "loud") == .evict(3), "loud is at its own limit")
        #expect(budget.decide(newcomerFrom: "third") == .evict(3), "full: the heaviest address pays")
        budget.remove(3)
        budget.remove(4)
        budget.remove(5)
        budget.admit(7, address: "third")
        budget.admit(8, address: "third")
        budget.admit(9, address: "third")
        // quiet 2, third 3, loud 1: the heaviest is third, whose oldest is 7.
        #expect(budget.decide(newcomerFrom: "quiet") == .evict(7))
        #expect(budget.count == 6)
        #expect(budget.count(from: "loud") == 1)
    }

    @Test("a hundred thousand connections coming and going leave nothing behind")
    func churn() {
        var budget = ConnectionBudget(limit: 8, perAddressLimit: 8)
        for id in 0..<100_000 {
            if case .evict(let victim) = budget.decide(newcomerFrom: "a") { budget.remove(victim) }
            budget.admit(id, address: "a")
            if id % 3 == 0 {
                budget.set(id, .busy)
                budget.set(id, .lingering)
            }
            if id % 5 == 0 { budget.remove(id) }
        }
        #expect(budget.count <= 8)
        #expect(budget.queuedCount <= 2 * budget.count + 16)
        for id in 99_990..<100_000 { budget.remove(id) }
        while case .evict(let victim) = budget.decide(newcomerFrom: "b") { budget.remove(victim) }
        #expect(budget.queuedCount <= 2 * budget.count + 16)
    }

    @Test("the refusal log: a line at once, then at most one per interval, summing up everything between")
    func refusalLog() {
        var log = RefusalLog(interval: 10)
        #expect(log.record("idle given up", now: 100) == "http: refused or given up in the last 1 s: 1 idle given up")
        for step in 1...50 { #expect(log.record("idle given up", now: 100 + Double(step) / 10) == nil) }
        #expect(log.record("405", count: 3, now: 105) == nil)
        #expect(log.line(now: 109.9) == nil)
        #expect(
            log.line(now: 110) == "http: refused or given up in the last 10 s: 50 idle given up, 3 405")
        #expect(log.line(now: 130) == nil, "nothing new, nothing said")
        #expect(log.record("405", now: 131) == "http: refused or given up in the last 1 s: 1 405")
        #expect(log.record("405", now: 132) == nil)
        #expect(log.line(now: 133, final: true) == "http: refused or given up in the last 1 s: 1 405")
    }
}
