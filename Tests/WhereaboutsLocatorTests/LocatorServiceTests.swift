import Testing
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsSession
import WhereaboutsWire

/// Runs the locator's service state as the runner does, with the client's part played in memory.
struct LocatorServiceHarness {
    var state: ServiceState<LocatorService>
    var connected = false
    var nextMessageID = 1
    var inFlight: [Int] = []
    var sent: [Publication] = []
    var disconnectAsked = false
    /// Whether the broker acknowledges as the outbox waits for its window; off, only ``acknowledgeAll(at:)`` and
    /// ``acknowledgeOne(at:)`` do.
    var acknowledgesAsItGoes = true
    var batches: PipelineHarness
    /// The figures handed to the metrics endpoint (``LocatorEffect/metrics(_:)``), in order.
    var snapshots: [LocatorMetricsSnapshot] = []

    init(
        lease: LeaseKeeper.Configuration? = nil,
        configuration: LocatorPipeline.Configuration = LocatorPipeline.Configuration(),
        snapshotInterval: Double? = nil
    ) throws {
        batches = try PipelineHarness(configuration: configuration)
        state = ServiceState(
            pipeline: LocatorService(
                pipeline: batches.pipeline, updateInterval: 0.02, lease: lease, snapshotInterval: snapshotInterval))
    }

    mutating func perform(_ commands: [ServiceState<LocatorService>.Command], at time: ServiceTime) {
        if commands.contains(.disconnect) { disconnectAsked = true }
        for case .effect(.metrics(let snapshot)) in commands { snapshots.append(snapshot) }
        while true {
            while let entry = state.nextToSend() {
                let result: BrokerSession.SendResult
                if connected {
                    let id = nextMessageID
                    nextMessageID += 1
                    inFlight.append(id)
                    sent.append(entry.publication)
                    result = .accepted(messageID: id)
                } else {
                    result = .noConnection
                }
                if state.sent(id: entry.id, result: result, at: time).contains(.disconnect) { disconnectAsked = true }
            }
            // The broker acknowledges as it goes: while the outbox waits for its window, the oldest in flight is
            // acknowledged. (What is left in flight at the end waits for acknowledgeAll(at:).)
            guard acknowledgesAsItGoes, connected, !inFlight.isEmpty, !state.session.outbox.isEmpty else { return }
            let id = inFlight.removeFirst()
            if state.acknowledged(messageID: id, success: true, at: time).contains(.disconnect) {
                disconnectAsked = true
            }
        }
    }

    mutating func connect(at time: ServiceTime) {
        connected = true
        perform(state.connected(at: time), at: time)
    }

    mutating func acknowledgeAll(at time: ServiceTime) {
        while !inFlight.isEmpty {
            let id = inFlight.removeFirst()
            perform(state.acknowledged(messageID: id, success: true, at: time), at: time)
        }
    }

    mutating func acknowledgeOne(at time: ServiceTime) {
        guard !inFlight.isEmpty else { return }
        let id = inFlight.removeFirst()
        perform(state.acknowledged(messageID: id, success: true, at: time), at: time)
    }

    /// After a lease of silence: the tick at `time` claims, the broker echoes the claim 10 ms later, and the tick
    /// 0.3 s after the claim, past the settle time, makes it active. Returns the claim.
    mutating func takeLease(at time: Double) throws -> Publication {
        let claimTime = ServiceTime(now: time, monotonic: time)
        perform(state.tick(at: claimTime), at: claimTime)
        let claim = try #require(sent.last)
        let echo = ServiceTime(now: time + 0.01, monotonic: time + 0.01)
        perform(state.receive(topic: claim.topic.name, payload: Array(claim.payload.utf8), at: echo), at: echo)
        let settled = ServiceTime(now: time + 0.3, monotonic: time + 0.3)
        perform(state.tick(at: settled), at: settled)
        return claim
    }

    /// A locator of a pair ("a", lease 3 s), connected at `start`, fed Alice for 3 s, then holding the lease
    /// (``takeLease(at:)`` at `start + 3`: active from `start + 3.3`).
    static func holder(
        from start: Double, alice: TagIdentity, snapshotInterval: Double? = nil
    ) throws -> LocatorServiceHarness {
        var harness = try LocatorServiceHarness(
            lease: LeaseKeeper.Configuration(instance: "a", ttl: 3), snapshotInterval: snapshotInterval)
        harness.connect(at: ServiceTime(now: start, monotonic: start))
        for second in 0..<3 { harness.second(second, from: start, alice: alice) }
        _ = try harness.takeLease(at: start + 3)
        return harness
    }

    /// One second of batches for Alice at a point, then a tick.
    mutating func second(_ second: Int, from start: Double, alice: TagIdentity) {
        let now = start + Double(second)
        for (topic, payload) in batches.batches(tag: alice, at: Point(x: 5, y: 4), floor: 1, time: now) {
            let time = ServiceTime(now: now, monotonic: now)
            perform(state.receive(topic: topic, payload: payload, at: time), at: time)
        }
        let time = ServiceTime(now: now + 0.5, monotonic: now + 0.5)
        perform(state.tick(at: time), at: time)
    }
}

@Suite("Locator service")
struct LocatorServiceTests {
    let start = 1_764_000_000.0

    @Test("online comes first on every connection, then the retained state; a stop ends with metrics, then offline")
    func lifecycle() throws {
        var harness = try LocatorServiceHarness()
        #expect(harness.state.pipeline.sendingDeadline == nil, "a locator on its own publishes whenever connected")
        let statusTopic = harness.batches.pipeline.topics.locatorStatus
        harness.connect(at: ServiceTime(now: start, monotonic: 0))
        #expect(
            harness.sent.first == Publication(topic: statusTopic, payload: "online", qos: .atLeastOnce, retain: true))
        for second in 0..<15 { harness.second(second, from: start, alice: try alice()) }
        #expect(harness.sent.contains { $0.topic.name.hasSuffix("/occupancy") })
        // The broker goes away and comes back: online again, then every retained topic again.
        harness.connected = false
        harness.state.disconnected()
        let before = harness.sent.count
        harness.connect(at: ServiceTime(now: start + 16, monotonic: 16))
        let again = harness.sent[before...]
        #expect(again.first?.payload == "online")
        #expect(again.contains { $0.topic.name.hasSuffix("/floors/1/zones/1/occupancy") })
        #expect(again.contains { $0.topic.name.hasSuffix("/position") })
        // SIGTERM: the last update and the final metrics, then offline; disconnect once offline is acknowledged.
        // (Publications leave by priority, so the metrics may go ahead of the last update's positions: with the
        // grid filter, which estimates a tag once a second, the readings of second 14 are estimated only now.)
        let stop = ServiceTime(now: start + 17, monotonic: 17)
        let beforeStop = harness.sent.count
        harness.perform(harness.state.signal(at: stop), at: stop)
        #expect(
            harness.sent.last == Publication(topic: statusTopic, payload: "offline", qos: .atLeastOnce, retain: true))
        let metrics = harness.batches.pipeline.topics.locatorMetrics
        #expect(harness.sent[beforeStop...].dropLast().contains { $0.topic == metrics })
        #expect(harness.sent[beforeStop...].contains { $0.topic.name.hasSuffix("/position") }, "the last update")
        #expect(!harness.sent[beforeStop...].dropLast().contains { $0.topic == statusTopic })
        #expect(!harness.disconnectAsked)
        harness.acknowledgeAll(at: stop)
        #expect(harness.disconnectAsked)
    }

    @Test("a lone batch is answered at once; a burst within the update interval waits for the next tick")
    func coalescing() throws {
        var harness = try LocatorServiceHarness()
        harness.connect(at: ServiceTime(now: start, monotonic: 0))
        let batches = harness.batches.batches(tag: try alice(), at: Point(x: 5, y: 4), floor: 1, time: start)
        var published: [Int] = []
        for (index, (topic, payload)) in batches.enumerated() {
            let time = ServiceTime(now: start + 0.001 * Double(index), monotonic: 0.001 * Double(index))
            let before = harness.sent.count
            harness.perform(harness.state.receive(topic: topic, payload: payload, at: time), at: time)
            published.append(harness.sent.count - before)
        }
        // The first batch ran the engine at once (its first update publishes the metrics); the rest of the burst,
        // within 20 ms, ran nothing.
        #expect(published.first ?? 0 > 0)
        #expect(published.dropFirst().allSatisfy { $0 == 0 })
        // The burst's readings wait in the tag's filters until its estimate interval has passed since the first
        // batch's estimate (with the grid filter, the default tracker, the larger of the moving and still intervals:
        // 1 s by default; trilateration's moving tag, 0.5 s); the first tick after that publishes the update.
        let interval = LocatorEngine.Configuration().movingEstimateInterval
        let tick = ServiceTime(now: start + interval, monotonic: interval)
        let sentBefore = harness.sent.count
        harness.perform(harness.state.tick(at: tick), at: tick)
        #expect(
            harness.sent[sentBefore...].contains { $0.topic.name.hasSuffix("/position") },
            "the tick after the burst and the estimate interval publishes the update")
    }

    @Test("the metrics tell a burst's last readings within their interval, not at the idle second's update")
    func metricsAfterBurst() throws {
        var configuration = LocatorPipeline.Configuration()
        configuration.metricsInterval = 0.1
        var harness = try LocatorServiceHarness(configuration: configuration)
        let metricsTopic = harness.batches.pipeline.topics.locatorMetrics
        harness.connect(at: ServiceTime(now: start, monotonic: 0))
        // The first batch runs the engine, whose update publishes the metrics; the rest of the burst follows within
        // the metrics interval, and then nothing more arrives: the ticker goes on every 20 ms, as the runner's does.
        let burst = harness.batches.batches(tag: try alice(), at: Point(x: 5, y: 4), floor: 1, time: start)
        for (index, (topic, payload)) in burst.enumerated() {
            let time = ServiceTime(now: start + 0.001 * Double(index), monotonic: 0.001 * Double(index))
            harness.perform(harness.state.receive(topic: topic, payload: payload, at: time), at: time)
        }
        let accepted = harness.state.pipeline.pipeline.metrics(now: start).readingsAccepted
        try #require(accepted > 1, "the burst's readings reached the engine")
        var told: [(time: Double, accepted: Int)] = []
        // Up to 0.9 s: short of the idle second's update, which publishes the metrics whatever they hold.
        for step in 1...45 {
            let offset = 0.02 * Double(step)
            let time = ServiceTime(now: start + offset, monotonic: offset)
            let before = harness.sent.count
            harness.perform(harness.state.tick(at: time), at: time)
            for publication in harness.sent[before...] where publication.topic == metricsTopic {
                told.append((offset, try LocatorMetrics(payload: publication.payload).readingsAccepted))
            }
        }
        // Before, the tick waited for the idle second's update, 1 s after the burst's last batch.
        let first = try #require(told.first { $0.accepted == accepted }, "the metrics told the whole burst")
        #expect(first.time <= 0.12 + 1e-9, "at the first tick a metrics interval after the first metrics")
        #expect(told.count == 1, "and once: nothing has changed since")
    }

    @Test("one of a pair: a standby publishes nothing; a holder that lost its lease discards what it held")
    func standby() throws {
        var harness = try LocatorServiceHarness(lease: LeaseKeeper.Configuration(instance: "a", ttl: 3))
        let topics = harness.batches.pipeline.topics
        harness.connect(at: ServiceTime(now: start, monotonic: start))
        for second in 0..<3 { harness.second(second, from: start, alice: try alice()) }
        #expect(harness.sent.map(\.topic) == [topics.locatorStatus], "a standby says only the session's online")
        #expect(harness.state.pipeline.sendingDeadline == -.infinity, "nothing may be sent as a holder")
        // A lease of silence: it claims, the broker echoes the claim, and after the settle time it is active.
        let claim = try harness.takeLease(at: start + 3)
        #expect(claim.topic == topics.locatorLease && LocatorLease(bytes: Array(claim.payload.utf8))?.holder == "a")
        let active = ServiceTime(now: start + 3.3, monotonic: start + 3.3)
        #expect(harness.state.pipeline.isActive(at: active))
        #expect(
            harness.sent.contains { $0.topic.name.hasSuffix("/position") }, "the warm engine's state on taking over")
        // The connection drops; outputs wait in the outbox, and no renewal comes back.
        harness.connected = false
        harness.state.disconnected()
        for second in 4..<12 { harness.second(second, from: start, alice: try alice()) }
        #expect(!harness.state.pipeline.isActive(at: ServiceTime(now: start + 12, monotonic: start + 12)))
        // The client's deadline is the lapsed lease's end: libmosquitto re-sends nothing from before it.
        let deadline = try #require(harness.state.pipeline.sendingDeadline)
        #expect(deadline > start + 3.3 && deadline < start + 12)
        #expect(harness.state.session.outbox.statistics.discarded > 0, "what it held was discarded")
        let before = harness.sent.count
        harness.connect(at: ServiceTime(now: start + 12, monotonic: start + 12))
        #expect(harness.sent[before...].map(\.topic) == [topics.locatorStatus], "only the session's online")
    }

    @Test("a holder that stops lets the lease go after its last outputs, not ahead of them")
    func releaseComesLast() throws {
        var harness = try LocatorServiceHarness.holder(from: start, alice: try alice())
        let topics = harness.batches.pipeline.topics
        harness.acknowledgeAll(at: ServiceTime(now: start + 3.3, monotonic: start + 3.3))
        // The broker is slow: what the stop says waits for the hand-over window, the release among it.
        harness.acknowledgesAsItGoes = false
        let stop = ServiceTime(now: start + 3.4, monotonic: start + 3.4)
        let before = harness.sent.count
        harness.perform(harness.state.signal(at: stop), at: stop)
        while !harness.inFlight.isEmpty { harness.acknowledgeOne(at: stop) }
        let said = harness.sent[before...]
        let release = try #require(said.firstIndex { $0.topic == topics.locatorLease && $0.payload.isEmpty })
        let others = said.indices.filter {
            said[$0].topic != topics.locatorLease && said[$0].topic != topics.locatorStatus
        }
        #expect(!others.isEmpty, "the stop said nothing: the test proves nothing")
        #expect(others.allSatisfy { $0 < release }, "\(said.map(\.topic.name))")
    }

    @Test("a holder paused past its lease sends nothing the outbox held when the first acknowledgement comes after")
    func acknowledgementAfterPause() throws {
        var harness = try LocatorServiceHarness.holder(from: start, alice: try alice())
        let topics = harness.batches.pipeline.topics
        let active = ServiceTime(now: start + 3.3, monotonic: start + 3.3)
        #expect(harness.state.pipeline.isActive(at: active))
        // A reconnection republishes the site's state, more than the client is handed at once: the rest is held.
        harness.acknowledgeAll(at: active)
        harness.acknowledgesAsItGoes = false
        let reconnect = ServiceTime(now: start + 3.4, monotonic: start + 3.4)
        harness.state.disconnected()
        harness.connect(at: reconnect)
        #expect(!harness.state.session.outbox.isEmpty, "publications held for the hand-over window")
        // Paused past the lease's validity (SIGSTOP): the first input after it is an acknowledgement.
        let resumed = ServiceTime(now: start + 10, monotonic: start + 10)
        let before = harness.sent.count
        harness.acknowledgeOne(at: resumed)
        #expect(!harness.state.pipeline.isActive(at: resumed))
        #expect(harness.sent.count == before, "sent after the lease lapsed: \(harness.sent[before...].map(\.topic))")
        #expect(harness.state.session.outbox.statistics.discarded > 0, "what it held was discarded")
        #expect(!harness.sent[before...].contains { $0.topic == topics.locatorLease })
    }
}
