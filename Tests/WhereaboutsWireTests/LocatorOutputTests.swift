import Testing
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsWire

@Suite("Locator outputs")
struct LocatorOutputTests {
    let tag = WireFixtures.tag
    let tagText = WireFixtures.tagText

    @Test("occupancy: golden encoding and round trip")
    func occupancy() throws {
        let occupancy = ZoneOccupancy(
            site: WireFixtures.site, floor: 1, zone: 7, name: "Kitchen", state: .known, count: 1,
            tags: [.init(id: tag, name: "Keys")], updated: 1_764_475_201)
        let golden =
            #"{"site":"e2c56db5-dffb-48d2-b060-d0f5a71096e0","floor":1,"zone":7,"name":"Kitchen","state":"known","#
            + #""count":1,"tags":[{"id":"\#(tagText)","name":"Keys"}],"updated":1764475201}"#
        #expect(occupancy.payload == golden)
        #expect(try ZoneOccupancy(payload: golden) == occupancy)
        let unknown = ZoneOccupancy(
            site: WireFixtures.site, floor: 0, zone: 0, name: "Hall \"A\"", state: .unknown, count: 0, tags: [],
            updated: 1.5)
        #expect(unknown.payload.contains(#""name":"Hall \"A\"","state":"unknown","count":0,"tags":[]"#))
        #expect(try ZoneOccupancy(payload: unknown.payload) == unknown)
    }

    @Test("position: golden encoding, nulls outside zones, and round trip")
    func position() throws {
        let position = TagPosition(
            tag: tag, name: "Keys", x: 3.25, y: 4.5, floor: 1, zone: 7, zoneName: "Kitchen", accuracy: 1.5,
            nearest: .init(agent: WireFixtures.agent, proximity: .near, distance: 2.125), updated: 1_764_475_201.5)
        let golden =
            #"{"tag":"\#(tagText)","name":"Keys","x":3.25,"y":4.5,"floor":1,"zone":7,"zone_name":"Kitchen","#
            + #""accuracy":1.5,"nearest":{"agent":"hall-1","proximity":"near","distance":2.125},"updated":1764475201.5}"#
        #expect(position.payload == golden)
        #expect(try TagPosition(payload: golden) == position)
        let outside = TagPosition(
            tag: tag, name: nil, x: -1, y: 0, floor: 2, zone: nil, zoneName: nil, accuracy: 8, nearest: nil, updated: 3)
        #expect(
            outside.payload
                == #"{"tag":"\#(tagText)","name":null,"x":-1,"y":0,"floor":2,"zone":null,"zone_name":null,"#
                + #""accuracy":8,"nearest":null,"updated":3}"#)
        #expect(try TagPosition(payload: outside.payload) == outside)
        // Written to the millimetre and the millisecond, whatever digits the estimate carries.
        let precise = TagPosition(
            tag: tag, name: nil, x: 3.141_592_653, y: -2.718_281_828, floor: 1, zone: nil, zoneName: nil,
            accuracy: 1.414_213_562, nearest: .init(agent: WireFixtures.agent, proximity: .far, distance: 7.654_321),
            updated: 1_764_475_201.123_456)
        #expect(
            precise.payload
                == #"{"tag":"\#(tagText)","name":null,"x":3.142,"y":-2.718,"floor":1,"zone":null,"zone_name":null,"#
                + #""accuracy":1.414,"nearest":{"agent":"hall-1","proximity":"far","distance":7.654},"#
                + #""updated":1764475201.123}"#)
    }

    @Test("position: the text written directly is JSONWriter's text of the tree, on random and hostile positions")
    func positionTextMatchesTree() throws {
        var random = SplitMix64(seed: 16)
        let names: [String?] = [
            nil, "", "Keys", "say \"hi\"\\ \n\r\t", "\u{0}\u{1}\u{1F}\u{7F}", "Küche 🗝️", "a\u{2028}b",
        ]
        let numbers: [Double] = [
            0, -0.0, 1, -1, 0.000_4, 0.000_5, 1e15, -1e15, 1e15 + 0.5, 1e300, -1e-300, .nan, .infinity,
            -.infinity, .pi, 1_764_475_201.123_456, 2.5e-7,
        ]
        func number() -> Double {
            random.next() % 3 == 0
                ? numbers[Int(random.next() % UInt64(numbers.count))]
                : Double(Int64(bitPattern: random.next()) % 2_000_000) / 997
        }
        var mismatches: [String] = []
        for _ in 0..<3_000 {
            let zones = (0..<Int(random.next() % 4)).map { _ in
                ZoneShare(zone: UInt16(truncatingIfNeeded: random.next()), probability: number())
            }
            let nearest =
                random.next() % 4 == 0
                ? nil
                : TagPosition.NearestAgent(
                    agent: WireFixtures.agent,
                    proximity: TagPosition.NearestAgent.Proximity.allCases[Int(random.next() % 4)], distance: number())
            let zone: UInt16? = random.next() % 3 == 0 ? nil : UInt16(truncatingIfNeeded: random.next())
            let position = TagPosition(
                tag: tag, name: names[Int(random.next() % UInt64(names.count))], x: number(), y: number(),
                floor: UInt16(truncatingIfNeeded: random.next()), zone: zone,
                zoneName: names[Int(random.next() % UInt64(names.count))], accuracy: number(), nearest: nearest,
                updated: number(), probability: random.next() % 2 == 0 ? nil : number(), zones: zones)
            let tree = JSONWriter().string(position.json)
            if position.payload != tree { mismatches.append("\(position.payload)\n  tree: \(tree)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) differ; first: \(mismatches.first ?? "")")
    }

    @Test("tag zone: golden encoding, no coordinates or time, and round trip")
    func tagZone() throws {
        let zone = TagZone(
            tag: tag, name: "Keys", state: .known, floor: 1, floorName: "Ground floor", zone: 7, zoneName: "Kitchen")
        let golden =
            #"{"tag":"\#(tagText)","name":"Keys","state":"known","floor":1,"floor_name":"Ground floor","zone":7,"#
            + #""zone_name":"Kitchen"}"#
        #expect(zone.payload == golden)
        #expect(try TagZone(payload: golden) == zone)
        let lost = TagZone(tag: tag, name: nil, state: .lost, floor: nil, floorName: nil, zone: nil, zoneName: nil)
        #expect(try TagZone(payload: lost.payload) == lost)
        #expect(throws: PayloadError.self) { try TagZone(payload: #"{"tag":"\#(tagText)","state":"away"}"#) }
    }

    @Test("agent activity: golden encoding, null before the first batch, and round trip")
    func agentActivity() throws {
        let agent = WireFixtures.agent
        let activity = AgentActivity(
            agent: agent, time: 1_764_475_260, lastBatch: 1_764_475_259.5, readingsPerSecond: 12.4)
        let golden = #"{"agent":"hall-1","t":1764475260,"last_batch":1764475259.5,"readings_per_s":12.4}"#
        #expect(activity.payload == golden)
        #expect(try AgentActivity(payload: golden) == activity)
        let silent = AgentActivity(agent: agent, time: 1_764_475_260, lastBatch: nil, readingsPerSecond: 0)
        #expect(silent.payload == #"{"agent":"hall-1","t":1764475260,"last_batch":null,"readings_per_s":0}"#)
        #expect(try AgentActivity(payload: silent.payload) == silent)
        #expect(throws: PayloadError.self) { try AgentActivity(payload: #"{"agent":"a/b","t":1,"readings_per_s":0}"#) }
    }

    @Test("tag zone: where in the zone the tag was, when known, after the names; old payloads still decode")
    func tagZonePosition() throws {
        let zone = TagZone(
            tag: tag, name: "Keys", state: .known, floor: 1, floorName: nil, zone: 7, zoneName: "Kitchen", x: 4.2,
            y: 7.9, accuracy: 1.5, probability: 0.87)
        let golden =
            #"{"tag":"\#(tagText)","name":"Keys","state":"known","floor":1,"floor_name":null,"zone":7,"#
            + #""zone_name":"Kitchen","x":4.2,"y":7.9,"accuracy":1.5,"p":0.87}"#
        #expect(zone.payload == golden)
        #expect(try TagZone(payload: golden) == zone)
        let old = try TagZone(payload: #"{"tag":"\#(tagText)","state":"known","zone":7}"#)
        #expect(old.x == nil && old.y == nil && old.accuracy == nil && old.probability == nil)
    }

    @Test(
        "tag location: home while heard (in a zone or not), not_home when lost, None when it cannot be known",
        arguments: [
            (TagZone.State.known, UInt16?(7), String?("Kitchen"), "home"), (.known, nil, nil, "home"),
            (.known, 7, "", "home"), (.lost, nil, nil, "not_home"), (.unknown, 7, "Kitchen", "None"),
            (.unknown, nil, nil, "None"),
        ])
    func tagLocation(state: TagZone.State, zone: UInt16?, zoneName: String?, location: String) {
        let summary = TagZone(
            tag: tag, name: "Keys", state: state, floor: 1, floorName: nil, zone: zone, zoneName: zoneName)
        #expect(summary.location == location)
    }

    @Test("event: golden published form, recording subset, and both decode")
    func event() throws {
        let event = ZoneEvent(
            time: 1_764_475_202, tag: tag, name: "Keys", floor: 1, zone: 7, zoneName: "Kitchen", kind: .enter)
        let published =
            #"{"t":1764475202,"tag":"\#(tagText)","name":"Keys","floor":1,"zone":7,"zone_name":"Kitchen","event":"enter"}"#
        let recorded = #"{"t":1764475202,"tag":"\#(tagText)","floor":1,"zone":7,"event":"enter"}"#
        #expect(event.payload == published)
        #expect(JSONWriter().string(event.recordingJSON) == recorded)
        #expect(try ZoneEvent(payload: published) == event)
        let bare = try ZoneEvent(payload: recorded)
        #expect(bare == ZoneEvent(time: 1_764_475_202, tag: tag, floor: 1, zone: 7, kind: .enter))
    }

    @Test("metrics: golden encoding with reasons sorted by name, unknown reasons ignored on decode")
    func metrics() throws {
        let metrics = LocatorMetrics(
            time: 1_764_475_210, readingsAccepted: 1200, readingsRejected: [.timeTooOld: 5, .badTag: 2],
            tagsTracked: 12, agentsOnline: 4, batchesMissing: 3, latencyP50: 35, latencyP99: 180.5, inputLagP50: 240,
            inputLagP99: 610.25)
        let golden =
            #"{"t":1764475210,"readings_accepted":1200,"readings_rejected":{"bad_tag":2,"time_too_old":5},"#
            + #""tags_tracked":12,"agents_online":4,"batches_missing":3,"latency_ms":{"p50":35,"p99":180.5},"#
            + #""input_lag_ms":{"p50":240,"p99":610.25}}"#
        #expect(metrics.payload == golden)
        #expect(try LocatorMetrics(payload: golden) == metrics)
        let newer =
            #"{"t":1764475210,"readings_accepted":1200,"readings_rejected":{"bad_tag":2,"from_the_future":9,"#
            + #""time_too_old":5},"tags_tracked":12,"agents_online":4,"batches_missing":3,"#
            + #""latency_ms":{"p50":35,"p99":180.5},"input_lag_ms":{"p50":240,"p99":610.25}}"#
        #expect(try LocatorMetrics(payload: newer) == metrics)
        // A payload from before batches_missing existed reads as none missing.
        let older =
            #"{"t":1764475210,"readings_accepted":1200,"readings_rejected":{"bad_tag":2,"time_too_old":5},"#
            + #""tags_tracked":12,"agents_online":4,"latency_ms":{"p50":35,"p99":180.5}}"#
        #expect(try LocatorMetrics(payload: older).batchesMissing == 0)
        // … and one from before input_lag_ms, as no lag measured.
        #expect(try LocatorMetrics(payload: older).inputLagP50 == nil)
        #expect(try LocatorMetrics(payload: older).inputLagP99 == nil)
        let empty = LocatorMetrics(
            time: 0, readingsAccepted: 0, readingsRejected: [:], tagsTracked: 0, agentsOnline: 0, latencyP50: nil,
            latencyP99: nil)
        #expect(
            empty.payload.hasSuffix(
                #""readings_rejected":{},"tags_tracked":0,"agents_online":0,"batches_missing":0,"#
                    + #""latency_ms":{"p50":null,"p99":null},"input_lag_ms":{"p50":null,"p99":null}}"#))
        #expect(try LocatorMetrics(payload: empty.payload) == empty)
    }

    @Test("availability payloads are exactly online, degraded and offline; degraded counts as available")
    func availability() {
        #expect(Availability.online.payload == "online")
        #expect(Availability.offline.payload == "offline")
        #expect(Availability.degraded.payload == "degraded")
        #expect(Availability(payload: Array("online".utf8)) == .online)
        #expect(Availability(payload: Array("offline".utf8)) == .offline)
        #expect(Availability(payload: Array("degraded".utf8)) == .degraded)
        #expect(Availability.allCases.filter(\.isAvailable) == [.online, .degraded])
        for bad in ["", "Online", "online\n", " offline", "offline2", "1", "true", "degraded\n", "Degraded"] {
            #expect(Availability(payload: Array(bad.utf8)) == nil)
        }
        #expect(Availability(payload: [0xFF, 0xFE]) == nil)
    }

    @Test(
        "output decoders report the first bad member",
        arguments: [
            ("[1]", PayloadError.notAnObject),
            (#"{"tag":"x","t":1,"floor":1,"zone":1,"event":"enter"}"#, .invalidValue(field: "tag")),
            (#"{"tag":"mac-001122334455","t":1,"floor":1,"zone":1,"event":"left"}"#, .invalidValue(field: "event")),
            (#"{"tag":"mac-001122334455","t":"1","floor":1,"zone":1,"event":"exit"}"#, .wrongType(field: "t")),
            (#"{"tag":"mac-001122334455","t":1,"floor":70000,"zone":1,"event":"exit"}"#, .invalidValue(field: "floor")),
            (#"{"tag":"mac-001122334455","t":1,"zone":1,"event":"exit"}"#, .missingField("floor")),
        ])
    func outputErrors(_ text: String, expected: PayloadError) {
        #expect(throws: expected) { try ZoneEvent(payload: text) }
    }

    @Test("malformed output text is reported as malformed JSON")
    func malformedOutput() {
        #expect {
            try TagPosition(payload: "{nope")
        } throws: { error in
            if case .malformedJSON = error as? PayloadError { true } else { false }
        }
    }
}
