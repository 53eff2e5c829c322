import Testing
import WhereaboutsCalibration
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsSurvey
import WhereaboutsWire

/// The survey's state machine on the open office (24 m × 16 m, agents o-1…o-6), fed by hand.
@Suite("Survey session")
struct SurveySessionTests {
    static let site = "5ce1a210-0000-4000-8000-00000000a001"

    static func tag(_ minor: Int = 1) throws -> TagIdentity {
        try #require(TagIdentity(wire: "ibeacon-\(site)-1-\(minor)"))
    }

    static func session(dwell: Double = 30) throws -> SurveySession {
        var configuration = SurveySession.Configuration()
        configuration.dwell = dwell
        return try SurveySession(document: try scenarioDocument("open-office"), configuration: configuration)
    }

    /// One reading of `tag` per agent at `time`.
    static func readings(of tag: TagIdentity, at time: Double) throws -> [RecordedReading] {
        try (1...6).map { agent in
            RecordedReading(time: time, agent: try #require(AgentID("o-\(agent)")), tag: tag, rssi: -70, count: 10)
        }
    }

    @Test("a reference point writes a truth line on arrival and one when the dwell ends; the truth holds between")
    func dwell() throws {
        var session = try Self.session()
        let tag = try Self.tag()
        #expect(session.start(tag: tag, now: 90).isEmpty)
        let arrival = try session.standAt(floor: 1, x: 4, y: 4, now: 100)
        #expect(arrival.truth == [TruthRecord(time: 100, tag: tag, x: 4, y: 4, floor: 1)])
        #expect(session.tick(now: 129.9).truth.isEmpty)
        #expect(session.progress(now: 115).place?.progress == 0.5)
        #expect(session.progress(now: 115).phase == .standing)
        let leaving = session.tick(now: 131).truth
        #expect(leaving == [TruthRecord(time: 130, tag: tag, x: 4, y: 4, floor: 1)], "at the dwell's end, not at now")
        #expect(session.tick(now: 200).truth.isEmpty)
        let progress = session.progress(now: 200)
        #expect(progress.phase == .idle)
        #expect(progress.place?.progress == 1)
        #expect(progress.place?.isActive == false)
        // What calibrate reads: the position is held for the whole dwell, not for 5 s.
        let track = TruthTrack(session.truth)
        #expect(track.position(of: tag, at: 117)?.point == Point(x: 4, y: 4))
        #expect(track.position(of: tag, at: 131) == nil)
        // Between two places more than 5 s apart (walking from one point to the next), still no truth.
        let walkedOff = TruthTrack([
            TruthRecord(time: 0, tag: tag, x: 4, y: 4, floor: 1), TruthRecord(time: 10, tag: tag, x: 8, y: 4, floor: 1),
        ])
        #expect(walkedOff.position(of: tag, at: 5) == nil)
    }

    @Test("a new point before the dwell ends closes the current one early, with its own line")
    func earlyClose() throws {
        var session = try Self.session()
        let tag = try Self.tag()
        _ = session.start(tag: tag, now: 0)
        _ = try session.standAt(floor: 1, x: 4, y: 4, now: 100)
        let next = try session.standAt(floor: 1, x: 8, y: 4, now: 110)
        #expect(
            next.truth == [
                TruthRecord(time: 110, tag: tag, x: 4, y: 4, floor: 1),
                TruthRecord(time: 110, tag: tag, x: 8, y: 4, floor: 1),
            ])
        #expect(session.tick(now: 139).truth.isEmpty, "the new point's dwell runs from its own arrival")
        #expect(session.tick(now: 140).truth == [TruthRecord(time: 140, tag: tag, x: 8, y: 4, floor: 1)])
        #expect(session.finish(now: 150).truth.isEmpty, "nothing left to close")
        #expect(session.truth.count == 4)
        #expect(session.places == 2)
    }

    @Test("a walk writes truth every second and at each corner, at the walking speed, as time passes")
    func walk() throws {
        var session = try Self.session()
        let tag = try Self.tag()
        _ = session.start(tag: tag, now: 0)
        let route = [Point(x: 2, y: 2), Point(x: 6, y: 2), Point(x: 6, y: 5)]
        let first = try session.walk(floor: 1, route: route, speed: 1, now: 10)
        #expect(first.truth.map(\.time) == [10])
        #expect(session.tick(now: 13.5).truth.map(\.time) == [11, 12, 13])
        #expect(session.progress(now: 13.5).place?.position == Point(x: 5.5, y: 2))
        let rest = session.tick(now: 30).truth
        #expect(rest.map(\.time) == [14, 15, 16, 17])
        #expect(
            rest.map { Point(x: $0.x, y: $0.y) } == [
                Point(x: 6, y: 2), Point(x: 6, y: 3), Point(x: 6, y: 4), Point(x: 6, y: 5),
            ])
        #expect(session.progress(now: 30).phase == .idle)
        #expect(throws: SurveyError.badRoute("a route needs two points or more")) {
            try session.walk(floor: 1, route: [Point(x: 1, y: 1)], now: 40)
        }
        // Cut short by a point: a line where the walker was.
        _ = try session.walk(floor: 1, route: [Point(x: 2, y: 2), Point(x: 12, y: 2)], speed: 2, now: 50)
        let cut = try session.standAt(floor: 1, x: 20, y: 10, now: 52.5)
        #expect(
            cut.truth.map { Point(x: $0.x, y: $0.y) } == [
                Point(x: 4, y: 2), Point(x: 6, y: 2), Point(x: 7, y: 2), Point(x: 20, y: 10),
            ])
        #expect(cut.truth.map(\.time) == [51, 52, 52.5, 52.5])
    }

    @Test("actions before the start, off the map or outside the floor are refused")
    func refused() throws {
        var session = try Self.session()
        #expect(throws: SurveyError.notStarted) { try session.standAt(floor: 1, x: 4, y: 4, now: 1) }
        _ = session.start(tag: try Self.tag(), now: 1)
        #expect(throws: SurveyError.unknownFloor(9)) { try session.standAt(floor: 9, x: 4, y: 4, now: 1) }
        #expect(throws: SurveyError.outsideFloor(floor: 1, x: 30, y: 4)) {
            try session.standAt(floor: 1, x: 30, y: 4, now: 1)
        }
        #expect(session.truth.isEmpty)
        #expect(throws: SurveyError.self) { try SurveySession(document: ["site": "nowhere"]) }
    }

    @Test("readings of other tags are ignored; bad readings and batches are dropped and counted")
    func drops() throws {
        var session = try Self.session()
        let tag = try Self.tag()
        let other = try Self.tag(2)
        let agent = try #require(AgentID("o-1"))
        #expect(session.take(RecordedReading(time: 1, agent: agent, tag: tag, rssi: -60)).isEmpty, "not started")
        _ = session.start(tag: tag, now: 1)
        #expect(session.take(RecordedReading(time: 2, agent: agent, tag: other, rssi: -60)).isEmpty)
        #expect(session.take(RecordedReading(time: 2, agent: agent, tag: tag, rssi: .nan)).isEmpty)
        #expect(session.take(RecordedReading(time: .infinity, agent: agent, tag: tag, rssi: -60)).isEmpty)
        #expect(session.take(RecordedReading(time: 2, agent: agent, tag: tag, rssi: -60)).readings.count == 1)

        // Through the broker's payloads, checked as the locator checks them.
        let topic = Topics(site: try #require(BeaconUUID(Self.site))).readings(agent: agent).name
        func batch(seq: Int, tag: String, agent: String = "o-1") -> [UInt8] {
            Array(
                (#"{"v":1,"agent":"\#(agent)","epoch":1000,"seq":\#(seq),"sent":10,"readings":["#
                    + #"{"tag":"\#(tag)","t":10,"rssi":-61,"n":4,"var":2.5}]}"#).utf8)
        }
        let good = session.take(topic: topic, payload: batch(seq: 0, tag: tag.description), now: 11)
        #expect(good.readings.map(\.rssi) == [-61])
        #expect(session.take(topic: topic, payload: batch(seq: 0, tag: tag.description), now: 11).isEmpty)
        #expect(session.take(topic: topic, payload: batch(seq: 1, tag: "ibeacon-nonsense"), now: 11).isEmpty)
        #expect(session.take(topic: topic, payload: Array("{".utf8), now: 11).isEmpty)
        #expect(session.take(topic: topic, payload: batch(seq: 2, tag: tag.description, agent: "o-9"), now: 11).isEmpty)
        #expect(session.take(topic: "whereabouts/v1/\(Self.site)/events", payload: [], now: 11).isEmpty)

        let drops = session.drops
        #expect(drops.otherTags == 2)
        #expect(drops.invalid == 2)
        #expect(drops.rejectedReadings == ["bad_tag": 1])
        #expect(drops.badReadings == 3)
        #expect(drops.rejectedBatches == ["duplicate_batch": 1, "malformed_json": 1, "agent_topic_mismatch": 1])
        #expect(drops.otherTopics == 1)
        #expect(session.readings.count == 2)
        let json = session.progress(now: 12).json.object?["dropped"]?.object
        #expect(json?["bad_readings"]?.integer == 3)
    }

    @Test("the progress counts samples per area as the spatial check will, and names the areas lacking them")
    func areas() throws {
        var session = try Self.session(dwell: 20)
        let tag = try Self.tag()
        _ = session.start(tag: tag, now: 0)
        let points = [(3.0, 3.0), (21.0, 3.0), (21.0, 13.0), (3.0, 13.0), (12.0, 8.0)]
        var time = 100.0
        for (x, y) in points {
            _ = try session.standAt(floor: 1, x: x, y: y, now: time)
            for second in 1...25 {
                for reading in try Self.readings(of: tag, at: time + Double(second)) { _ = session.take(reading) }
                _ = session.tick(now: time + Double(second))
            }
            time += 40
        }
        // The point under way counts as if closed now.
        _ = try session.standAt(floor: 1, x: 12, y: 3, now: time)
        for reading in try Self.readings(of: tag, at: time + 5) { _ = session.take(reading) }
        let progress = session.progress(now: time + 6)
        #expect(progress.place?.readings == 6)

        var truth = session.truth
        truth.append(TruthRecord(time: time + 6, tag: tag, x: 12, y: 3, floor: 1))
        let calibration = try GuidedCalibration(
            document: try scenarioDocument("open-office"), readings: session.readings, truth: truth)
        let expected = calibration.surveyAreas()
        #expect(progress.samples == calibration.samples.count)
        #expect(progress.samples == 5 * 20 * 6 + 6)
        #expect(progress.minimumAreaSamples == expected.minimumSamples)
        #expect(progress.minimumAreaSamples == 30)
        #expect(progress.areas.map(\.name) == expected.areas.map(\.name))
        #expect(progress.areas.map(\.samples) == expected.areas.map(\.samples))
        #expect(progress.lacking.map(\.name) == expected.areas.filter { !$0.isChecked }.map(\.name))
        #expect(!progress.lacking.isEmpty && progress.lacking.count < progress.areas.count)
        #expect(progress.areas.reduce(0) { $0 + $1.samples } == progress.samples)
        let json = progress.json.object
        #expect(json?["lacking"]?.array?.count == progress.lacking.count)
        #expect(json?["phase"]?.string == "standing")
        #expect((json?["coverage"]?.array?.first?.object?["share"]?.double ?? 0) > 0)
    }
}
