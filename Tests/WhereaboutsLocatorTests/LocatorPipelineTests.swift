import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsMapFile
import WhereaboutsSession
import WhereaboutsWire

/// Drives the pipeline as the locator's shell does, with batches that simulated agents would publish.
struct PipelineHarness {
    var pipeline: LocatorPipeline
    var map: FloorMap { pipeline.map }
    var retained: [String: String] = [:]
    var events: [String] = []
    var logs: [String] = []
    /// Each log line's level, in the order of ``logs``.
    var logLevels: [LogLevel] = []
    var records: [String] = []
    var publications: [Publication] = []
    var sequence: [String: Int] = [:]
    var random = SplitMix64(seed: 42)

    /// The level of the first log line that contains `text`; nil when none does.
    func level(ofLogContaining text: String) -> LogLevel? {
        logs.firstIndex { $0.contains(text) }.map { logLevels[$0] }
    }

    init(configuration: LocatorPipeline.Configuration = LocatorPipeline.Configuration()) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let data = try #require(
            FileManager.default.contents(atPath: root.appendingPathComponent("maps/demo-office.json").path))
        pipeline = LocatorPipeline(map: try FloorMap.parse(Array(data)).get(), configuration: configuration)
    }

    mutating func perform(_ actions: [ServiceAction<LocatorEffect>]) {
        for action in actions {
            switch action {
            case .publish(let publication):
                publications.append(publication)
                if publication.retain { retained[publication.topic.name] = publication.payload }
                if publication.topic == pipeline.topics.events { events.append(publication.payload) }
            case .record(let line): records.append(line)
            case .log(let level, let line):
                logs.append(line)
                logLevels.append(level)
            case .effect, .stop, .discardHeld:
                Issue.record("the pipeline asks only to publish, record and log: \(action)")
            }
        }
    }

    /// The batch every agent would send for a tag at a point in one second: one aggregate per agent.
    mutating func batches(tag: TagIdentity, at position: Point, floor: UInt16, time: Double) -> [(
        topic: String, payload: [UInt8]
    )] {
        var result: [(String, [UInt8])] = []
        for agent in map.agents {
            guard let id = AgentID(agent.id) else { continue }
            let gap = Double(Int(agent.floor) - Int(floor))
            let dz = agent.height - map.model.tagHeight + gap * 3.5
            let horizontal = agent.position.distance(to: position)
            let distance = (horizontal * horizontal + dz * dz).squareRoot()
            // The map's walls on the path take their loss, as they would from a real signal.
            let path = Segment(agent.position, position)
            let walls = map.walls.filter { $0.floor == floor && $0.segment.properlyIntersects(path) }.map(\.loss)
            let rssi =
                (-59 - 20 * log10(max(distance, 0.1)) - walls.reduce(0, +) - abs(gap) * 15 + 2 * random.nextGaussian())
                .rounded()
            let readings =
                rssi > -100
                ? [ReadingBatch.Reading(tag: tag, time: time, rssi: rssi, count: 8, variance: 12, power: -59)] : []
            let seq = sequence[agent.id, default: 0]
            sequence[agent.id] = seq + 1
            let batch = ReadingBatch(agent: id, epoch: 1, seq: seq, sent: time, readings: readings)
            result.append((pipeline.topics.readings(agent: id).name, Array(batch.payload.utf8)))
        }
        return result
    }

    /// Every agent's retained `online`, as the broker hands it to a locator that subscribes.
    mutating func agentsSayOnline(now: Double) throws {
        for agent in map.agents {
            let id = try #require(AgentID(agent.id))
            perform(
                pipeline.receive(
                    topic: pipeline.topics.agentStatus(agent: id).name, payload: Array("online".utf8), now: now))
        }
    }

    mutating func run(tag: TagIdentity, at position: Point, floor: UInt16 = 1, from start: Double, seconds: Int) {
        for second in 0..<seconds {
            let now = start + Double(second)
            for (topic, payload) in batches(tag: tag, at: position, floor: floor, time: now) {
                perform(pipeline.receive(topic: topic, payload: payload, now: now))
            }
            perform(pipeline.tick(now: now))
        }
    }
}

let site = "f7826da6-4fa2-4e98-8024-bc5b71e0893e"

func alice() throws -> TagIdentity {
    try #require(TagIdentity("ibeacon-\(site)-100-1"))
}

@Suite("Locator pipeline")
struct LocatorPipelineTests {
    let start = 1_764_000_000.0

    @Test("readings published as agents would end as retained occupancy, a position and an enter event")
    func endToEnd() throws {
        var harness = try PipelineHarness()
        harness.perform(harness.pipeline.connected(now: start))
        harness.run(tag: try alice(), at: Point(x: 5, y: 4), from: start, seconds: 30)
        let occupancyTopic = "whereabouts/v1/\(site)/floors/1/zones/1/occupancy"
        let occupancy = try ZoneOccupancy(payload: try #require(harness.retained[occupancyTopic]))
        #expect(occupancy.state == .known)
        #expect(occupancy.count == 1)
        #expect(occupancy.tags.first?.name == "Alice")
        let position = try TagPosition(
            payload: try #require(harness.retained["whereabouts/v1/\(site)/tags/\(try alice())/position"]))
        #expect(position.zone == 1)
        #expect(Point(x: position.x, y: position.y).distance(to: Point(x: 5, y: 4)) < 2)
        #expect(position.nearest?.agent.rawValue == "g-lobby")
        let enter = try ZoneEvent(payload: try #require(harness.events.first))
        #expect(enter.kind == .enter && enter.zone == 1 && enter.zoneName == "Lobby")
        #expect(harness.pipeline.counters.rejected.isEmpty)
        #expect(harness.pipeline.counters.accepted > 200)
    }

    @Test("no occupancy is published during the warm-up, so a restart never passes through a false empty")
    func warmUp() throws {
        var harness = try PipelineHarness()
        harness.perform(harness.pipeline.connected(now: start))
        harness.run(tag: try alice(), at: Point(x: 5, y: 4), from: start, seconds: 9)
        #expect(!harness.publications.contains { $0.topic.name.hasSuffix("/occupancy") })
        harness.run(tag: try alice(), at: Point(x: 5, y: 4), from: start + 9, seconds: 3)
        let lobby = harness.publications.filter { $0.topic.name.hasSuffix("/floors/1/zones/1/occupancy") }
        let first = try ZoneOccupancy(payload: try #require(lobby.first).payload)
        #expect(first.count == 1, "the first occupancy published for the Lobby must already hold the tag")
        #expect(harness.publications.filter { $0.topic.name.hasSuffix("/occupancy") }.count >= harness.map.zones.count)
    }

    @Test("the warm-up counts from the first batch: a locator whose readings come late still publishes no false empty")
    func warmUpFromFirstBatch() throws {
        var harness = try PipelineHarness()
        harness.perform(harness.pipeline.connected(now: start))
        // Every agent's retained `online` arrives at once; the batches only 12 s later (a loaded machine, a backlog
        // to read after a restart), while the locator ticks.
        try harness.agentsSayOnline(now: start)
        for second in 0..<12 { harness.perform(harness.pipeline.tick(now: start + Double(second))) }
        #expect(!harness.publications.contains { $0.topic.name.hasSuffix("/occupancy") })
        harness.run(tag: try alice(), at: Point(x: 5, y: 4), from: start + 12, seconds: 12)
        let lobby = harness.publications.filter { $0.topic.name.hasSuffix("/floors/1/zones/1/occupancy") }
        let first = try ZoneOccupancy(payload: try #require(lobby.first).payload)
        #expect(first.count == 1, "the first occupancy published for the Lobby must already hold the tag")
    }

    @Test("with no batch at all for an agent timeout after the start, every zone is published unknown, never empty")
    func noBatchAtAll() throws {
        var harness = try PipelineHarness()
        harness.perform(harness.pipeline.connected(now: start))
        // The agents' retained `online` arrives, but not one batch: the agents died with the last run, or cannot
        // reach the broker. The previous run's counts must not stand for good.
        try harness.agentsSayOnline(now: start)
        let timeout = harness.map.model.agentTimeout
        let occupancy = { (harness: PipelineHarness) in
            harness.publications.filter { $0.topic.name.hasSuffix("/occupancy") }
        }
        // The statuses count as signs of life: the agents time out an agent timeout after them.
        for second in 0...Int(timeout) { harness.perform(harness.pipeline.tick(now: start + Double(second))) }
        #expect(occupancy(harness).isEmpty, "nothing before an agent timeout: batches may still be on their way")
        harness.perform(harness.pipeline.tick(now: start + timeout + 1))
        let unheard = try occupancy(harness).map { try ZoneOccupancy(payload: $0.payload) }
        #expect(unheard.count == harness.map.zones.count)
        #expect(unheard.allSatisfy { $0.state == .unknown && $0.count == 0 })
        for second in 2...5 { harness.perform(harness.pipeline.tick(now: start + timeout + Double(second))) }
        #expect(occupancy(harness).count == harness.map.zones.count, "said once")

        // A reconnection says it again (the broker may have lost its retained messages).
        harness.publications.removeAll()
        harness.perform(harness.pipeline.connected(now: start + timeout + 6))
        #expect(occupancy(harness).count == harness.map.zones.count)

        // Batches at last: the warm-up counts from the first, and the first known occupancy holds the tag.
        harness.publications.removeAll()
        harness.run(tag: try alice(), at: Point(x: 5, y: 4), from: start + timeout + 10, seconds: 12)
        let lobby = try occupancy(harness).filter { $0.topic.name.hasSuffix("/floors/1/zones/1/occupancy") }
            .map { try ZoneOccupancy(payload: $0.payload) }
        #expect(lobby.prefix { $0.state == .unknown }.isEmpty, "no unknown said again once batches come")
        let known = try #require(lobby.first { $0.state == .known })
        #expect(known.count == 1, "no false empty on the way from unknown to known")
    }

    @Test("a duplicate batch seen again after a reconnect is dropped and counted")
    func duplicates() throws {
        var harness = try PipelineHarness()
        let batches = harness.batches(tag: try alice(), at: Point(x: 5, y: 4), floor: 1, time: start)
        for (topic, payload) in batches {
            harness.perform(harness.pipeline.receive(topic: topic, payload: payload, now: start))
        }
        let accepted = harness.pipeline.counters.accepted
        for (topic, payload) in batches {
            harness.perform(harness.pipeline.receive(topic: topic, payload: payload, now: start + 1))
        }
        #expect(harness.pipeline.counters.accepted == accepted)
        #expect(harness.pipeline.counters.rejected[.duplicateBatch] == batches.count)
    }

    @Test("an agent that goes offline through its will turns the zones only it covers unknown, not empty")
    func agentOffline() throws {
        var harness = try PipelineHarness()
        harness.perform(harness.pipeline.connected(now: start))
        harness.run(tag: try alice(), at: Point(x: 27, y: 4), from: start, seconds: 15)
        // The status arrives for every floor-1 agent (the ones covering Meeting Room B among them).
        for agent in harness.map.agents where agent.floor == 1 {
            harness.perform(
                harness.pipeline.receive(
                    topic: "whereabouts/v1/\(site)/agents/\(agent.id)/status", payload: Array("offline".utf8),
                    now: start + 15))
        }
        harness.perform(harness.pipeline.tick(now: start + 16))
        let roomB = try ZoneOccupancy(
            payload: try #require(harness.retained["whereabouts/v1/\(site)/floors/1/zones/4/occupancy"]))
        #expect(roomB.state == .unknown)
        #expect(roomB.count == 1)
        let upstairs = try ZoneOccupancy(
            payload: try #require(harness.retained["whereabouts/v1/\(site)/floors/2/zones/1/occupancy"]))
        #expect(upstairs.state == .known)
    }

    @Test("Home Assistant's birth message brings the discovery configs again")
    func homeAssistantBirth() throws {
        var harness = try PipelineHarness()
        let actions = harness.pipeline.receive(topic: "homeassistant/status", payload: Array("online".utf8), now: start)
        let configs = actions.compactMap { action -> Publication? in
            if case .publish(let publication) = action { return publication }
            return nil
        }
        // The site's locator sensor, three entities per zone and per agent, five per named tag and two device
        // triggers per named tag and zone.
        let map = harness.map
        #expect(
            configs.count
                == 1 + map.zones.count * 3 + map.agents.count * 3 + map.knownTags.count * (5 + 2 * map.zones.count))
        #expect(
            configs.allSatisfy {
                $0.retain && $0.topic.name.hasPrefix("homeassistant/") && $0.topic.name.hasSuffix("/config")
            })
        #expect(
            harness.pipeline.receive(topic: "homeassistant/status", payload: Array("offline".utf8), now: start).isEmpty)
    }

    @Test("accepted readings are recorded as readings lines when recording is on")
    func recording() throws {
        var configuration = LocatorPipeline.Configuration()
        configuration.recordsReadings = true
        var harness = try PipelineHarness(configuration: configuration)
        harness.run(tag: try alice(), at: Point(x: 5, y: 4), from: start, seconds: 3)
        #expect(harness.records.count == harness.pipeline.counters.accepted)
        #expect(!harness.records.isEmpty)
        let decoded = JSONLines.decode(harness.records.joined(), as: RecordedReading.self)
        #expect(decoded.errors.isEmpty)
        #expect(decoded.records.first?.tag == (try alice()))
    }
}

@Suite("Locator pipeline against hostile batch numbering")
struct HostileNumberingTests {
    let start = 1_764_000_000.0

    /// One batch from `agent` with one reading of Alice, numbered as given.
    func batch(_ harness: PipelineHarness, agent: String, epoch: Int, seq: Int, time: Double) throws -> (
        String, [UInt8]
    ) {
        let id = try #require(AgentID(agent))
        let reading = ReadingBatch.Reading(tag: try alice(), time: time, rssi: -60, count: 5, variance: 4, power: -59)
        let payload = ReadingBatch(agent: id, epoch: epoch, seq: seq, sent: time, readings: [reading]).payload
        return (harness.pipeline.topics.readings(agent: id).name, Array(payload.utf8))
    }

    @Test(
        "one batch with seq 2^53, seq +1,000 or a newer epoch does not silence the agent's next 50 batches",
        arguments: [(0, 1 << 53), (0, 1010), (3_600_000, 0), (-1, 0)])
    func noSilencing(epochShift: Int, hostileSeq: Int) throws {
        var harness = try PipelineHarness()
        let epoch = Int(start * 1000) - 60_000
        for seq in 0..<10 {
            let (topic, payload) = try batch(
                harness, agent: "g-lobby", epoch: epoch, seq: seq, time: start + Double(seq))
            harness.perform(harness.pipeline.receive(topic: topic, payload: payload, now: start + Double(seq)))
        }
        // The hostile batch: the agent's own account, a jumped seq or another epoch (-1: an older one).
        let hostileEpoch = epochShift < 0 ? epoch - 1 : epoch + epochShift
        let now = start + 10
        let hostileTime = epochShift > 0 ? Double(hostileEpoch) / 1000 : now
        let (topic, payload) = try batch(harness, agent: "g-lobby", epoch: hostileEpoch, seq: hostileSeq, time: now)
        harness.perform(harness.pipeline.receive(topic: topic, payload: payload, now: max(now, hostileTime)))
        let accepted = harness.pipeline.counters.accepted
        for seq in 10..<60 {
            let time = max(now, hostileTime) + Double(seq)
            let (topic, payload) = try batch(harness, agent: "g-lobby", epoch: epoch, seq: seq, time: time)
            harness.perform(harness.pipeline.receive(topic: topic, payload: payload, now: time))
        }
        #expect(harness.pipeline.counters.accepted - accepted == 50)
    }

    @Test("seq gaps are counted as missing batches in the metrics and logged")
    func gapsInMetrics() throws {
        var harness = try PipelineHarness()
        let epoch = Int(start * 1000)
        for seq in [0, 1, 2, 6, 7, 20] {
            let (topic, payload) = try batch(harness, agent: "g-lobby", epoch: epoch, seq: seq, time: start + 1)
            harness.perform(harness.pipeline.receive(topic: topic, payload: payload, now: start + 1))
        }
        harness.perform(harness.pipeline.tick(now: start + 2))
        #expect(harness.pipeline.metrics(now: start + 2).batchesMissing == 3 + 12)
        #expect(harness.level(ofLogContaining: "agent g-lobby: 15 batches missing") == .warning)
    }

    @Test("a seq forged 1,000 ahead a second after the last is logged as a jump, not as 1000 batches missing")
    func forgedJump() throws {
        var harness = try PipelineHarness()
        let epoch = Int(start * 1000)
        for (seq, second) in [(0, 1.0), (1, 2.0), (1001, 3.0), (2, 3.0), (5, 6.0)] {
            let (topic, payload) = try batch(harness, agent: "g-lobby", epoch: epoch, seq: seq, time: start + second)
            harness.perform(harness.pipeline.receive(topic: topic, payload: payload, now: start + second))
        }
        harness.perform(harness.pipeline.tick(now: start + 7))
        #expect(harness.pipeline.metrics(now: start + 7).batchesMissing == 2, "the agent's own gap, 3 and 4")
        #expect(!harness.logs.contains { $0.contains("1000 batches missing") || $0.contains("999 batches missing") })
        #expect(
            harness.level(
                ofLogContaining: "agent g-lobby: 1 seq jumps since the last report, 1 in all, not counted as missing: "
                    + "the last from 1 to 1001 while its clock moved 1.0 s") == .warning, "\(harness.logs)")
    }

    @Test("batches taken seconds after they were sent show as input lag in the metrics, and once a minute in the log")
    func behindItsInput() throws {
        var configuration = LocatorPipeline.Configuration()
        configuration.metricsInterval = 10
        var harness = try PipelineHarness(configuration: configuration)
        let epoch = Int(start * 1000)
        var seq = 0
        /// A batch a second for `seconds` seconds from `from`, each taken `lag` seconds after it was sent; returns
        /// the metrics published meanwhile.
        func feed(from: Double, seconds: Int, lag: Double) throws -> [LocatorMetrics] {
            var metrics: [LocatorMetrics] = []
            for second in 0..<seconds {
                let sent = from + Double(second)
                let (topic, payload) = try batch(harness, agent: "g-lobby", epoch: epoch, seq: seq, time: sent)
                seq += 1
                var actions = harness.pipeline.receive(topic: topic, payload: payload, now: sent + lag)
                actions += harness.pipeline.tick(now: sent + lag)
                for case .publish(let publication) in actions
                where publication.topic == harness.pipeline.topics.locatorMetrics {
                    metrics.append(try LocatorMetrics(payload: publication.payload))
                }
                harness.perform(actions)
            }
            return metrics
        }
        // On time: the lag is the 0.2 s the broker took, and nothing is said.
        let prompt = try feed(from: start, seconds: 25, lag: 0.2)
        #expect(prompt.count >= 2)
        #expect(prompt.last?.inputLagP50.map { abs($0 - 200) < 1 } == true)
        #expect(!harness.logs.contains { $0.contains("behind its input") })
        // Three seconds behind: the metrics say so, and the log once in the next minute.
        let behind = try feed(from: start + 25, seconds: 40, lag: 3)
        #expect(behind.last?.inputLagP50.map { abs($0 - 3000) < 1 } == true)
        #expect(behind.last?.inputLagP99.map { abs($0 - 3000) < 1 } == true)
        #expect(harness.logs.count { $0.contains("behind its input") } == 1)
        #expect(harness.level(ofLogContaining: "behind its input") == .warning)
        #expect(harness.logs.contains { $0.contains("reached the engine 3.0 s after their agents sent them") })
        // Every reading was still taken: 3 s is within the map's reading_max_age.
        #expect(harness.pipeline.counters.accepted == 65)
    }

    @Test("a readings topic with an invalid agent id is counted as bad_agent, not dropped silently")
    func invalidAgentInTopic() throws {
        var harness = try PipelineHarness()
        let topic = "\(harness.pipeline.topics.prefix)/agents/not+valid/readings"
        harness.perform(harness.pipeline.receive(topic: topic, payload: Array("{}".utf8), now: start))
        #expect(harness.pipeline.counters.rejected[.badAgent] == 1)
        #expect(harness.level(ofLogContaining: "invalid agent id") == .warning)
    }

    @Test("a reading 30 s old is recorded but counted too_old_to_track; one 90 s old is time_too_old")
    func oldReadings() throws {
        var configuration = LocatorPipeline.Configuration()
        configuration.recordsReadings = true
        var harness = try PipelineHarness(configuration: configuration)
        let epoch = Int(start * 1000)
        let now = start + 100
        for (seq, age) in [(0, 30.0), (1, 90.0)] {
            let (topic, payload) = try batch(harness, agent: "g-lobby", epoch: epoch, seq: seq, time: now - age)
            harness.perform(harness.pipeline.receive(topic: topic, payload: payload, now: now))
        }
        #expect(harness.pipeline.counters.rejected[.tooOldToTrack] == 1)
        #expect(harness.pipeline.counters.rejected[.timeTooOld] == 1)
        #expect(harness.records.count == 1)
    }
}

@Suite("Locator pipeline, what an earlier run left")
struct LeftoverStateTests {
    @Test("a retained occupancy of a zone the map no longer has is cleared; one of a zone it has is left alone")
    func leftoverOccupancy() throws {
        var harness = try PipelineHarness()
        let prefix = harness.pipeline.topics.prefix
        let gone = "\(prefix)/floors/1/zones/99/occupancy"
        let kept = "\(prefix)/floors/1/zones/1/occupancy"
        harness.perform(harness.pipeline.receive(topic: gone, payload: Array("{}".utf8), now: 1))
        harness.perform(harness.pipeline.receive(topic: kept, payload: Array("{}".utf8), now: 1))
        // An empty payload is a clearing already done; a non-canonical number is not our topic.
        harness.perform(harness.pipeline.receive(topic: "\(prefix)/floors/1/zones/98/occupancy", payload: [], now: 1))
        harness.perform(harness.pipeline.receive(topic: "\(prefix)/floors/01/zones/97/occupancy", payload: [1], now: 1))
        #expect(harness.publications.map(\.topic.name) == [gone])
        #expect(harness.publications.first?.payload == "")
        #expect(harness.publications.first?.retain == true)
    }
}
