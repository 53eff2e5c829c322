import BrokerFixture
import CommandLineSupport
import Synchronization
import Testing
import WhereaboutsCore
import WhereaboutsMQTT
import WhereaboutsRuntime
import WhereaboutsSession
import WhereaboutsWire

/// A pipeline small enough to read at a glance: it publishes what its source says, answers Home Assistant's status
/// with an event, and stops when its source says so, with last words before the goodbye.
struct EchoPipeline: ServicePipeline {
    enum Input: Sendable {
        case say(String)
        case finish
    }

    let topics: Topics
    let agent: AgentID
    let session: BrokerSession.Configuration
    /// What the pipeline heard from the broker.
    private(set) var heard: [String] = []

    init(topics: Topics, agent: AgentID, capacity: Int = 16, overflow: Outbox.Overflow = .dropOldest) {
        self.topics = topics
        self.agent = agent
        session = BrokerSession.Configuration(
            statusTopic: topics.agentStatus(agent: agent),
            outbox: .untilAcknowledged(capacity: capacity, inFlightLimit: 4), overflow: overflow, drainTimeout: 5,
            goodbyeTimeout: 5)
    }

    var subscriptions: [Subscription] { [Subscription(filter: Topics.homeAssistantStatusFilter, qos: .atLeastOnce)] }

    mutating func connected(at time: ServiceTime) -> [ServiceAction<Never>] { [] }

    mutating func receive(topic: String, payload: [UInt8], at time: ServiceTime) -> [ServiceAction<Never>] {
        let text = String(decoding: payload, as: UTF8.self)
        heard.append(text)
        return [.publish(Publication(topic: topics.events, payload: "heard \(text)", qos: .atLeastOnce, retain: false))]
    }

    mutating func take(_ input: Input, at time: ServiceTime) -> [ServiceAction<Never>] {
        switch input {
        case .say(let text):
            [
                .publish(
                    Publication(topic: topics.readings(agent: agent), payload: text, qos: .atLeastOnce, retain: false))
            ]
        case .finish:
            [.stop(failure: nil)]
        }
    }

    mutating func tick(at time: ServiceTime, outbox: Outbox) -> [ServiceAction<Never>] { [] }

    mutating func stop(at time: ServiceTime) -> [ServiceAction<Never>] {
        [.publish(Publication(topic: topics.events, payload: "bye", qos: .atLeastOnce, retain: false))]
    }
}

/// A source that hands over what the test yields, as the agent's radio would.
struct ScriptedSource: ServiceSource {
    typealias Effect = Never

    let inputs: AsyncStream<EchoPipeline.Input>

    func run(into feed: inout SourceFeed<EchoPipeline.Input>) async {
        for await input in inputs {
            guard await feed.send(input) else { return }
        }
    }

    func perform(_ effect: Never) async {}
}

/// A source that says `count` numbered lines as fast as the runner takes them, then finishes: a fast replay.
struct CountingSource: ServiceSource {
    typealias Effect = Never

    let count: Int

    func run(into feed: inout SourceFeed<EchoPipeline.Input>) async {
        for index in 0..<count {
            guard await feed.send(.say("\(index)")) else { return }
        }
        _ = await feed.send(.finish)
    }

    func perform(_ effect: Never) async {}
}

/// The locator's kind of outbox (released on hand-over) with a flood to send: `count` background states, each on a
/// topic of its own, then, on its next input, one urgent publication.
struct FloodPipeline: ServicePipeline {
    let topics: Topics
    let count: Int
    let session: BrokerSession.Configuration
    private var flooded = false

    init(topics: Topics, count: Int) {
        self.topics = topics
        self.count = count
        session = BrokerSession.Configuration(
            statusTopic: topics.locatorStatus, outbox: .untilHandedOver(capacity: 10_000), drainTimeout: 10)
    }

    var subscriptions: [Subscription] { [] }

    mutating func connected(at time: ServiceTime) -> [ServiceAction<Never>] { [] }

    mutating func receive(topic: String, payload: [UInt8], at time: ServiceTime) -> [ServiceAction<Never>] { [] }

    mutating func take(_ input: EchoPipeline.Input, at time: ServiceTime) -> [ServiceAction<Never>] {
        switch input {
        case .say(let text) where !flooded:
            flooded = true
            return (0..<count).map { index in
                .publish(
                    Publication(
                        topic: topics.occupancy(floor: 2, zone: UInt16(index)), payload: "\(text) \(index)",
                        qos: .atLeastOnce,
                        retain: true, priority: .background))
            }
        case .say(let text):
            return [
                .publish(
                    Publication(
                        topic: topics.occupancy(floor: 1, zone: 1), payload: text, qos: .atLeastOnce, retain: true,
                        priority: .urgent))
            ]
        case .finish:
            return [.stop(failure: nil)]
        }
    }

    mutating func tick(at time: ServiceTime, outbox: Outbox) -> [ServiceAction<Never>] { [] }

    mutating func stop(at time: ServiceTime) -> [ServiceAction<Never>] { [] }
}

/// A lease holder with a flood to send: its first input queues `count` publications, and its lease ends 20 ms after
/// the shell first reads the deadline with them queued, long before they can all be handed over. Like a locator that
/// lost its lease, it discards whatever it still holds at its first tick past the deadline.
struct LeasedFloodPipeline: ServicePipeline {
    let topics: Topics
    let count: Int
    let session: BrokerSession.Configuration
    /// When the lease ends; set on the first read after the flood is queued (the read is the shell's, a getter).
    private let leaseEnd = LeaseEnd()
    private var flooded = false
    private var discarded = false

    init(topics: Topics, count: Int) {
        self.topics = topics
        self.count = count
        session = BrokerSession.Configuration(
            statusTopic: topics.locatorStatus, outbox: .untilHandedOver(capacity: count, handOverLimit: 1_000_000),
            drainTimeout: 5)
    }

    var sendingDeadline: Double? {
        guard flooded else { return nil }
        return leaseEnd.time.withLock { end in
            if end == nil { end = WallClock.monotonic() + 0.02 }
            return end
        }
    }

    var subscriptions: [Subscription] { [] }

    mutating func connected(at time: ServiceTime) -> [ServiceAction<Never>] { standDown(at: time) }

    mutating func receive(topic: String, payload: [UInt8], at time: ServiceTime) -> [ServiceAction<Never>] { [] }

    mutating func take(_ input: EchoPipeline.Input, at time: ServiceTime) -> [ServiceAction<Never>] {
        switch input {
        case .say(let text) where !flooded:
            flooded = true
            return (0..<count).map { index in
                .publish(
                    Publication(topic: topics.events, payload: "\(text) \(index)", qos: .atLeastOnce, retain: false))
            }
        case .say:
            return []
        case .finish:
            return [.stop(failure: nil)]
        }
    }

    mutating func tick(at time: ServiceTime, outbox: Outbox) -> [ServiceAction<Never>] { standDown(at: time) }

    /// Past the lease's end, the first input discards what is held, as a locator's lease check does.
    private mutating func standDown(at time: ServiceTime) -> [ServiceAction<Never>] {
        guard !discarded, let end = leaseEnd.time.withLock({ $0 }), time.monotonic >= end else { return [] }
        discarded = true
        return [.discardHeld]
    }

    mutating func stop(at time: ServiceTime) -> [ServiceAction<Never>] { [] }
}

/// Where ``LeasedFloodPipeline`` keeps its lease's end, which a getter sets.
final class LeaseEnd: Sendable {
    let time = Mutex<Double?>(nil)
}

/// A pipeline with a preparation: each message's text is upper-cased off the loop, and the pipeline says how each
/// message reached it.
struct PreparingPipeline: ServicePipeline {
    let topics: Topics
    let session: BrokerSession.Configuration

    init(topics: Topics) {
        self.topics = topics
        session = BrokerSession.Configuration(
            statusTopic: topics.locatorStatus, outbox: .untilHandedOver(capacity: 1_000), drainTimeout: 5)
    }

    var subscriptions: [Subscription] { [Subscription(filter: Topics.homeAssistantStatusFilter, qos: .atLeastOnce)] }

    var preparation: MessagePreparation<String>? {
        MessagePreparation { _, payload, _ in String(decoding: payload, as: UTF8.self).uppercased() }
    }

    mutating func connected(at time: ServiceTime) -> [ServiceAction<Never>] { [] }

    mutating func receive(topic: String, payload: [UInt8], at time: ServiceTime) -> [ServiceAction<Never>] {
        [.publish(Publication(topic: topics.events, payload: "as it came", qos: .atLeastOnce, retain: false))]
    }

    mutating func receive(
        topic: String, payload: [UInt8], prepared: String, at time: ServiceTime
    ) -> [ServiceAction<Never>] {
        let text = String(decoding: payload, as: UTF8.self)
        return [
            .publish(
                Publication(topic: topics.events, payload: "\(text) as \(prepared)", qos: .atLeastOnce, retain: false))
        ]
    }

    mutating func take(_ input: EchoPipeline.Input, at time: ServiceTime) -> [ServiceAction<Never>] {
        if case .finish = input { return [.stop(failure: nil)] }
        return []
    }

    mutating func tick(at time: ServiceTime, outbox: Outbox) -> [ServiceAction<Never>] { [] }

    mutating func stop(at time: ServiceTime) -> [ServiceAction<Never>] { [] }
}

// Five minutes, not one, for the reason given on the MQTT client's broker tests: the limit catches a hang, and each
// wait has its own deadline.
@Suite("Service runner against a real mosquitto", .timeLimit(.minutes(5)))
struct ServiceRunnerBrokerTests {
    static let topics: Topics = {
        guard let site = BeaconUUID("f7826da6-4fa2-4e98-8024-bc5b71e0893e") else { preconditionFailure("bad UUID") }
        return Topics(site: site)
    }()
    static let agent: AgentID = {
        guard let agent = AgentID("runner-1") else { preconditionFailure("bad agent id") }
        return agent
    }()

    @Test(
        "a service connects, says online (retained), publishes, hears the broker, and says offline and returns when its pipeline stops"
    )
    func lifecycle() async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        let topics = Self.topics
        let pipeline = EchoPipeline(topics: topics, agent: Self.agent)
        let statusTopic = pipeline.session.statusTopic.name
        let readingsTopic = topics.readings(agent: Self.agent).name
        let eventsTopic = topics.events.name

        var configuration = testConfiguration(broker, clientID: "runner")
        // A will unlike the goodbye: seeing `offline` and never `will` shows the service said goodbye and then
        // disconnected cleanly (the broker publishes the will only when a client vanishes).
        configuration.will = MQTTWill(topic: statusTopic, payload: Array("will".utf8), qos: .atLeastOnce, retain: true)
        let client = try MQTTClient(configuration)
        let (inputs, source) = AsyncStream.makeStream(of: EchoPipeline.Input.self)
        let runner: ServiceRunner<EchoPipeline, ScriptedSource> = testRunner(
            client, source: ScriptedSource(inputs: inputs), broker: broker)

        try await withConnected(testConfiguration(broker, clientID: "watcher")) { watcher, watched in
            try watcher.subscribe(topics.prefix + "/#", qos: .atLeastOnce)
            try await waitUntil("the watcher's SUBACK") { watched.subscribedCount == 1 }

            let final = try await withThrowingTaskGroup(of: ServiceState<EchoPipeline>.self) { group in
                group.addTask { await runner.run(ServiceState(pipeline: pipeline)) }
                do {
                    try await waitUntil("online") { watched.payloads(on: statusTopic) == ["online"] }
                    #expect(client.isConnected)

                    // The status is retained: a reader that comes later gets it from the broker.
                    try await withConnected(testConfiguration(broker, clientID: "late")) { late, lateWatched in
                        try late.subscribe(statusTopic, qos: .atLeastOnce)
                        let status = try await waitFor("the retained status") { lateWatched.messages.first }
                        #expect(status.payload == Array("online".utf8))
                        #expect(status.retain)
                    }

                    source.yield(.say("hello"))
                    try await waitUntil("the pipeline's message") { watched.payloads(on: readingsTopic) == ["hello"] }

                    // The runner subscribed for the pipeline (the client sends SUBSCRIBE before the service's
                    // `online`, so it is in place by now): what the broker delivers reaches the pipeline.
                    _ = try watcher.publish(
                        topic: Topics.homeAssistantStatus.name, payload: Array("online".utf8), qos: .atLeastOnce)
                    try await waitUntil("the pipeline's answer") {
                        watched.payloads(on: eventsTopic) == ["heard online"]
                    }

                    source.yield(.finish)
                    let final = try #require(try await group.next())
                    source.finish()
                    return final
                } catch {
                    source.finish()
                    client.disconnect()
                    throw error
                }
            }

            #expect(final.failure == nil)
            #expect(final.isStopping)
            #expect(final.session.isClosing)
            #expect(final.pipeline.heard == ["online"])
            #expect(!client.isConnected)

            // A round trip through the broker after the runner returned: had the runner's client vanished instead
            // of disconnecting, the broker would have published its will before this.
            let marker = topics.prefix + "/marker"
            _ = try watcher.publish(topic: marker, payload: Array("after".utf8), qos: .atLeastOnce)
            try await waitUntil("the marker") { !watched.payloads(on: marker).isEmpty }

            #expect(watched.payloads(on: statusTopic) == ["online", "offline"], "\(broker.log)")
            #expect(watched.payloads(on: eventsTopic) == ["heard online", "bye"])
            // The pipeline's last words went out before the goodbye.
            let order = watched.messages.map { String(decoding: $0.payload, as: UTF8.self) }
            let bye = try #require(order.firstIndex(of: "bye"))
            let offline = try #require(order.firstIndex(of: "offline"))
            #expect(bye < offline)
        }

        // What a newcomer reads now is the goodbye, retained.
        try await withConnected(testConfiguration(broker, clientID: "later")) { later, laterWatched in
            try later.subscribe(statusTopic, qos: .atLeastOnce)
            let status = try await waitFor("the retained status") { laterWatched.messages.first }
            #expect(status.payload == Array("offline".utf8))
        }
    }

    @Test("a source faster than the broker waits for room in a back-pressure outbox: nothing dropped, all in order")
    func backPressure() async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        let topics = Self.topics
        let agent = try #require(AgentID("runner-fast"))
        let readingsTopic = topics.readings(agent: agent).name
        let count = 2000
        let pipeline = EchoPipeline(topics: topics, agent: agent, capacity: 8, overflow: .backPressure)
        let client = try MQTTClient(testConfiguration(broker, clientID: "runner-fast"))
        let runner: ServiceRunner<EchoPipeline, CountingSource> = testRunner(
            client, source: CountingSource(count: count), broker: broker)
        try await withConnected(testConfiguration(broker, clientID: "watcher-fast")) { watcher, watched in
            try watcher.subscribe(readingsTopic, qos: .atLeastOnce)
            try await waitUntil("the watcher's SUBACK") { watched.subscribedCount == 1 }
            let final = await runner.run(ServiceState(pipeline: pipeline))
            #expect(final.failure == nil)
            let statistics = final.session.outbox.statistics
            #expect(statistics.dropped == 0)
            // And the last words, "bye". In full runs it stalled twice (1,066 and 1,685 acknowledged, the second with
            // no reconnect) while tests that compute held Swift's shared workers (`OwnThreadTrait`).
            #expect(
                statistics.acknowledged == count + 1,
                "outbox \(statistics), client \(client.statistics), held \(final.session.outbox.count)")
            // The source waited: the outbox never held much more than its capacity (what taken inputs made).
            #expect(statistics.peak <= 8 + 4 + 2, "peak \(statistics.peak)")
            try await waitUntil("every message") { watched.payloads(on: readingsTopic).count >= count }
            #expect(watched.payloads(on: readingsTopic) == (0..<count).map { "\($0)" })
        }
    }

    @Test("every message reaches the pipeline with what its preparation made of it, in the order sent")
    func preparedMessages() async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        let topics = Self.topics
        let client = try MQTTClient(testConfiguration(broker, clientID: "runner-prepared"))
        let (inputs, source) = AsyncStream.makeStream(of: EchoPipeline.Input.self)
        let runner: ServiceRunner<PreparingPipeline, ScriptedSource> = testRunner(
            client, source: ScriptedSource(inputs: inputs), broker: broker)
        let texts = (0..<50).map { "message \($0)" }
        try await withConnected(testConfiguration(broker, clientID: "watcher-prepared")) { watcher, watched in
            try watcher.subscribe(topics.events.name, qos: .atLeastOnce)
            try await waitUntil("the watcher's SUBACK") { watched.subscribedCount == 1 }
            let final = try await withThrowingTaskGroup(of: ServiceState<PreparingPipeline>.self) { group in
                group.addTask { await runner.run(ServiceState(pipeline: PreparingPipeline(topics: topics))) }
                try await waitUntil("the runner's connection") { client.isConnected }
                // The runner subscribes before its `online`; a message published after that reaches it.
                try await withConnected(testConfiguration(broker, clientID: "status-reader")) { reader, read in
                    try reader.subscribe(topics.locatorStatus.name, qos: .atLeastOnce)
                    try await waitUntil("online") { !read.payloads(on: topics.locatorStatus.name).isEmpty }
                }
                for text in texts {
                    _ = try watcher.publish(
                        topic: Topics.homeAssistantStatus.name, payload: Array(text.utf8), qos: .atLeastOnce)
                }
                try await waitUntil("every answer") { watched.payloads(on: topics.events.name).count >= texts.count }
                source.yield(.finish)
                let final = try #require(try await group.next())
                source.finish()
                return final
            }
            #expect(final.failure == nil)
            #expect(watched.payloads(on: topics.events.name) == texts.map { "\($0) as \($0.uppercased())" })
        }
    }

    @Test("a locator's flood waits in its outbox, not in libmosquitto's queue: an urgent publication overtakes it")
    func floodWindow() async throws {
        // The watcher must get all 3,001 even when the whole suite slows it down: mosquitto would drop QoS 1
        // messages past 1,000 queued for it.
        var options = BrokerOptions()
        options.extraConfiguration = ["max_queued_messages 0"]
        let broker = try await MosquittoBroker.start(options)
        defer { broker.cleanup() }
        let topics = Self.topics
        let count = 3000
        let pipeline = FloodPipeline(topics: topics, count: count)
        let client = try MQTTClient(testConfiguration(broker, clientID: "runner-flood"))
        let (inputs, source) = AsyncStream.makeStream(of: EchoPipeline.Input.self)
        let runner: ServiceRunner<FloodPipeline, ScriptedSource> = testRunner(
            client, source: ScriptedSource(inputs: inputs), broker: broker)
        try await withConnected(testConfiguration(broker, clientID: "watcher-flood")) { watcher, watched in
            try watcher.subscribe(topics.prefix + "/floors/#", qos: .atLeastOnce)
            try await waitUntil("the watcher's SUBACK") { watched.subscribedCount == 1 }
            let final = try await withThrowingTaskGroup(of: ServiceState<FloodPipeline>.self) { group in
                group.addTask { await runner.run(ServiceState(pipeline: pipeline)) }
                source.yield(.say("state"))
                try await waitUntil("the flood's first state") { !watched.messages.isEmpty }
                source.yield(.say("urgent"))
                try await waitUntil("every publication", timeout: .seconds(60)) {
                    watched.messages.count >= count + 1
                }
                source.yield(.finish)
                let final = try #require(try await group.next())
                source.finish()
                return final
            }
            #expect(final.failure == nil)
            let payloads = watched.messages.map { String(decoding: $0.payload, as: UTF8.self) }
            let urgent = try #require(payloads.firstIndex(of: "urgent"))
            print("flood window: the urgent publication arrived \(urgent + 1)th of \(payloads.count)")
            // Handed over all at once (handOverLimit 1,000,000), it arrives last, behind every state.
            #expect(urgent < count / 4, "arrived \(urgent + 1)th")
            // Nothing was lost or reordered among the states.
            #expect(payloads.filter { $0 != "urgent" } == (0..<count).map { "state \($0)" })
            #expect(final.session.outbox.statistics.published == count + 1)
        }
    }

    @Test("a lease that ends while the shell hands a flood over stops the hand-over there; the rest is discarded")
    func leaseEndsMidHandOver() async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        // Far more than 20 ms of hand-overs: each goes through libmosquitto's queue.
        let count = 50_000
        let pipeline = LeasedFloodPipeline(topics: Self.topics, count: count)
        let client = try MQTTClient(testConfiguration(broker, clientID: "runner-leased"))
        let (inputs, source) = AsyncStream.makeStream(of: EchoPipeline.Input.self)
        let runner: ServiceRunner<LeasedFloodPipeline, ScriptedSource> = testRunner(
            client, source: ScriptedSource(inputs: inputs), broker: broker)
        let statusTopic = pipeline.session.statusTopic.name
        let final = try await withConnected(testConfiguration(broker, clientID: "watcher-leased")) { watcher, watched in
            try watcher.subscribe(statusTopic, qos: .atLeastOnce)
            return try await withThrowingTaskGroup(of: ServiceState<LeasedFloodPipeline>.self) { group in
                group.addTask { await runner.run(ServiceState(pipeline: pipeline)) }
                // Connected first: the flood is handed over as it comes, not held for the connection.
                try await waitUntil("the runner's online") { watched.payloads(on: statusTopic).contains("online") }
                source.yield(.say("flood"))
                try await Task.sleep(for: .milliseconds(500))
                source.yield(.finish)
                let final = try #require(try await group.next())
                source.finish()
                return final
            }
        }
        #expect(final.failure == nil)
        let statistics = final.session.outbox.statistics
        print("leased flood: \(statistics.published) handed over, \(statistics.discarded) discarded")
        // Some went before the lease ended, and none after: the rest waited, and the tick past the lease discarded it.
        #expect(statistics.published > 0)
        #expect(statistics.published < count)
        #expect(statistics.published + statistics.discarded == count)
    }
}
