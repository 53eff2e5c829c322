import Testing
import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

let topics: Topics = {
    guard let site = BeaconUUID("f7826da6-4fa2-4e98-8024-bc5b71e0893e") else { preconditionFailure("bad test UUID") }
    return Topics(site: site)
}()

/// Plays the MQTT client's part: takes what the session hands out while "connected", numbers it, and remembers it
/// until the test acknowledges it.
struct FakeClient {
    var session: BrokerSession
    var connected = false
    var nextMessageID = 1
    /// Message ids taken and not yet acknowledged, with their publications.
    var inFlight: [(messageID: Int, publication: Publication)] = []
    /// Everything taken, in order.
    var sent: [Publication] = []
    var commands: [BrokerSession.Command] = []
    /// Publications the client refuses for good, by payload.
    var unsendable: Set<String> = []
    var now = 0.0

    init(policy: Outbox.Policy, drainTimeout: Double = 10) {
        session = BrokerSession(
            configuration: .init(
                statusTopic: topics.locatorStatus, outbox: policy,
                drainTimeout: drainTimeout))
    }

    mutating func connect() {
        connected = true
        commands += session.connected()
        pump()
    }

    mutating func drop() {
        connected = false
        inFlight.removeAll()
        session.disconnected()
    }

    mutating func publish(_ payload: String, retain: Bool = false, topic: String = "data") {
        session.publish(
            Publication(
                topic: topic == "state" ? topics.calibration : topics.events, payload: payload, qos: .atLeastOnce,
                retain: retain))
        pump()
    }

    /// What the runner does after every input.
    mutating func pump() {
        while let entry = session.nextToSend() {
            let result: BrokerSession.SendResult
            if !connected {
                result = .noConnection
            } else if unsendable.contains(entry.publication.payload) {
                result = .refused
            } else {
                let id = nextMessageID
                nextMessageID += 1
                inFlight.append((id, entry.publication))
                sent.append(entry.publication)
                result = .accepted(messageID: id)
            }
            commands += session.sent(id: entry.id, result: result, now: now)
        }
    }

    /// Acknowledges the oldest message in flight.
    mutating func acknowledgeOldest(success: Bool = true) {
        guard !inFlight.isEmpty else { return }
        let (id, _) = inFlight.removeFirst()
        commands += session.acknowledged(messageID: id, success: success, now: now)
        pump()
    }

    mutating func acknowledgeAll() {
        while !inFlight.isEmpty { acknowledgeOldest() }
    }

    mutating func stop() {
        commands += session.stop(now: now)
        pump()
    }

    mutating func tick(at time: Double) {
        now = time
        commands += session.tick(now: time)
        pump()
    }

    var payloads: [String] { sent.map(\.payload) }
    var disconnectAsked: Bool { commands.contains(.disconnect) }
}

@Suite("Broker session")
struct BrokerSessionTests {
    static let agentPolicy = Outbox.Policy.untilAcknowledged(capacity: 4, inFlightLimit: 2)
    static let locatorPolicy = Outbox.Policy.untilHandedOver(capacity: 3)

    @Test("a connection announces online first, then sends what was held, in order, and says ready once")
    func onlineFirst() {
        var client = FakeClient(policy: Self.agentPolicy)
        client.publish("1")
        client.publish("2")
        #expect(client.sent.isEmpty)
        client.connect()
        client.acknowledgeAll()
        #expect(client.payloads == ["online", "1", "2"])
        #expect(client.sent.first?.retain == true)
        client.drop()
        client.connect()
        #expect(client.commands.filter { $0 == .ready }.count == 1)
    }

    @Test("at most the in-flight limit is unacknowledged; everything unacknowledged is sent again after a reconnect")
    func inFlightAndResend() {
        var client = FakeClient(policy: Self.agentPolicy)
        client.connect()
        client.acknowledgeAll()
        for n in 1...3 { client.publish("\(n)") }
        #expect(client.payloads == ["online", "1", "2"])
        client.drop()
        client.connect()
        client.acknowledgeAll()
        #expect(client.payloads == ["online", "1", "2", "online", "1", "2", "3"])
        #expect(client.session.outbox.statistics.republished == 2)
        #expect(client.session.outbox.isEmpty)
    }

    @Test("a full outbox drops the oldest publication and counts it; retained state is coalesced, never dropped")
    func overflow() {
        var client = FakeClient(policy: Self.agentPolicy)
        client.publish("state-1", retain: true, topic: "state")
        for n in 1...6 { client.publish("\(n)") }
        client.publish("state-2", retain: true, topic: "state")
        #expect(client.session.outbox.statistics.dropped == 2)
        #expect(client.session.outbox.statistics.coalesced == 1)
        client.connect()
        client.acknowledgeAll()
        #expect(client.payloads == ["online", "state-2", "3", "4", "5", "6"])
    }

    @Test("the locator's policy releases on hand-over and holds only while disconnected")
    func handOver() {
        var client = FakeClient(policy: Self.locatorPolicy)
        client.connect()
        for n in 1...10 { client.publish("\(n)") }
        #expect(client.payloads.count == 11)
        #expect(client.session.outbox.isEmpty)
        client.drop()
        for n in 11...15 { client.publish("\(n)") }
        #expect(client.session.outbox.statistics.dropped == 2)
        client.connect()
        #expect(Array(client.payloads.suffix(4)) == ["online", "13", "14", "15"])
    }

    @Test("a refused acknowledgement releases the publication and is reported; a refused send drops it")
    func refusal() {
        var client = FakeClient(policy: Self.agentPolicy)
        client.unsendable = ["too big"]
        client.connect()
        client.acknowledgeAll()
        client.publish("forbidden")
        client.acknowledgeOldest(success: false)
        client.publish("too big")
        client.publish("fine")
        client.acknowledgeAll()
        #expect(client.session.outbox.isEmpty)
        #expect(client.session.outbox.statistics.refused == 2)
        #expect(client.commands.contains { if case .refused(let p) = $0 { p.payload == "forbidden" } else { false } })
        #expect(client.commands.contains { if case .unsendable(let p) = $0 { p.payload == "too big" } else { false } })
        #expect(client.payloads.last == "fine")
    }

    @Test("a stop sends what was said before it, then offline, and disconnects when offline is acknowledged")
    func goodbye() {
        var client = FakeClient(policy: Self.agentPolicy)
        client.connect()
        client.acknowledgeAll()
        for n in 1...3 { client.publish("\(n)") }
        client.stop()
        #expect(!client.payloads.contains("offline"))
        client.acknowledgeOldest()
        client.acknowledgeOldest()
        #expect(!client.disconnectAsked)
        client.acknowledgeOldest()
        #expect(client.payloads.last == "offline")
        #expect(!client.disconnectAsked)
        client.acknowledgeOldest()
        #expect(client.disconnectAsked)
        #expect(client.session.phase == .closing)
    }

    @Test("a reconnect in the middle of the goodbye sends what is left and offline again")
    func reconnectDuringGoodbye() {
        var client = FakeClient(policy: Self.agentPolicy)
        client.connect()
        client.acknowledgeAll()
        client.publish("last")
        client.stop()
        client.drop()
        client.connect()
        client.acknowledgeOldest()  // online
        #expect(client.payloads.last == "last")
        client.acknowledgeOldest()  // "last"
        #expect(client.payloads.last == "offline")
        client.drop()
        #expect(!client.disconnectAsked)
        client.connect()
        #expect(client.payloads.filter { $0 == "offline" }.count == 2)
        #expect(!client.payloads.suffix(2).contains("online"), "no online once offline was said")
        client.acknowledgeOldest()
        #expect(client.disconnectAsked)
    }

    @Test("the locator's goodbye is tracked although its outbox releases on hand-over")
    func locatorGoodbye() {
        var client = FakeClient(policy: Self.locatorPolicy)
        client.connect()
        client.publish("metrics")
        client.stop()
        #expect(client.payloads == ["online", "metrics", "offline"])
        client.drop()
        client.connect()
        #expect(client.payloads.last == "offline")
        client.acknowledgeAll()
        #expect(client.disconnectAsked)
    }

    @Test("deadlines: an outbox that never drains and an offline never acknowledged still end in a disconnect")
    func deadlines() {
        var client = FakeClient(policy: Self.agentPolicy, drainTimeout: 5)
        client.connect()
        client.acknowledgeAll()
        client.publish("stuck")
        client.stop()
        client.tick(at: 4.9)
        #expect(!client.payloads.contains("offline"))
        client.tick(at: 5)
        #expect(client.commands.contains(.abandoned(count: 1)))
        #expect(client.payloads.last == "offline")
        client.tick(at: 6.9)
        #expect(!client.disconnectAsked)
        client.tick(at: 7)
        #expect(client.disconnectAsked)
    }

    @Test("stopping while disconnected waits for the drain deadline, then disconnects without a goodbye")
    func stopWhileDisconnected() {
        var client = FakeClient(policy: Self.agentPolicy, drainTimeout: 5)
        client.publish("held")
        client.stop()
        #expect(!client.disconnectAsked)
        client.tick(at: 5)
        #expect(client.disconnectAsked)
        #expect(client.sent.isEmpty)
    }

    @Test("a second stop disconnects at once")
    func secondStop() {
        var client = FakeClient(policy: Self.agentPolicy)
        client.connect()
        client.publish("unacknowledged")
        client.stop()
        #expect(!client.disconnectAsked)
        client.stop()
        #expect(client.disconnectAsked)
    }

    @Test("degraded replaces online on the status, ahead of what is held, at once or at the next connection")
    func degradedStatus() {
        var client = FakeClient(policy: Self.agentPolicy)
        client.session.setDegraded(true)
        client.publish("1")
        client.connect()
        client.acknowledgeAll()
        #expect(client.payloads == ["degraded", "1"])
        // Held while the journal is back: `online` goes before what waits, and only once.
        client.publish("2")
        client.publish("3")
        client.publish("4")
        client.session.setDegraded(false)
        client.session.setDegraded(false)
        client.pump()
        client.acknowledgeAll()
        #expect(client.payloads == ["degraded", "1", "2", "3", "online", "4"])
        #expect(client.sent.filter { $0.topic == topics.locatorStatus }.allSatisfy { $0.retain })
        // Disconnected: nothing now, the right word at the next connection.
        client.drop()
        client.session.setDegraded(true)
        client.connect()
        #expect(client.payloads.suffix(1) == ["degraded"])
    }

    @Test("once the goodbye has begun, degraded changes nothing: offline has the last word")
    func degradedAfterGoodbye() {
        var client = FakeClient(policy: Self.agentPolicy)
        client.connect()
        client.acknowledgeAll()
        client.stop()
        #expect(client.payloads == ["online", "offline"])
        client.session.setDegraded(true)
        client.pump()
        client.acknowledgeAll()
        #expect(client.payloads == ["online", "offline"])
        #expect(client.disconnectAsked)
    }

    @Test("the will is offline, retained, at least once")
    func will() {
        let client = FakeClient(policy: Self.locatorPolicy)
        #expect(client.session.will.payload == "offline")
        #expect(client.session.will.retain)
        #expect(client.session.will.qos == .atLeastOnce)
    }
}
