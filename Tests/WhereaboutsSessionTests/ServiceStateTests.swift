import Testing
import WhereaboutsSession
import WhereaboutsWire

/// A pipeline that publishes one event per source input and nothing else.
struct EventPipeline: ServicePipeline {
    typealias Input = Int
    var session: BrokerSession.Configuration {
        .init(statusTopic: topics.locatorStatus, outbox: .untilAcknowledged(capacity: 100, inFlightLimit: 4))
    }
    var subscriptions: [Subscription] { [] }
    func connected(at time: ServiceTime) -> [ServiceAction<Never>] { [] }
    func receive(topic: String, payload: [UInt8], at time: ServiceTime) -> [ServiceAction<Never>] { [] }
    func take(_ input: Int, at time: ServiceTime) -> [ServiceAction<Never>] {
        [.publish(Publication(topic: topics.events, payload: "\(input)", qos: .atLeastOnce, retain: false))]
    }
    func tick(at time: ServiceTime, outbox: Outbox) -> [ServiceAction<Never>] { [] }
    func stop(at time: ServiceTime) -> [ServiceAction<Never>] { [] }
}

@Suite("Service state")
struct ServiceStateTests {
    @Test("a broker that refuses every message is logged the first time, then at most once a minute with a count")
    func refusalsRateLimited() {
        var state = ServiceState(pipeline: EventPipeline())
        var logs: [String] = []
        var nextID = 1
        func handle(_ commands: [ServiceState<EventPipeline>.Command]) {
            for case .log(_, let line) in commands { logs.append(line) }
        }
        handle(state.connected(at: ServiceTime(now: 0, monotonic: 0)))
        // One refused message a second for three minutes.
        for second in 0..<180 {
            let time = ServiceTime(now: Double(second), monotonic: Double(second))
            handle(state.take(second, at: time))
            while let entry = state.nextToSend() {
                handle(state.sent(id: entry.id, result: .accepted(messageID: nextID), at: time))
                handle(state.acknowledged(messageID: nextID, success: entry.publication.retain, at: time))
                nextID += 1
            }
        }
        let refusals = logs.filter { $0.contains("refused") }
        #expect(refusals.count == 3, "\(refusals)")
        #expect(refusals.dropFirst().allSatisfy { $0.contains("(60 refused since the last report)") }, "\(refusals)")
        #expect(state.session.outbox.statistics.refused == 180)
    }
}
