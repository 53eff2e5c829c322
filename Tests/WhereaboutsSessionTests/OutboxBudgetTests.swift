import Testing
import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

/// The outbox's byte budget (issue 48): a flood of new tag ids, each a topic of its own, is bounded in bytes; the
/// unnamed tags' states go first, and what the site names is never dropped.
@Suite("Outbox byte budget")
struct OutboxBudgetTests {
    static let site = "f7826da6-4fa2-4e98-8024-bc5b71e0893e"

    /// The `number`th tag of the flood (majors from 1000 on), or a named one's with `major` below.
    func tag(_ number: Int, major: Int = 1000) throws -> TagIdentity {
        try #require(TagIdentity("ibeacon-\(Self.site)-\(major + number / 65_536)-\(number % 65_536)"))
    }

    /// A tag's position, as the tag publisher makes it: retained, QoS 1 (a clear or a republished state).
    func state(_ tag: TagIdentity, _ payload: String, priority: Publication.Priority) -> Publication {
        Publication(
            topic: topics.position(tag: tag), payload: payload, qos: .atLeastOnce, retain: true, priority: priority)
    }

    @Test("a flood of 100,000 new topics holds at most the budget: the oldest unnamed states go, each counted")
    func floodIsBounded() throws {
        let budget = 64 * 1024
        var outbox = Outbox(policy: .untilHandedOver(capacity: 10_000), byteLimit: budget)
        let named = state(try tag(1, major: 100), #"{"x":1}"#, priority: .background)
        outbox.enqueue(named)
        let flood = 100_000
        for minor in 0..<flood {
            outbox.enqueue(state(try tag(minor), String(repeating: "p", count: 200), priority: .expendable))
            #expect(outbox.heldBytes <= budget)
        }
        #expect(outbox.statistics.peakBytes <= budget)
        // Held plus shed is everything enqueued: each drop is counted.
        #expect(outbox.count + outbox.statistics.shed == flood + 1)
        #expect(outbox.statistics.shed > flood - budget / 256)
        // The named tag's state stays, and leaves first; the newest unnamed states are the ones kept.
        #expect(outbox.held.first?.publication == named)
        #expect(outbox.nextToSend()?.publication == named)
        #expect(outbox.held.last?.publication.topic == topics.position(tag: try tag(flood - 1)))
        // What is held is what the budget counts.
        #expect(outbox.heldBytes == outbox.held.map { Outbox.cost(of: $0.publication) }.reduce(0, +))
    }

    @Test("over budget without unnamed states, events go oldest first; the site's retained state and status stay")
    func onlyExpendableAndEventsAreShed() throws {
        let event = { (seq: Int) in
            Publication(
                topic: topics.events, payload: String(repeating: "\(seq % 10)", count: 500), qos: .atLeastOnce,
                retain: false)
        }
        let occupancy = Publication(
            topic: topics.calibration, payload: String(repeating: "o", count: 4_000), qos: .atLeastOnce, retain: true,
            priority: .urgent)
        var outbox = Outbox(policy: .untilHandedOver(capacity: 10_000), byteLimit: 4_000)
        outbox.enqueueFirst(
            Publication(topic: topics.locatorStatus, payload: "online", qos: .atLeastOnce, retain: true))
        outbox.enqueue(occupancy)
        for seq in 0..<5 { outbox.enqueue(event(seq)) }
        // The status and the retained state alone exceed the budget: they stay; every event went as it came.
        #expect(outbox.held.map(\.publication.topic) == [topics.locatorStatus, topics.calibration])
        #expect(outbox.statistics.shed == 5)
        #expect(outbox.heldBytes > 4_000)
    }

    @Test("a newer state of an unsent topic replaces it, and the bytes follow; sending and release give them back")
    func coalescingAndReleaseKeepTheCount() throws {
        var outbox = Outbox(policy: .untilHandedOver(capacity: 10), byteLimit: 1 << 20)
        let alpha = try tag(1)
        outbox.enqueue(state(alpha, String(repeating: "a", count: 300), priority: .expendable))
        outbox.enqueue(state(alpha, "", priority: .expendable))
        #expect(outbox.count == 1)
        #expect(outbox.statistics.coalesced == 1)
        #expect(outbox.heldBytes == Outbox.cost(of: state(alpha, "", priority: .expendable)))
        let entry = try #require(outbox.nextToSend())
        outbox.sent(id: entry.id, messageID: 1)
        #expect(outbox.heldBytes == 0)
        #expect(outbox.isEmpty)
    }

    @Test("unnamed tags' states leave after the named ones, and the lease's release after both")
    func expendableLeavesLast() throws {
        var outbox = Outbox(policy: .untilHandedOver(capacity: 10))
        let release = Publication(
            topic: topics.locatorLease, payload: "", qos: .atLeastOnce, retain: true, priority: .last)
        outbox.enqueue(state(try tag(1), "u", priority: .expendable))
        outbox.enqueue(release)
        outbox.enqueue(state(try tag(2, major: 100), "n", priority: .background))
        var order: [Publication] = []
        var messageID = 1
        while let entry = outbox.nextToSend() {
            order.append(entry.publication)
            outbox.sent(id: entry.id, messageID: messageID)
            outbox.acknowledged(messageID: messageID, success: true)
            messageID += 1
        }
        #expect(order.map(\.payload) == ["n", "u", ""])
        #expect(order.last == release)
    }
}
