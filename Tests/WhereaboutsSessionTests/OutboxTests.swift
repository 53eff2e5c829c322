import Testing
import WhereaboutsSession
import WhereaboutsWire

/// The outbox on its own, as the agent's batches use it (the session gates it by the connection).
@Suite("Outbox")
struct OutboxTests {
    func batch(_ seq: Int) -> Publication {
        Publication(topic: topics.events, payload: "\(seq)", qos: .atLeastOnce, retain: false)
    }

    /// Publishes what the outbox offers, numbering message ids from `firstID`; returns (seq, id) pairs.
    func send(_ outbox: inout Outbox, firstID: inout Int) -> [(seq: Int, id: Int)] {
        var sent: [(Int, Int)] = []
        while let entry = outbox.nextToSend() {
            outbox.sent(id: entry.id, messageID: firstID)
            sent.append((Int(entry.publication.payload) ?? -1, firstID))
            firstID += 1
        }
        return sent
    }

    func seqs(_ outbox: Outbox) -> [Int] { outbox.held.map { Int($0.publication.payload) ?? -1 } }

    @Test("a back-pressure outbox never drops: past its capacity it holds on and says it has no room")
    func backPressure() {
        var outbox = Outbox(policy: .untilAcknowledged(capacity: 3, inFlightLimit: 2), overflow: .backPressure)
        var id = 1
        for seq in 0..<3 {
            #expect(outbox.hasRoom)
            outbox.enqueue(batch(seq))
        }
        #expect(!outbox.hasRoom)
        // What the inputs already taken still produce is kept, not dropped.
        outbox.enqueue(batch(3))
        #expect(seqs(outbox) == [0, 1, 2, 3])
        #expect(outbox.statistics.dropped == 0)
        let sent = send(&outbox, firstID: &id)
        outbox.acknowledged(messageID: sent[0].id, success: true)
        #expect(!outbox.hasRoom)
        outbox.acknowledged(messageID: sent[1].id, success: true)
        #expect(outbox.hasRoom)
        #expect(outbox.heldPublications == 2)
        // The same enqueues on a drop-oldest outbox lose the oldest.
        var dropping = Outbox(policy: .untilAcknowledged(capacity: 3, inFlightLimit: 2))
        for seq in 0..<4 { dropping.enqueue(batch(seq)) }
        #expect(dropping.hasRoom)
        #expect(seqs(dropping) == [1, 2, 3])
        #expect(dropping.statistics.dropped == 1)
    }

    @Test("batches go in order within the in-flight window")
    func order() {
        var outbox = Outbox(policy: .untilAcknowledged(capacity: 10, inFlightLimit: 3))
        var id = 1
        for seq in 0..<5 { outbox.enqueue(batch(seq)) }
        let first = send(&outbox, firstID: &id)
        #expect(first.map(\.seq) == [0, 1, 2])
        #expect(outbox.inFlight == 3)
        let released = outbox.acknowledged(messageID: first[1].id, success: true)
        #expect(released?.publication.payload == "1")
        let more = send(&outbox, firstID: &id)
        #expect(more.map(\.seq) == [3])
        #expect(seqs(outbox) == [0, 2, 3, 4])
    }

    @Test("an acknowledgement releases its batch; unknown ids are ignored")
    func ackRelease() {
        var outbox = Outbox(policy: .untilAcknowledged(capacity: 10, inFlightLimit: 8))
        var id = 100
        for seq in 0..<3 { outbox.enqueue(batch(seq)) }
        let sent = send(&outbox, firstID: &id)
        for pair in sent {
            let released = outbox.acknowledged(messageID: pair.id, success: true)
            #expect(released?.publication.payload == "\(pair.seq)")
        }
        #expect(outbox.isEmpty)
        #expect(outbox.acknowledged(messageID: 999, success: true) == nil)
        #expect(outbox.statistics.acknowledged == 3)
    }

    @Test("after a reconnect, what was not acknowledged is sent again, in order")
    func resendAfterReconnect() {
        var outbox = Outbox(policy: .untilAcknowledged(capacity: 10, inFlightLimit: 4))
        var id = 1
        for seq in 0..<6 { outbox.enqueue(batch(seq)) }
        let sent = send(&outbox, firstID: &id)
        #expect(sent.map(\.seq) == [0, 1, 2, 3])
        _ = outbox.acknowledged(messageID: sent[0].id, success: true)
        outbox.connectionLost()
        #expect(outbox.inFlight == 0)
        // A late acknowledgement under an id from before the reconnect does not release anything.
        #expect(outbox.acknowledged(messageID: sent[2].id, success: true) == nil)
        let again = send(&outbox, firstID: &id)
        #expect(again.map(\.seq) == [1, 2, 3, 4])
        #expect(outbox.statistics.republished == 3)
        for pair in again { _ = outbox.acknowledged(messageID: pair.id, success: true) }
        let rest = send(&outbox, firstID: &id)
        #expect(rest.map(\.seq) == [5])
    }

    @Test("beyond its capacity the outbox drops the oldest batches and counts them")
    func dropOldest() {
        var outbox = Outbox(policy: .untilAcknowledged(capacity: 3, inFlightLimit: 8))
        for seq in 0..<7 { outbox.enqueue(batch(seq)) }
        #expect(seqs(outbox) == [4, 5, 6])
        #expect(outbox.statistics.dropped == 4)
        #expect(outbox.statistics.peak == 3)
        #expect(outbox.nextToSend()?.publication.payload == "4")
    }

    @Test("a refused acknowledgement releases the batch and is counted; a discarded batch too")
    func refusals() {
        var outbox = Outbox(policy: .untilAcknowledged(capacity: 600, inFlightLimit: 8))
        outbox.enqueue(batch(0))
        outbox.enqueue(batch(1))
        let first = outbox.nextToSend()
        outbox.sent(id: first?.id ?? -1, messageID: 5)
        #expect(outbox.acknowledged(messageID: 5, success: false)?.publication.payload == "0")
        outbox.discard(id: outbox.nextToSend()?.id ?? -1)
        #expect(outbox.isEmpty)
        #expect(outbox.statistics.refused == 2)
    }

    @Test("thousands of hand-overs keep the outbox empty and cheap; ids stay unique and ordered with a status first")
    func handOverChurn() {
        var outbox = Outbox(policy: .untilHandedOver(capacity: 10))
        var id = 1
        for seq in 0..<5000 {
            outbox.enqueue(batch(seq))
            if seq % 1000 == 0 {
                outbox.enqueueFirst(
                    Publication(topic: topics.locatorStatus, payload: "online", qos: .atLeastOnce, retain: true))
            }
            let sent = send(&outbox, firstID: &id)
            #expect(sent.count == (seq % 1000 == 0 ? 2 : 1))
            // The broker acknowledges each, so the hand-over window never fills.
            for (_, messageID) in sent { outbox.acknowledged(messageID: messageID, success: true) }
        }
        #expect(outbox.isEmpty)
        #expect(outbox.statistics.published == 5000, "the status messages are the session's, not counted")
    }

    /// Version `version` of the retained state `name` (each name its own topic), or an event when not `retain`.
    func state(
        _ name: String, _ version: Int, qos: QoS = .atLeastOnce, retain: Bool = true,
        priority: Publication.Priority = .normal
    ) -> Publication {
        let zone = UInt16(name.unicodeScalars.reduce(0) { $0 * 31 + Int($1.value) } % 60_000)
        return Publication(
            topic: topics.occupancy(floor: 1, zone: zone), payload: "\(name)\(version)", qos: qos, retain: retain,
            priority: priority)
    }

    /// Publishes what the outbox offers; returns the payloads and the message ids.
    func hand(_ outbox: inout Outbox, firstID: inout Int) -> [(payload: String, id: Int)] {
        var sent: [(String, Int)] = []
        while let entry = outbox.nextToSend() {
            outbox.sent(id: entry.id, messageID: firstID)
            sent.append((entry.publication.payload, firstID))
            firstID += 1
        }
        return sent
    }

    @Test("a locator's outbox hands over at most its window of unacknowledged QoS 1 messages; what waits coalesces")
    func handOverWindow() {
        var outbox = Outbox(policy: .untilHandedOver(capacity: 100, handOverLimit: 4))
        var id = 1
        for topic in ["a", "b", "c", "d", "e", "f"] { outbox.enqueue(state(topic, 1)) }
        let first = hand(&outbox, firstID: &id)
        #expect(first.map(\.payload) == ["a1", "b1", "c1", "d1"])
        #expect(outbox.inFlight == 4)
        #expect(outbox.nextToSend() == nil)
        // Newer states while the window is full: e's replaces the one waiting; a's was handed over, so it queues.
        outbox.enqueue(state("e", 2))
        outbox.enqueue(state("a", 2))
        #expect(outbox.statistics.coalesced == 1)
        // A QoS 0 publication is not held by the window.
        outbox.enqueue(state("p", 1, qos: .atMostOnce, priority: .background))
        #expect(hand(&outbox, firstID: &id).map(\.payload) == ["p1"])
        // Acknowledgements open the window again, in order; an unknown id changes nothing.
        outbox.acknowledged(messageID: 999, success: true)
        #expect(outbox.nextToSend() == nil)
        outbox.acknowledged(messageID: first[0].id, success: true)
        outbox.acknowledged(messageID: first[1].id, success: true)
        #expect(hand(&outbox, firstID: &id).map(\.payload) == ["e2", "f1"])
        // A lost connection empties the window: libmosquitto sends what it holds again by itself.
        outbox.connectionLost()
        #expect(hand(&outbox, firstID: &id).map(\.payload) == ["a2"])
        #expect(outbox.isEmpty)
        #expect(outbox.statistics.published == 8)
    }

    @Test("a quarter of the window is kept from background states: an urgent occupancy is handed over at once")
    func windowKeptForUrgent() {
        var outbox = Outbox(policy: .untilHandedOver(capacity: 100, handOverLimit: 8))
        var id = 1
        for index in 0..<12 { outbox.enqueue(state("tag\(index)", 1, priority: .background)) }
        let background = hand(&outbox, firstID: &id)
        #expect(background.count == 6, "three quarters of 8")
        #expect(outbox.nextToSend() == nil)
        // What someone waits on goes into the kept quarter, and events after it; then the window is full.
        outbox.enqueue(state("occupancy", 1, priority: .urgent))
        outbox.enqueue(state("event", 1, retain: false))
        outbox.enqueue(state("event2", 1, retain: false))
        #expect(hand(&outbox, firstID: &id).map(\.payload) == ["occupancy1", "event1"])
        #expect(outbox.inFlight == 8)
        // An acknowledgement of a background state leaves the window full for background ones (7 of 8 in flight):
        // the event waiting takes the place.
        outbox.acknowledged(messageID: background[0].id, success: true)
        #expect(hand(&outbox, firstID: &id).map(\.payload) == ["event21"])
        outbox.acknowledged(messageID: background[1].id, success: true)
        outbox.acknowledged(messageID: background[2].id, success: true)
        #expect(hand(&outbox, firstID: &id).isEmpty, "6 in flight: background waits for the kept quarter")
        outbox.acknowledged(messageID: background[3].id, success: true)
        #expect(hand(&outbox, firstID: &id).map(\.payload) == ["tag61"])
    }

    @Test("while the window is full, QoS 0 publications go past the QoS 1 ones of their own priority, each in order")
    func quickPassWithinPriority() {
        var outbox = Outbox(policy: .untilHandedOver(capacity: 100, handOverLimit: 1))
        var id = 1
        outbox.enqueue(state("zone", 1, priority: .background))
        let first = hand(&outbox, firstID: &id)
        #expect(first.map(\.payload) == ["zone1"])
        // A cleared position (QoS 1) waits for the window; the positions and metrics behind it do not.
        outbox.enqueue(state("gone", 1, priority: .background))
        outbox.enqueue(state("here", 1, qos: .atMostOnce, priority: .background))
        outbox.enqueue(state("metrics", 1, qos: .atMostOnce, retain: false))
        outbox.enqueue(state("there", 1, qos: .atMostOnce, priority: .background))
        #expect(hand(&outbox, firstID: &id).map(\.payload) == ["metrics1", "here1", "there1"])
        // A QoS 0 state replaced by a QoS 1 one waits too; the other way round, it goes.
        outbox.enqueue(state("moved", 1, qos: .atMostOnce, priority: .background))
        outbox.enqueue(state("moved", 2, priority: .background))
        outbox.enqueue(state("gone", 2, qos: .atMostOnce, priority: .background))
        outbox.enqueue(state("last", 1, qos: .atMostOnce, priority: .background))
        #expect(hand(&outbox, firstID: &id).map(\.payload) == ["gone2", "last1"])
        #expect(outbox.statistics.coalesced == 2)
        // With the window open, a priority leaves in its order again, whatever the QoS.
        outbox.enqueue(state("after", 1, qos: .atMostOnce, priority: .background))
        outbox.enqueue(state("later", 1, priority: .background))
        outbox.acknowledged(messageID: first[0].id, success: true)
        let rest = hand(&outbox, firstID: &id)
        #expect(rest.map(\.payload) == ["moved2", "after1"])
        outbox.acknowledged(messageID: rest[0].id, success: true)
        #expect(hand(&outbox, firstID: &id).map(\.payload) == ["later1"])
        #expect(outbox.isEmpty)
    }

    @Test(
        "urgent publications leave first, background ones last, each priority in order; the status leads and the goodbye follows"
    )
    func priorities() {
        var outbox = Outbox(policy: .untilHandedOver(capacity: 100, handOverLimit: 100))
        var id = 1
        outbox.enqueue(state("tag1", 1, priority: .background))
        outbox.enqueue(state("event", 1, retain: false))
        outbox.enqueue(state("zone", 1, priority: .urgent))
        outbox.enqueue(state("tag2", 1, priority: .background))
        outbox.enqueue(state("zone", 2, priority: .urgent))
        outbox.enqueue(state("event", 2, retain: false))
        outbox.enqueue(state("lease", 1, priority: .urgent))
        outbox.enqueueFirst(
            Publication(topic: topics.locatorStatus, payload: "online", qos: .atLeastOnce, retain: true))
        #expect(
            hand(&outbox, firstID: &id).map(\.payload) == [
                "online", "zone2", "lease1", "event1", "event2", "tag11", "tag21",
            ])
        #expect(outbox.statistics.coalesced == 1)
        // The goodbye, enqueued at the end, waits for the tag state before it, but not for what is urgent.
        outbox.enqueue(state("tag3", 1, priority: .background))
        outbox.enqueue(
            Publication(topic: topics.locatorStatus, payload: "offline", qos: .atLeastOnce, retain: true), control: true
        )
        outbox.enqueue(state("zone", 3, priority: .urgent))
        #expect(hand(&outbox, firstID: &id).map(\.payload) == ["zone3", "tag31", "offline"])
    }

    @Test("the session's status leads a connection even when an unsent status of the service's was held")
    func statusLeadsOverHeldStatus() {
        var outbox = Outbox(policy: .untilHandedOver(capacity: 100, handOverLimit: 100))
        var id = 1
        outbox.enqueue(state("zone", 1, priority: .urgent))
        // A locator taking over the lease says `online` as an ordinary publication on the session's status topic.
        outbox.enqueue(Publication(topic: topics.locatorStatus, payload: "online", qos: .atLeastOnce, retain: true))
        outbox.enqueue(state("lease", 1, priority: .urgent))
        outbox.connectionLost()
        outbox.enqueueFirst(
            Publication(topic: topics.locatorStatus, payload: "online", qos: .atLeastOnce, retain: true))
        #expect(hand(&outbox, firstID: &id).map(\.payload) == ["online", "zone1", "lease1"])
        #expect(outbox.isEmpty)
        #expect(outbox.statistics.coalesced == 1)  // the service's online, replaced by the session's
    }

    @Test("after a reconnect, what was in flight goes again before what waited, each priority in order")
    func reconnectLanes() {
        var outbox = Outbox(policy: .untilAcknowledged(capacity: 100, inFlightLimit: 2))
        var id = 1
        outbox.enqueue(state("b", 1, priority: .background))
        outbox.enqueue(state("n", 1))
        outbox.enqueue(state("u", 1, priority: .urgent))
        outbox.enqueue(state("n", 2))
        #expect(hand(&outbox, firstID: &id).map(\.payload) == ["u1", "n2"])
        outbox.enqueue(state("u", 2, priority: .urgent))
        outbox.connectionLost()
        outbox.enqueueFirst(
            Publication(topic: topics.locatorStatus, payload: "online", qos: .atLeastOnce, retain: true))
        var order: [String] = []
        while let entry = outbox.nextToSend() {
            order.append(entry.publication.payload)
            outbox.sent(id: entry.id, messageID: id)
            outbox.acknowledged(messageID: id, success: true)
            id += 1
        }
        #expect(order == ["online", "u1", "u2", "n2", "b1"])
        #expect(outbox.isEmpty)
        #expect(outbox.statistics.republished == 2)
    }

    @Test("thousands sent past a waiting event leave the outbox consistent: what is held, its count and its order")
    func overtaking() {
        var outbox = Outbox(policy: .untilHandedOver(capacity: 100_000, handOverLimit: 1))
        var id = 1
        outbox.enqueue(state("first", 1, retain: false))
        let first = hand(&outbox, firstID: &id)
        #expect(first.map(\.payload) == ["first1"])
        // The window is full: the event waits at the head while 5,000 positions (QoS 0) go past it.
        outbox.enqueue(state("event", 1, retain: false))
        for index in 0..<5000 {
            outbox.enqueue(
                Publication(
                    topic: topics.occupancy(floor: 2, zone: UInt16(index)), payload: "tag\(index)1", qos: .atMostOnce,
                    retain: true, priority: .background))
        }
        outbox.enqueue(state("event", 2, retain: false))
        #expect(outbox.count == 5002)
        let passed = hand(&outbox, firstID: &id)
        #expect(passed.count == 5000)
        #expect(passed.map(\.payload) == (0..<5000).map { "tag\($0)1" })
        // Released out of order, they are gone from what is held; the two events wait, in order.
        #expect(outbox.count == 2)
        #expect(outbox.held.map(\.publication.payload) == ["event1", "event2"])
        outbox.acknowledged(messageID: first[0].id, success: true)
        let next = hand(&outbox, firstID: &id)
        #expect(next.map(\.payload) == ["event1"])
        outbox.acknowledged(messageID: next[0].id, success: true)
        #expect(hand(&outbox, firstID: &id).map(\.payload) == ["event2"])
        #expect(outbox.isEmpty)
        #expect(outbox.held.isEmpty)
        // And it works as new afterwards: a status first, then in order.
        outbox.enqueue(state("later", 1, qos: .atMostOnce))
        outbox.enqueueFirst(Publication(topic: topics.locatorStatus, payload: "online", qos: .atMostOnce, retain: true))
        #expect(hand(&outbox, firstID: &id).map(\.payload) == ["online", "later1"])
    }
}
