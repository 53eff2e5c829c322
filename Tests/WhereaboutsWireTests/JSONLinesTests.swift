import Testing
import WhereaboutsCore
import WhereaboutsWire

@Suite("Recordings (JSON Lines)")
struct JSONLinesTests {
    let tag = WireFixtures.tag
    let tagText = WireFixtures.tagText

    @Test("reading lines: golden text and round trip")
    func readings() {
        let records = [
            RecordedReading(time: 1.5, agent: WireFixtures.agent, tag: tag, rssi: -70),
            RecordedReading(
                time: 2, agent: WireFixtures.agent, tag: tag, rssi: -71.25, power: -59, count: 4, variance: 2.5),
        ]
        let text = JSONLines.encode(records)
        #expect(
            text
                == #"{"t":1.5,"agent":"hall-1","tag":"\#(tagText)","rssi":-70}"# + "\n"
                + #"{"t":2,"agent":"hall-1","tag":"\#(tagText)","rssi":-71.25,"power":-59,"n":4,"var":2.5}"# + "\n")
        let decoded = JSONLines.decode(text, as: RecordedReading.self)
        #expect(decoded.records == records)
        #expect(decoded.errors.isEmpty)
    }

    @Test("truth, position and event lines: golden text and round trip")
    func otherRecords() {
        let truth = TruthRecord(time: 3, tag: tag, x: 1.25, y: -2, floor: 1)
        #expect(JSONLines.line(truth) == #"{"t":3,"tag":"\#(tagText)","x":1.25,"y":-2,"floor":1}"# + "\n")
        #expect(JSONLines.decode(JSONLines.line(truth), as: TruthRecord.self).records == [truth])

        let positions = [
            PositionRecord(time: 4, tag: tag, x: 1, y: 2, floor: 1, zone: 7, accuracy: 0.5),
            PositionRecord(time: 5, tag: tag, x: 1, y: 2, floor: 1, zone: nil, accuracy: 3),
        ]
        let positionText = JSONLines.encode(positions)
        #expect(positionText.hasPrefix(#"{"t":4,"tag":"\#(tagText)","x":1,"y":2,"floor":1,"zone":7,"accuracy":0.5}"#))
        #expect(positionText.contains(#""zone":null"#))
        #expect(JSONLines.decode(positionText, as: PositionRecord.self).records == positions)

        let event = ZoneEvent(time: 6, tag: tag, name: "Keys", floor: 1, zone: 7, zoneName: "Kitchen", kind: .exit)
        #expect(JSONLines.line(event) == #"{"t":6,"tag":"\#(tagText)","floor":1,"zone":7,"event":"exit"}"# + "\n")
        #expect(
            JSONLines.decode(JSONLines.line(event), as: ZoneEvent.self).records
                == [ZoneEvent(time: 6, tag: tag, floor: 1, zone: 7, kind: .exit)])
    }

    @Test("bad lines are reported by number and reason; good lines, blank lines and CRLF still read")
    func lineErrors() throws {
        let good = #"{"t":1,"agent":"hall-1","tag":"\#(tagText)","rssi":-70}"#
        let lines = [
            good,  // 1
            "",  // 2: blank
            good + "\r",  // 3: CRLF
            "{not json",  // 4
            #"{"t":1,"agent":"hall/1","tag":"\#(tagText)","rssi":-70}"#,  // 5
            #"{"t":1,"agent":"hall-1","tag":"\#(tagText)"}"#,  // 6
            #"{"t":"1","agent":"hall-1","tag":"\#(tagText)","rssi":-70}"#,  // 7
            "[1,2]",  // 8
            #"{"t":1,"agent":"hall-1","tag":"\#(tagText)","rssi":-70,"n":0}"#,  // 9
            "   ",  // 10: blank
            good,  // 11
        ]
        let decoded = JSONLines.decode(lines.joined(separator: "\n") + "\n", as: RecordedReading.self)
        #expect(decoded.records.count == 3)
        #expect(decoded.errors.map(\.line) == [4, 5, 6, 7, 8, 9])
        let reasons = decoded.errors.map(\.error)
        if case .malformedJSON = try #require(reasons.first) {} else { Issue.record("line 4: \(reasons[0])") }
        #expect(
            Array(reasons.dropFirst())
                == [
                    .invalidValue(field: "agent"), .missingField("rssi"), .wrongType(field: "t"), .notAnObject,
                    .invalidValue(field: "n"),
                ])
        #expect(decoded.errors[1].description == #"line 5: field "agent" has an invalid value"#)
    }

    @Test("an empty recording has no records and no errors")
    func emptyRecording() {
        let decoded = JSONLines.decode("", as: TruthRecord.self)
        #expect(decoded.records.isEmpty && decoded.errors.isEmpty)
    }
}
