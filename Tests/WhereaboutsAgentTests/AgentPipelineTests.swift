import Testing
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

/// An H4 LE advertising report event carrying the iBeacon `tag(minor)` at `rssi`.
/// The address is `minor & 0xFF` then 05:04:03:02:01 (little-endian in the event), public, unless given.
func iBeaconEvent(
    minor: UInt16, rssi: Int8, uuid: BeaconUUID? = siteUUID, address: [UInt8]? = nil, addressType: UInt8 = 0
) -> [UInt8] {
    guard let uuid else { preconditionFailure("bad test UUID") }
    let beacon: [UInt8] =
        [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid.bytes + [
            0x00, 0x01, UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC5,
        ]
    let report: [UInt8] =
        [0x00, addressType] + (address ?? [UInt8(minor & 0xFF), 0x05, 0x04, 0x03, 0x02, 0x01])
        + [UInt8(beacon.count)] + beacon + [UInt8(bitPattern: rssi)]
    let body: [UInt8] = [0x02, 0x01] + report
    return [0x04, 0x3E, UInt8(body.count)] + body
}

/// Runs the agent's service state as the runner does, with the client's part played in memory.
struct AgentServiceHarness {
    var state: ServiceState<AgentPipeline>
    var connected = false
    var nextMessageID = 1
    var inFlight: [Int] = []
    var sent: [Publication] = []
    var commands: [ServiceState<AgentPipeline>.Command] = []

    init(live: Bool, at time: ServiceTime, filter: SightingFilter? = nil, journaled: Bool = false) {
        guard let siteUUID, let agent = AgentID("kitchen") else { preconditionFailure("bad test ids") }
        var configuration = AgentPipeline.Configuration(
            agent: agent, topics: Topics(site: siteUUID), epoch: 7,
            filter: filter ?? SightingFilter(constraints: [BeaconIdentityConstraint(uuid: siteUUID)]))
        configuration.isLive = live
        configuration.journaled = journaled
        state = ServiceState(pipeline: AgentPipeline(configuration: configuration, at: time))
    }

    mutating func perform(_ new: [ServiceState<AgentPipeline>.Command], at time: ServiceTime) {
        commands += new
        while let entry = state.nextToSend() {
            let result: BrokerSession.SendResult
            if connected {
                inFlight.append(nextMessageID)
                sent.append(entry.publication)
                result = .accepted(messageID: nextMessageID)
                nextMessageID += 1
            } else {
                result = .noConnection
            }
            commands += state.sent(id: entry.id, result: result, at: time)
        }
    }

    mutating func connect(at time: ServiceTime) {
        connected = true
        perform(state.connected(at: time), at: time)
    }

    mutating func take(_ input: AgentPipeline.Input, at time: ServiceTime) {
        perform(state.take(input, at: time), at: time)
    }

    mutating func acknowledgeAll(at time: ServiceTime) {
        while !inFlight.isEmpty {
            let id = inFlight.removeFirst()
            perform(state.acknowledged(messageID: id, success: true, at: time), at: time)
        }
    }

    /// The batches published, as the locator decodes them.
    var batches: [DecodedBatch] {
        guard let agent = AgentID("kitchen") else { return [] }
        return sent.filter { $0.topic.name.hasSuffix("/readings") }.compactMap {
            BatchDecoder().decode(Array($0.payload.utf8), topicAgent: agent, knownAgents: [agent], now: 1_764_000_010)
                .batch
        }
    }
}

@Suite("Agent pipeline")
struct AgentPipelineTests {
    let start = 1_764_000_000.0

    @Test("a replay becomes one batch per window, seq from 0; its end flushes the last window and says goodbye")
    func replay() throws {
        var harness = AgentServiceHarness(live: false, at: ServiceTime(now: start, monotonic: 0))
        harness.connect(at: ServiceTime(now: start, monotonic: 0))
        for second in 0..<5 {
            let events = (0..<4).map { n in
                HeardEvent(
                    bytes: iBeaconEvent(minor: 1, rssi: Int8(-60 - n)), time: start + Double(second) + 0.2 * Double(n))
            }
            harness.take(.events(events, framing: .h4), at: ServiceTime(now: start + 10, monotonic: 1))
        }
        #expect(harness.batches.map(\.seq) == [0, 1, 2, 3])
        harness.take(.sourceEnded(problem: nil), at: ServiceTime(now: start + 10, monotonic: 2))
        #expect(harness.commands.contains(.effect(.stopSource)))
        let batches = harness.batches
        #expect(batches.map(\.seq) == [0, 1, 2, 3, 4])
        #expect(batches.allSatisfy { $0.accepted.count == 1 && $0.accepted[0].count == 4 && $0.epoch == 7 })
        #expect(harness.sent.last?.payload != "offline", "offline waits for every batch to be acknowledged")
        harness.acknowledgeAll(at: ServiceTime(now: start + 10, monotonic: 2))
        #expect(harness.sent.last?.payload == "offline")
        #expect(harness.commands.contains(.disconnect))
        #expect(harness.state.failure == nil)
        let summary = harness.state.pipeline.summary(outbox: harness.state.session.outbox)
        #expect(summary.contains("events=20 ") && summary.contains("batches=5 ") && summary.contains("acked=5 "))
    }

    @Test("a journal that cannot be written makes the status degraded and is counted; online again once it can")
    func journalFailureIsLoud() {
        var harness = AgentServiceHarness(
            live: true, at: ServiceTime(now: start, monotonic: 0), journaled: true)
        let time = ServiceTime(now: start, monotonic: 0)
        func summary() -> String { harness.state.pipeline.summary(outbox: harness.state.session.outbox) }
        #expect(summary().contains("journal=disk journal-failures=0 "), "\(summary())")
        // Failing at start, before the first connection: the first status says so.
        harness.perform(harness.state.journalWritable(false, at: time), at: time)
        harness.perform(harness.state.journalWritable(false, at: time), at: time)
        harness.connect(at: time)
        #expect(harness.sent.map(\.payload) == ["degraded"])
        #expect(summary().contains("journal=memory journal-failures=1 "), "\(summary())")
        harness.acknowledgeAll(at: time)
        harness.perform(harness.state.journalWritable(true, at: time), at: time)
        #expect(harness.sent.map(\.payload) == ["degraded", "online"])
        #expect(summary().contains("journal=disk journal-failures=1 "), "\(summary())")
        harness.perform(harness.state.journalWritable(false, at: time), at: time)
        #expect(harness.sent.map(\.payload) == ["degraded", "online", "degraded"])
        #expect(summary().contains("journal=memory journal-failures=2 "), "\(summary())")
    }

    @Test("the controller's dropped events reach the counters line the agent logs while it runs, never going down")
    func sourceDropsInCounters() {
        var harness = AgentServiceHarness(live: true, at: ServiceTime(now: start, monotonic: 0))
        harness.connect(at: ServiceTime(now: start, monotonic: 0))
        harness.take(.sourceDrops(3), at: ServiceTime(now: start + 1, monotonic: 1))
        // A count read before the last one arrives late: the line keeps the larger.
        harness.take(.sourceDrops(2), at: ServiceTime(now: start + 2, monotonic: 2))
        let later = ServiceTime(now: start + 3_600, monotonic: 3_600)
        harness.perform(harness.state.tick(at: later), at: later)
        let counters = harness.commands.compactMap { command -> String? in
            guard case .log(_, let message) = command, message.hasPrefix("counters: ") else { return nil }
            return message
        }
        #expect(counters.count == 1 && counters[0].contains(" source-drops=3 "), "\(counters)")
        // The final summary takes the source's own count when it knows more than it told.
        let outbox = harness.state.session.outbox
        #expect(harness.state.pipeline.summary(outbox: outbox, sourceDrops: 1).contains(" source-drops=3 "))
        #expect(harness.state.pipeline.summary(outbox: outbox, sourceDrops: 9).contains(" source-drops=9 "))
    }

    @Test("without a state directory the summary says journal=none and the status is online")
    func noJournal() {
        var harness = AgentServiceHarness(live: true, at: ServiceTime(now: start, monotonic: 0))
        #expect(harness.state.pipeline.summary(outbox: harness.state.session.outbox).contains("journal=none "))
        harness.connect(at: ServiceTime(now: start, monotonic: 0))
        #expect(harness.sent.map(\.payload) == ["online"])
    }

    @Test("one identity heard from several addresses is counted, warned about once, and named in the summary")
    func sharedIdentity() throws {
        var harness = AgentServiceHarness(live: false, at: ServiceTime(now: start, monotonic: 0))
        harness.connect(at: ServiceTime(now: start, monotonic: 0))
        let events = (0..<6).map { n in
            // Minor 1 from three addresses (two of them twice), minor 2 from one.
            HeardEvent(
                bytes: iBeaconEvent(minor: n == 5 ? 2 : 1, rssi: -60, address: [UInt8(n % 3), 0, 0, 0, 0, 0x10]),
                time: start + 0.1 * Double(n))
        }
        harness.take(.events(events, framing: .h4), at: ServiceTime(now: start, monotonic: 1))
        let warnings = harness.commands.compactMap { command -> String? in
            if case .log(.warning, let line) = command { line } else { nil }
        }
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("heard from 2 addresses") == true)
        #expect(harness.state.pipeline.sharedIdentities == [SharedIdentity(tag: tag(1), addresses: 3)])
        let summary = harness.state.pipeline.summary(outbox: harness.state.session.outbox)
        #expect(summary.contains("identities=2 shared-identities=1 addresses[\(tag(1))=3]"), "\(summary)")
    }

    @Test("--address naming a private rotating address is warned about once, and never tracked")
    func privateAddress() throws {
        // C0:… static random is tracked; 4x:… (resolvable) and 0x:… (non-resolvable) random ones rotate.
        let addresses = try ["C1:00:00:00:00:01", "41:00:00:00:00:02", "01:00:00:00:00:03"].map {
            try #require(DeviceAddress($0))
        }
        let filter = SightingFilter(constraints: [], addresses: Set(addresses))
        var harness = AgentServiceHarness(live: false, at: ServiceTime(now: start, monotonic: 0), filter: filter)
        harness.connect(at: ServiceTime(now: start, monotonic: 0))
        // A foreign iBeacon from each, random address type, twice.
        let events = (0..<6).map { n in
            let value = addresses[n % 3].value
            let bytes = (0..<6).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
            return HeardEvent(
                bytes: iBeaconEvent(minor: 9, rssi: -60, uuid: otherUUID, address: bytes, addressType: 1),
                time: start + 0.1 * Double(n))
        }
        harness.take(.events(events, framing: .h4), at: ServiceTime(now: start, monotonic: 1))
        harness.take(.sourceEnded(problem: nil), at: ServiceTime(now: start, monotonic: 1))
        let warnings = harness.commands.compactMap { command -> String? in
            if case .log(.warning, let line) = command { line } else { nil }
        }
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("01:00:00:00:00:03, 41:00:00:00:00:02") == true, "\(warnings)")
        #expect(warnings.first?.contains("C1:00") == false)
        let tracked = harness.batches.flatMap(\.accepted).map(\.tag)
        #expect(Set(tracked) == [addresses[0].tag])
    }

    @Test("a live scan closes windows by the clock and asks for a restart when it goes silent after steady traffic")
    func watchdog() {
        var harness = AgentServiceHarness(live: true, at: ServiceTime(now: start, monotonic: 0))
        harness.connect(at: ServiceTime(now: start, monotonic: 0))
        for n in 0..<20 {
            let time = ServiceTime(now: start + 0.1 * Double(n), monotonic: 0.1 * Double(n))
            harness.take(
                .events([HeardEvent(bytes: iBeaconEvent(minor: 2, rssi: -70), time: time.now)], framing: .h4), at: time)
        }
        harness.perform(
            harness.state.tick(at: ServiceTime(now: start + 2.5, monotonic: 2.5)),
            at: ServiceTime(now: start + 2.5, monotonic: 2.5))
        #expect(harness.batches.count == 2, "the clock closed the windows of seconds 0 and 1")
        #expect(!harness.commands.contains(.effect(.restartScan)))
        let silent = ServiceTime(now: start + 32, monotonic: 32)
        harness.perform(harness.state.tick(at: silent), at: silent)
        #expect(harness.commands.contains(.effect(.restartScan)))
    }

    @Test("a live source that fails stops the agent with a failure, after the goodbye")
    func sourceFailure() {
        var harness = AgentServiceHarness(live: true, at: ServiceTime(now: start, monotonic: 0))
        harness.connect(at: ServiceTime(now: start, monotonic: 0))
        let time = ServiceTime(now: start + 1, monotonic: 1)
        harness.take(.sourceEnded(problem: SourceProblem(message: "hci0: device gone", isFailure: true)), at: time)
        #expect(harness.state.failure == "source failed: hci0: device gone")
        harness.acknowledgeAll(at: time)
        #expect(harness.commands.contains(.disconnect))
    }
}
