import Testing
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsCore
import WhereaboutsGATT
import WhereaboutsSession
import WhereaboutsWire

/// The agent's GATT jobs through its pipeline (`--gatt`): requests in on its topic, jobs out to the radio with the
/// address their tag was last heard from, a result out for every job.
@Suite("GATT job desk in the agent's pipeline")
struct GATTJobDeskTests {
    static let agent = AgentID("kitchen")
    static var topics: Topics? { siteUUID.map { Topics(site: $0) } }

    static func pipeline(gatt: Bool = true) throws -> AgentPipeline {
        var configuration = AgentPipeline.Configuration(
            agent: try #require(agent), topics: try #require(topics), epoch: 7,
            filter: SightingFilter(constraints: [BeaconIdentityConstraint(uuid: try #require(siteUUID))]))
        configuration.isLive = true
        configuration.gatt = gatt
        return AgentPipeline(configuration: configuration, at: ServiceTime(now: 1_764_000_000, monotonic: 10))
    }

    static func time(_ monotonic: Double) -> ServiceTime {
        ServiceTime(now: 1_764_000_000 + monotonic, monotonic: monotonic)
    }

    /// The tag `iBeaconEvent(minor:)` makes: site UUID, major 1.
    static func tag(_ minor: UInt16) throws -> TagIdentity {
        .iBeacon(uuid: try #require(siteUUID), major: 1, minor: minor)
    }

    static func request(_ id: String, tag: String, deadline: Double = 10) -> [UInt8] {
        Array(#"{"id":"\#(id)","tag":"\#(tag)","operation":"battery","deadline":\#(deadline)}"#.utf8)
    }

    static var requests: String {
        guard let topics, let agent else { return "" }
        return topics.gattRequests(agent: agent).name
    }
    static var results: String {
        guard let topics, let agent else { return "" }
        return topics.gattResults(agent: agent).name
    }

    static func jobs(_ actions: [ServiceAction<AgentPipeline.Effect>]) -> [GATTJob] {
        actions.compactMap { if case .effect(.runGATTJob(let job)) = $0 { job } else { nil } }
    }

    static func published(_ actions: [ServiceAction<AgentPipeline.Effect>]) -> [GATTJobResult] {
        actions.compactMap { action in
            guard case .publish(let publication) = action, publication.topic.name == results else { return nil }
            #expect(publication.qos == .atLeastOnce && !publication.retain)
            return try? GATTJobResult(payload: publication.payload)
        }
    }

    @Test("without --gatt the agent subscribes to nothing; with it, to its own requests topic at QoS 1")
    func subscriptions() throws {
        #expect(try Self.pipeline(gatt: false).subscriptions.isEmpty)
        let subscriptions = try Self.pipeline().subscriptions
        #expect(subscriptions.map(\.filter.filter) == [Self.requests])
        #expect(subscriptions.first?.qos == .atLeastOnce)
        var plain = try Self.pipeline(gatt: false)
        #expect(plain.receive(topic: Self.requests, payload: Self.request("a", tag: "x"), at: Self.time(11)).isEmpty)
    }

    @Test("a job naming a tag goes to the radio with the address the tag was last heard from")
    func lastAddress() throws {
        var pipeline = try Self.pipeline()
        let first = iBeaconEvent(minor: 3, rssi: -60, address: [1, 1, 1, 1, 1, 0xC1], addressType: 1)
        let second = iBeaconEvent(minor: 3, rssi: -60, address: [2, 2, 2, 2, 2, 0xC2], addressType: 1)
        for (index, event) in [first, second].enumerated() {
            _ = pipeline.take(
                .events([HeardEvent(bytes: event, time: 1_764_000_011 + Double(index))], framing: .h4),
                at: Self.time(11))
        }
        let actions = pipeline.receive(
            topic: Self.requests, payload: Self.request("job-1", tag: try Self.tag(3).description, deadline: 12),
            at: Self.time(12))
        let job = try #require(Self.jobs(actions).first)
        #expect(job.request.id.rawValue == "job-1")
        #expect(job.address == DeviceAddress(value: 0xC202_0202_0202))
        #expect(job.addressType == .randomDevice)
        #expect(job.remaining == 12)
        // The radio's result goes out on the results topic, the tag echoed.
        let ended = GATTJobResult(
            id: job.request.id, tag: job.request.tag, status: .ok, values: GATTJobValues(battery: 64))
        let results = Self.published(pipeline.take(.gattJobEnded(ended), at: Self.time(13)))
        #expect(results == [ended])
    }

    @Test("a job naming a tag not heard ends at once as notConnectable without a code, and the next one starts")
    func unheardTag() throws {
        var pipeline = try Self.pipeline()
        let unknown = pipeline.receive(
            topic: Self.requests, payload: Self.request("nobody", tag: try Self.tag(9).description), at: Self.time(11))
        #expect(Self.jobs(unknown).isEmpty)
        #expect(Self.published(unknown).map(\.status) == [.notConnectable(code: nil)])
        let addressed = pipeline.receive(
            topic: Self.requests,
            payload: Array(#"{"id":"direct","address":"mac-c01122334455","operation":"info"}"#.utf8), at: Self.time(12))
        #expect(Self.jobs(addressed).map(\.address) == [DeviceAddress(value: 0xC011_2233_4455)])
        // A deadline passing: `timeout` published and the job cancelled on the radio.
        let late = pipeline.tick(
            at: Self.time(50), outbox: Outbox(policy: .untilAcknowledged(capacity: 8, inFlightLimit: 8)))
        #expect(Self.published(late).map(\.status) == [.timeout])
        #expect(late.contains(.effect(.cancelGATTJob(try #require(GATTJobID("direct"))))))
    }

    @Test("the map of last addresses is bounded: the tag heard longest ago is forgotten first")
    func boundedMap() throws {
        var desk = GATTJobDesk(agent: try #require(Self.agent), topics: try #require(Self.topics))
        let count = GATTJobDesk.trackedTags + 1
        func hear(_ index: Int) throws {
            let tag = TagIdentity.address(UInt64(0xC000_0000_0000 + index))
            let address = try #require(DeviceAddress(value: UInt64(0xC000_0000_0000 + index)))
            desk.heard(
                BeaconSighting(tag: tag, rssi: -60, measuredPower: nil, address: address, addressType: .randomDevice))
        }
        // Tag 0, added first, is heard again before the map overflows: tag 1 is then the one heard longest ago (a
        // first-in-first-out map would forget tag 0).
        for index in 0..<(count - 1) { try hear(index) }
        try hear(0)
        try hear(count - 1)
        func status(_ id: String, _ index: Int) -> GATTJobStatus? {
            let tag = TagIdentity.address(UInt64(0xC000_0000_0000 + index)).description
            let actions = desk.receive(topic: Self.requests, payload: Self.request(id, tag: tag), now: 1) ?? []
            if let job = Self.jobs(actions).first {
                _ = desk.finished(GATTJobResult(id: job.request.id, status: .linkLost), now: 1)
                return .linkLost
            }
            return Self.published(actions).first?.status
        }
        #expect(status("oldest", 1) == .notConnectable(code: nil))
        #expect(status("heard-again", 0) == .linkLost, "sent to the radio")
        #expect(status("newest", count - 1) == .linkLost, "sent to the radio")
    }

    @Test("the ACL packets the jobs' links dropped are added up on the counters line, in gatt[...]")
    func droppedPacketsCounted() throws {
        var pipeline = try Self.pipeline()
        let outbox = Outbox(policy: .untilAcknowledged(capacity: 8, inFlightLimit: 8))
        #expect(pipeline.summary(outbox: outbox).contains(",refused=0,acl-dropped=0]"))
        try Self.endJobs(&pipeline, [2, 0, 3].map { dropped in { .gattJobEnded($0, droppedPackets: dropped) } })
        let summary = pipeline.summary(outbox: outbox)
        #expect(summary.contains("gatt[received=3,completed=3,"), "\(summary)")
        #expect(summary.contains(",acl-dropped=5]"), "\(summary)")
    }

    @Test("what the jobs' links dropped coming in is added up by reason on the counters line, once there is some")
    func linkDropsCounted() throws {
        var pipeline = try Self.pipeline()
        let outbox = Outbox(policy: .untilAcknowledged(capacity: 8, inFlightLimit: 8))
        #expect(!pipeline.summary(outbox: outbox).contains("gatt-link-drops"), "nothing dropped: not listed")
        var first = LinkCounters()
        first.unknownChannels = 2
        var second = LinkCounters()
        (second.unknownChannels, second.malformedACL) = (1, 4)
        try Self.endJobs(
            &pipeline, [first, LinkCounters(), second].map { drops in { .gattJobEnded($0, linkDrops: drops) } })
        let summary = pipeline.summary(outbox: outbox)
        #expect(summary.hasSuffix(",acl-dropped=0] gatt-link-drops[malformed-acl=4,unknown-channel=3]"), "\(summary)")
    }

    /// Runs one battery job per element of `ends`, each ending with its link lost as the element says.
    static func endJobs(
        _ pipeline: inout AgentPipeline, _ ends: [(GATTJobResult) -> AgentPipeline.Input]
    ) throws {
        for (index, end) in ends.enumerated() {
            let payload = Array(#"{"id":"j\#(index)","address":"mac-c01122334455","operation":"battery"}"#.utf8)
            let job = try #require(
                Self.jobs(pipeline.receive(topic: Self.requests, payload: payload, at: Self.time(11))).first)
            _ = pipeline.take(end(GATTJobResult(id: job.request.id, status: .linkLost)), at: Self.time(12))
        }
    }
}
