import Testing
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsWire

@Suite("GATT job payloads")
struct GATTJobPayloadTests {
    let prefix = "whereabouts/v1/\(WireFixtures.siteText)"

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func refusal(_ text: String) -> GATTJobRefusal? {
        if case .failure(let refusal) = GATTJobRequest.decode(bytes(text)) { return refusal }
        return nil
    }

    static var provisioning: BeaconProvisioning {
        BeaconProvisioning(uuid: WireFixtures.site, major: 1, minor: 8, power: -59)
    }

    @Test("builds the request and result topics of one agent under the site prefix")
    func buildsTopics() {
        let topics = WireFixtures.topics
        #expect(topics.gattRequests(agent: WireFixtures.agent).name == "\(prefix)/agents/hall-1/gatt/requests")
        #expect(topics.gattResults(agent: WireFixtures.agent).name == "\(prefix)/agents/hall-1/gatt/results")
        #expect(topics.allGATTResults.filter == "\(prefix)/agents/+/gatt/results")
        // A received request topic is none the locator handles; a result's is (it carries battery levels), under a
        // valid agent id only.
        #expect(topics.parse("\(prefix)/agents/hall-1/gatt/requests") == nil)
        #expect(topics.parse("\(prefix)/agents/hall-1/gatt/results") == .gattResult(WireFixtures.agent))
        #expect(topics.parse("\(prefix)/agents/hall+1/gatt/results") == nil)
        #expect(topics.parse("\(prefix)/agents/hall-1/gatt/results/x") == nil)
    }

    @Test("reads a battery request by tag identity with the default deadline and random address type")
    func readsBatteryRequest() throws {
        let text = #"{"id":"job-1","tag":"\#(WireFixtures.tagText)","operation":"battery"}"#
        let request = try GATTJobRequest.decode(Self.bytes(text)).get()
        #expect(request.id.rawValue == "job-1")
        #expect(request.tag == WireFixtures.tag)
        #expect(request.address == nil)
        #expect(request.operation == .battery)
        #expect(request.deadline == GATTJobRequest.defaultDeadline)
    }

    @Test("reads an address-only info request with a public address")
    func readsAddressRequest() throws {
        let text = #"{"id":"j","address":"mac-C01122334455","addressType":"public","operation":"info","deadline":5}"#
        let request = try GATTJobRequest.decode(Self.bytes(text)).get()
        #expect(request.address == GATTJobAddress(address: 0xC011_2233_4455, isRandom: false))
        #expect(request.tag == nil)
        #expect(request.operation == .info)
        #expect(request.deadline == 5)
    }

    @Test("writes every request and reads it back unchanged")
    func requestRoundTrip() throws {
        let requests = [
            GATTJobRequest(id: try #require(GATTJobID("a")), tag: WireFixtures.tag, address: nil, operation: .battery),
            GATTJobRequest(
                id: try #require(GATTJobID("b_2")), tag: nil,
                address: GATTJobAddress(address: 0x0102_0304_0506, isRandom: true), operation: .info, deadline: 1),
            GATTJobRequest(
                id: try #require(GATTJobID("c-3")), tag: WireFixtures.tag,
                address: GATTJobAddress(address: 0xFFFF_FFFF_FFFF, isRandom: false),
                operation: .provision(Self.provisioning), deadline: 120),
        ]
        for request in requests {
            #expect(try GATTJobRequest.decode(Self.bytes(request.payload)).get() == request)
        }
    }

    @Test(
        "refuses a malformed request with the job id when it could be read",
        arguments: [
            (#"{"id":"j","tag":"x","operation":"battery"}"#, "tag"),
            (#"{"id":"j","operation":"battery"}"#, "tag"),
            (#"{"id":"j","tag":"mac-c01122334455","operation":"reboot"}"#, "operation"),
            (#"{"id":"j","tag":"mac-c01122334455","operation":"battery","deadline":0}"#, "deadline"),
            (#"{"id":"j","tag":"mac-c01122334455","operation":"battery","deadline":121}"#, "deadline"),
            (#"{"id":"j","tag":"mac-c01122334455","operation":"battery","extra":1}"#, "extra"),
            (#"{"id":"j","tag":"mac-c01122334455","operation":"battery","provision":{}}"#, "provision"),
            (#"{"id":"j","tag":"mac-c01122334455","operation":"provision"}"#, "provision"),
            (#"{"id":"j","address":"\#(WireFixtures.tagText)","operation":"info"}"#, "address"),
            (#"{"id":"j","address":"mac-c01122334455","addressType":"static","operation":"info"}"#, "addressType"),
            (#"{"id":"j","tag":"mac-c01122334455","addressType":"public","operation":"info"}"#, "addressType"),
            (
                #"{"id":"j","tag":"mac-c01122334455","operation":"provision","provision":{"uuid":"\#(WireFixtures.siteText)","major":1,"minor":2,"power":21}}"#,
                "power"
            ),
            (
                #"{"id":"j","tag":"mac-c01122334455","operation":"provision","provision":{"uuid":"nope","major":1,"minor":2,"power":-59}}"#,
                "uuid"
            ),
            (
                #"{"id":"j","tag":"mac-c01122334455","operation":"provision","provision":{"uuid":"\#(WireFixtures.siteText)","major":65536,"minor":2,"power":-59}}"#,
                "major"
            ),
        ])
    func refusesWithID(text: String, field: String) throws {
        let refusal = try #require(Self.refusal(text))
        #expect(refusal.id?.rawValue == "j")
        #expect(refusal.reason.contains("\"\(field)\""), "\(refusal.reason)")
    }

    @Test(
        "refuses a request without a readable id with a null id",
        arguments: [
            "", "[]", "{", "null", #"{"tag":"mac-c01122334455","operation":"battery"}"#,
            #"{"id":"a/b","tag":"mac-c01122334455","operation":"battery"}"#,
            #"{"id":"+","tag":"mac-c01122334455","operation":"battery"}"#,
            #"{"id":7,"tag":"mac-c01122334455","operation":"battery"}"#,
            #"{"id":"j","id":"k","tag":"mac-c01122334455","operation":"battery"}"#,
        ])
    func refusesWithoutID(text: String) throws {
        let refusal = try #require(Self.refusal(text))
        #expect(refusal.id == nil)
        let result = GATTJobResult(refusal)
        #expect(result.payload.hasPrefix(#"{"id":null,"status":"refused","reason":""#))
    }

    @Test("refuses over-long and non-UTF-8 requests before parsing them")
    func refusesBadBytes() throws {
        let long =
            #"{"id":"j","tag":"mac-c01122334455","operation":"battery","pad":""#
            + String(repeating: "x", count: 2100) + #""}"#
        #expect(try #require(Self.refusal(long)).reason.contains("2048"))
        #expect(try #require(GATTJobRequest.decode([0x7B, 0xFF, 0x7D]).failure).reason.contains("UTF-8"))
    }

    @Test("never crashes on random bytes or on mutations of a valid request (seeded)")
    func survivesRandomInput() throws {
        var generator = SplitMix64(seed: 47)
        let valid = Self.bytes(
            GATTJobRequest(
                id: try #require(GATTJobID("j")), tag: WireFixtures.tag, address: nil,
                operation: .provision(Self.provisioning)
            ).payload)
        var accepted = 0
        for round in 0..<2000 {
            var bytes = valid
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            } else {
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
            }
            switch GATTJobRequest.decode(bytes) {
            case .success(let request):
                accepted += 1
                // Whatever is accepted writes back to something that reads the same.
                #expect(try GATTJobRequest.decode(Self.bytes(request.payload)).get() == request)
            case .failure(let refusal):
                // Every refusal makes a result that reads back, its reason clipped.
                let read = try GATTJobResult(payload: GATTJobResult(refusal).payload)
                #expect(read.id == refusal.id)
            }
        }
        #expect(accepted < 2000)
    }

    @Test("writes every result status and reads it back unchanged")
    func resultRoundTrip() throws {
        let id = try #require(GATTJobID("job-7"))
        let results = [
            GATTJobResult(id: id, status: .ok, values: GATTJobValues(battery: 87)),
            GATTJobResult(
                id: id, status: .ok,
                values: GATTJobValues(manufacturer: "Whereabouts", model: "Tag 1", firmware: "1.0.2")),
            GATTJobResult(id: id, status: .ok, values: GATTJobValues(provisioned: Self.provisioning)),
            GATTJobResult(id: id, status: .notConnectable(code: 0x3E)),
            GATTJobResult(id: id, status: .notConnectable(code: nil)),
            GATTJobResult(id: id, status: .timeout),
            GATTJobResult(
                id: id, status: .attError(code: 0x0D, handle: 42, uuid: "57484552-4541-424f-5554-530000000002")),
            GATTJobResult(id: id, status: .attError(code: 0x03, handle: 3, uuid: nil)),
            GATTJobResult(id: id, status: .linkLost),
            GATTJobResult(id: id, status: .busy),
            GATTJobResult(id: nil, status: .refused(reason: "no GATT central on this agent")),
            GATTJobResult(id: id, tag: .address(0xC011_2233_4455), status: .ok, values: GATTJobValues(battery: 9)),
        ]
        for result in results {
            #expect(try GATTJobResult(payload: result.payload) == result)
        }
        #expect(
            results[6].payload
                == #"{"id":"job-7","status":"attError","code":13,"handle":42,"uuid":"57484552-4541-424f-5554-530000000002"}"#
        )
        #expect(results[0].payload == #"{"id":"job-7","status":"ok","values":{"battery":87}}"#)
        #expect(
            results[11].payload == #"{"id":"job-7","tag":"mac-c01122334455","status":"ok","values":{"battery":9}}"#)
    }

    @Test(
        "refuses results with members that do not belong to their status",
        arguments: [
            #"{"id":"j","status":"ok","code":1}"#, #"{"id":"j","status":"timeout","reason":"x"}"#,
            #"{"id":"j","status":"attError","code":13}"#,
            #"{"id":"j","status":"attError","code":13,"handle":1,"uuid":"2a19/"}"#,
            #"{"id":"j","status":"done"}"#, #"{"id":"j","status":"ok","values":{"battery":101}}"#,
            #"{"id":"j","status":"ok","values":{"colour":"red"}}"#, #"{"id":"j","status":"refused"}"#,
            #"{"id":"j","tag":"kitchen/#","status":"ok","values":{"battery":9}}"#,
        ])
    func refusesBadResults(text: String) {
        #expect(throws: PayloadError.self) { try GATTJobResult(payload: text) }
    }

    @Test("clips a long refusal reason at a character boundary")
    func clipsReason() throws {
        let result = GATTJobResult(id: nil, status: .refused(reason: String(repeating: "é", count: 400)))
        let read = try GATTJobResult(payload: result.payload)
        guard case .refused(let reason) = read.status else {
            Issue.record("not refused")
            return
        }
        #expect(reason.utf8.count == GATTJobResult.maximumReasonBytes)
    }

    @Test("a long Device Information value is cut at a character boundary, and the result still decodes")
    func clipsText() throws {
        // 129 bytes of two-byte characters: cutting the bytes at 128 would leave half a character, which decodes
        // to U+FFFD and makes the text 130 bytes, more than a result may carry.
        let bytes = Array(String(repeating: "é", count: 64).utf8) + [0x41]
        let text = GATTJobValues.text(Array(String(repeating: "é", count: 70).utf8))
        #expect(text == String(repeating: "é", count: 64))
        #expect(GATTJobValues.text(bytes) == String(repeating: "é", count: 64))
        let result = GATTJobResult(
            id: GATTJobID("j"), status: .ok, values: GATTJobValues(manufacturer: text, model: "M"))
        #expect(try GATTJobResult(payload: result.payload) == result)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
