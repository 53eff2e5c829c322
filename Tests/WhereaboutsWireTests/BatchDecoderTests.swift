import Testing
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsWire

/// What a bad payload must produce.
enum Expectation: Sendable, Equatable {
    /// The whole batch is rejected.
    case batch(RejectionReason)
    /// The batch decodes and its single reading is rejected.
    case reading(RejectionReason)

    var reason: RejectionReason {
        switch self {
        case .batch(let reason), .reading(let reason): reason
        }
    }
}

/// One named hostile payload.
struct BadPayload: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let expected: Expectation

    init(_ name: String, _ text: String, _ expected: Expectation) {
        self.init(name, Array(text.utf8), expected)
    }

    init(_ name: String, _ bytes: [UInt8], _ expected: Expectation) {
        self.name = name
        self.bytes = bytes
        self.expected = expected
    }

    var testDescription: String { name }
}

/// Builds batch texts from a valid template, with one member replaced or removed.
enum BatchText {
    static let tag = #""ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-7""#

    /// A batch; pass nil to leave a member out.
    static func batch(
        v: String? = "1", agent: String? = #""hall-1""#, epoch: String? = "1764475200123", seq: String? = "42",
        sent: String? = "1764475201", readings: String? = "[\(reading())]"
    ) -> String {
        let members = [
            ("v", v), ("agent", agent), ("epoch", epoch), ("seq", seq), ("sent", sent), ("readings", readings),
        ]
        return "{" + members.compactMap { key, value in value.map { "\"\(key)\":\($0)" } }.joined(separator: ",") + "}"
    }

    /// A reading; pass nil to leave a member out; `extra` is appended inside the object.
    static func reading(tag: String? = tag, t: String? = "1764475200.5", rssi: String? = "-67.5", extra: String = "")
        -> String
    {
        let members = [("tag", tag), ("t", t), ("rssi", rssi)]
        let body = members.compactMap { key, value in value.map { "\"\(key)\":\($0)" } }.joined(separator: ",")
        return "{" + body + extra + "}"
    }

    static func batch(reading: String) -> String { batch(readings: "[\(reading)]") }
}

/// The named corpus of hostile payloads (reliability plan S3), each with the one outcome it must produce.
enum BadPayloads {
    static let all: [BadPayload] = {
        var corpus: [BadPayload] = [
            // Size, syntax and shape.
            BadPayload("1 MiB payload", [UInt8](repeating: 0x20, count: 1 << 20), .batch(.payloadTooLarge)),
            BadPayload("one byte over the limit", [UInt8](repeating: 0x20, count: 262_145), .batch(.payloadTooLarge)),
            BadPayload(
                "10,000-deep nesting", String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000),
                .batch(.tooDeep)),
            BadPayload(
                "deep nesting inside a reading",
                BatchText.batch(reading: BatchText.reading(extra: #","x":[[[[[[[[1]]]]]]]]"#)),
                .batch(.tooDeep)),
            BadPayload("empty payload", "", .batch(.malformedJSON)),
            BadPayload("whitespace only", "  \n ", .batch(.malformedJSON)),
            BadPayload("NaN literal", BatchText.batch(reading: BatchText.reading(rssi: "NaN")), .batch(.malformedJSON)),
            BadPayload(
                "Infinity literal", BatchText.batch(reading: BatchText.reading(rssi: "-Infinity")),
                .batch(.malformedJSON)),
            BadPayload("number beyond Double in the batch", BatchText.batch(seq: "1e400"), .batch(.nonFinite)),
            BadPayload(
                "number beyond Double in a reading costs that reading only",
                BatchText.batch(reading: BatchText.reading(rssi: "-1e999")), .reading(.nonFinite)),
            BadPayload("truncated", String(BatchText.batch().dropLast(3)), .batch(.malformedJSON)),
            BadPayload("trailing garbage", BatchText.batch() + "x", .batch(.malformedJSON)),
            BadPayload("two documents", BatchText.batch() + BatchText.batch(), .batch(.malformedJSON)),
            BadPayload("duplicate key", #"{"v":1,"v":1}"#, .batch(.malformedJSON)),
            BadPayload("trailing comma", #"{"v":1,}"#, .batch(.malformedJSON)),
            BadPayload("single quotes", "{'v':1}", .batch(.malformedJSON)),
            BadPayload("byte order mark", [0xEF, 0xBB, 0xBF] + Array(BatchText.batch().utf8), .batch(.malformedJSON)),
            BadPayload(
                "non-UTF-8 byte in a string",
                Array(#"{"v":1,"agent":"hall-"#.utf8) + [0xFF] + Array(#""}"#.utf8), .batch(.malformedJSON)),
            BadPayload(
                "overlong UTF-8 slash in a string",
                Array(#"{"v":1,"agent":"hall"#.utf8) + [0xC0, 0xAF] + Array(#"1"}"#.utf8), .batch(.malformedJSON)),
            BadPayload(
                "NUL byte outside strings", Array(#"{"v":1"#.utf8) + [0] + Array("}".utf8), .batch(.malformedJSON)),
            BadPayload("raw control character in a string", "{\"agent\":\"a\u{1}\"}", .batch(.malformedJSON)),
            BadPayload("top-level array", "[\(BatchText.batch())]", .batch(.wrongType)),
            BadPayload("top-level string", #""hello""#, .batch(.wrongType)),
            BadPayload("top-level number", "42", .batch(.wrongType)),
            BadPayload("top-level null", "null", .batch(.wrongType)),

            // Batch members.
            BadPayload("missing v", BatchText.batch(v: nil), .batch(.missingField)),
            BadPayload("v as a string", BatchText.batch(v: #""1""#), .batch(.wrongType)),
            BadPayload("v 2", BatchText.batch(v: "2"), .batch(.unknownVersion)),
            BadPayload("v 1.5", BatchText.batch(v: "1.5"), .batch(.unknownVersion)),
            BadPayload("missing agent", BatchText.batch(agent: nil), .batch(.missingField)),
            BadPayload("null agent", BatchText.batch(agent: "null"), .batch(.missingField)),
            BadPayload("agent as a number", BatchText.batch(agent: "7"), .batch(.wrongType)),
            BadPayload("agent with a slash", BatchText.batch(agent: #""hall-1/x""#), .batch(.badAgent)),
            BadPayload("agent with a wildcard", BatchText.batch(agent: ##""#""##), .batch(.badAgent)),
            BadPayload("agent with an escaped NUL", BatchText.batch(agent: #""hall-1\u0000""#), .batch(.badAgent)),
            BadPayload("empty agent", BatchText.batch(agent: #""""#), .batch(.badAgent)),
            BadPayload(
                "agent differs from the topic's", BatchText.batch(agent: #""hall-2""#), .batch(.agentTopicMismatch)),
            BadPayload("missing epoch", BatchText.batch(epoch: nil), .batch(.missingField)),
            BadPayload("epoch as a string", BatchText.batch(epoch: #""1764475200123""#), .batch(.wrongType)),
            BadPayload("negative seq", BatchText.batch(seq: "-1"), .batch(.badSequence)),
            BadPayload("fractional seq", BatchText.batch(seq: "1.5"), .batch(.badSequence)),
            BadPayload("huge seq", BatchText.batch(seq: "1e300"), .batch(.badSequence)),
            BadPayload("seq beyond 2^53", BatchText.batch(seq: "18014398509481984"), .batch(.badSequence)),
            BadPayload("seq as an object", BatchText.batch(seq: "{}"), .batch(.wrongType)),
            BadPayload("missing seq", BatchText.batch(seq: nil), .batch(.missingField)),
            BadPayload("negative sent", BatchText.batch(sent: "-1"), .batch(.badSentTime)),
            BadPayload("sent an hour ahead", BatchText.batch(sent: "1764478801"), .batch(.badSentTime)),
            BadPayload("epoch an hour ahead", BatchText.batch(epoch: "1764478801000"), .batch(.epochInFuture)),
            BadPayload("epoch at 2^53", BatchText.batch(epoch: "9007199254740992"), .batch(.epochInFuture)),
            BadPayload("sent as a Boolean", BatchText.batch(sent: "true"), .batch(.wrongType)),
            BadPayload("missing readings", BatchText.batch(readings: nil), .batch(.missingField)),
            BadPayload("readings as an object", BatchText.batch(readings: "{}"), .batch(.wrongType)),
            BadPayload(
                "10,001 readings",
                BatchText.batch(readings: "[" + Array(repeating: "0", count: 10_001).joined(separator: ",") + "]"),
                .batch(.tooManyReadings)),

            // Readings.
            BadPayload("reading as a number", BatchText.batch(reading: "5"), .reading(.wrongType)),
            BadPayload("reading as an array", BatchText.batch(reading: "[]"), .reading(.wrongType)),
            BadPayload("missing tag", BatchText.batch(reading: BatchText.reading(tag: nil)), .reading(.missingField)),
            BadPayload("tag as a number", BatchText.batch(reading: BatchText.reading(tag: "1")), .reading(.wrongType)),
            BadPayload(
                "garbage tag", BatchText.batch(reading: BatchText.reading(tag: #""../../x""#)), .reading(.badTag)),
            BadPayload(
                "multi-byte tag",
                BatchText.batch(reading: BatchText.reading(tag: "\"ibeacon-\(String(repeating: "é", count: 19))\"")),
                .reading(.badTag)),
            BadPayload(
                "tag minor 65536",
                BatchText.batch(
                    reading: BatchText.reading(tag: #""ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-65536""#)),
                .reading(.badTag)),
            BadPayload("missing rssi", BatchText.batch(reading: BatchText.reading(rssi: nil)), .reading(.missingField)),
            BadPayload(
                "rssi as a string", BatchText.batch(reading: BatchText.reading(rssi: #""-60""#)), .reading(.wrongType)),
            BadPayload("rssi +50", BatchText.batch(reading: BatchText.reading(rssi: "50")), .reading(.rssiOutOfRange)),
            BadPayload("rssi 127", BatchText.batch(reading: BatchText.reading(rssi: "127")), .reading(.rssiOutOfRange)),
            BadPayload(
                "rssi -128", BatchText.batch(reading: BatchText.reading(rssi: "-128")), .reading(.rssiOutOfRange)),
            BadPayload(
                "rssi 1e308", BatchText.batch(reading: BatchText.reading(rssi: "1e308")), .reading(.rssiOutOfRange)),
            BadPayload("missing t", BatchText.batch(reading: BatchText.reading(t: nil)), .reading(.missingField)),
            BadPayload(
                "t in the future", BatchText.batch(reading: BatchText.reading(t: "1764475207")), .reading(.timeInFuture)
            ),
            BadPayload("t 1e300", BatchText.batch(reading: BatchText.reading(t: "1e300")), .reading(.timeInFuture)),
            BadPayload(
                "t too old", BatchText.batch(reading: BatchText.reading(t: "1764475140")), .reading(.timeTooOld)),
            BadPayload("t negative", BatchText.batch(reading: BatchText.reading(t: "-5")), .reading(.timeTooOld)),
            BadPayload("n 0", BatchText.batch(reading: BatchText.reading(extra: #","n":0"#)), .reading(.badCount)),
            BadPayload(
                "n fractional", BatchText.batch(reading: BatchText.reading(extra: #","n":2.5"#)), .reading(.badCount)),
            BadPayload(
                "n huge", BatchText.batch(reading: BatchText.reading(extra: #","n":1e18"#)), .reading(.badCount)),
            BadPayload(
                "n as a string", BatchText.batch(reading: BatchText.reading(extra: #","n":"9""#)), .reading(.wrongType)),
            BadPayload(
                "negative var", BatchText.batch(reading: BatchText.reading(extra: #","var":-0.5"#)),
                .reading(.badVariance)),
            BadPayload(
                "impossible var", BatchText.batch(reading: BatchText.reading(extra: #","var":6000"#)),
                .reading(.badVariance)),
            BadPayload(
                "power +50", BatchText.batch(reading: BatchText.reading(extra: #","power":50"#)), .reading(.badPower)),
            BadPayload(
                "power fractional", BatchText.batch(reading: BatchText.reading(extra: #","power":-59.5"#)),
                .reading(.badPower)),
            BadPayload(
                "battery negative", BatchText.batch(reading: BatchText.reading(extra: #","battery_mv":-1"#)),
                .reading(.badTelemetry)),
            BadPayload(
                "temperature 1000", BatchText.batch(reading: BatchText.reading(extra: #","temp_c":1000"#)),
                .reading(.badTelemetry)),
            BadPayload(
                "temperature as a string", BatchText.batch(reading: BatchText.reading(extra: #","temp_c":"warm""#)),
                .reading(.wrongType)),
        ]
        corpus.append(
            BadPayload(
                "unknown agent", BatchText.batch(agent: #""stranger""#), .batch(.unknownAgent)))
        return corpus
    }()
}

@Suite("Batch decoder")
struct BatchDecoderTests {
    @Test("every named bad payload gets exactly its expected rejection", arguments: BadPayloads.all)
    func rejectsBadPayload(_ payload: BadPayload) throws {
        // "unknown agent" is received on the stranger's own topic, so that only the map check can refuse it.
        let topicAgent = payload.name == "unknown agent" ? WireFixtures.agentID("stranger") : WireFixtures.agent
        let result = BatchDecoder().decode(
            payload.bytes, topicAgent: topicAgent, knownAgents: [WireFixtures.agent], now: WireFixtures.now)
        switch payload.expected {
        case .batch(let reason):
            #expect(result == .rejected(reason))
        case .reading(let reason):
            let batch = try #require(result.batch, "batch rejected: \(String(describing: result.rejection))")
            #expect(batch.outcomes == [.rejected(reason)])
        }
    }

    @Test("the corpus has at least 20 kinds and, with the named cases below, reaches every rejection reason")
    func corpusCoversEveryReason() {
        #expect(BadPayloads.all.count >= 20)
        // untracked_tag and too_old_to_track are the engine's verdicts after decoding, and bad_gatt_result is of
        // another message (a GATT job's result); the locator's tests reach them.
        let reached = Set(BadPayloads.all.map(\.expected.reason)).union([
            .duplicateBatch, .supersededEpoch, .untrackedTag, .tooOldToTrack, .badGATTResult,
        ])
        #expect(reached == Set(RejectionReason.allCases))
    }

    @Test("refuses an oversized payload without reading a byte of it")
    func sizeBeforeParsing() {
        let result = BatchDecoder().decode(
            UnreadableBytes(count: 1 << 20), topicAgent: WireFixtures.agent, knownAgents: [WireFixtures.agent],
            now: WireFixtures.now)
        #expect(result == .rejected(.payloadTooLarge))
    }

    @Test("rejects non-finite numbers in values built in code")
    func nonFiniteValues() throws {
        let decoder = BatchDecoder()
        guard case .object(var batch) = WireFixtures.sampleBatch.json else {
            Issue.record("sample batch is not an object")
            return
        }
        batch["seq"] = .number(.infinity)
        #expect(
            decoder.decode(
                value: .object(batch), topicAgent: WireFixtures.agent, isKnownAgent: { _ in true },
                now: WireFixtures.now)
                == .rejected(.nonFinite))
        batch["seq"] = 1
        batch["readings"] = [["tag": .string(WireFixtures.tagText), "t": 1_764_475_200, "rssi": .number(.nan)]]
        let decoded = try #require(
            decoder.decode(
                value: .object(batch), topicAgent: WireFixtures.agent, isKnownAgent: { _ in true },
                now: WireFixtures.now
            )
            .batch)
        #expect(decoded.outcomes == [.rejected(.nonFinite)])
        let reading = ReadingBatch.Reading(tag: WireFixtures.tag, time: .nan, rssi: -60)
        #expect(decoder.validate(reading, now: WireFixtures.now) == .nonFinite)
    }

    @Test("keeps the good readings of a batch with bad ones, in order")
    func mixedBatch() throws {
        let readings = [BatchText.reading(), BatchText.reading(rssi: "99"), BatchText.reading(t: "1764475201")]
        let result = WireFixtures.decode(BatchText.batch(readings: "[" + readings.joined(separator: ",") + "]"))
        let batch = try #require(result.batch)
        #expect(batch.accepted.map(\.rssi) == [-67.5, -67.5])
        #expect(batch.rejections == [.rssiOutOfRange])
        #expect(batch.outcomes.count == 3)
    }

    @Test("ignores unknown members in batches and readings, and null optional members")
    func ignoresUnknownMembers() throws {
        let reading = BatchText.reading(extra: #","future":{"a":[1,2]},"var":null,"power":null"#)
        let text = BatchText.batch(readings: "[\(reading)]").dropLast() + #","compression":"none"}"#
        let batch = try #require(WireFixtures.decode(String(text)).batch)
        #expect(batch.accepted.count == 1)
        #expect(batch.accepted.first?.variance == nil)
    }

    @Test("accepts the boundaries of every range")
    func acceptsBoundaries() throws {
        let readings = [
            BatchText.reading(rssi: "-127"), BatchText.reading(rssi: "20"),
            BatchText.reading(t: "1764475206", extra: #","power":-127,"n":1,"var":0"#),
            BatchText.reading(t: "1764475141", extra: #","power":20,"battery_mv":0,"temp_c":-100"#),
        ]
        let batch = try #require(
            WireFixtures.decode(BatchText.batch(readings: "[" + readings.joined(separator: ",") + "]")).batch)
        #expect(batch.rejections.isEmpty)
        #expect(batch.accepted.count == 4)
    }

    @Test("applies configured limits and tolerances")
    func configuredLimits() throws {
        let strict = BatchDecoder(
            limits: .init(maximumPayloadBytes: 100, maximumDepth: 2, maximumReadings: 0),
            tolerance: .init(futureSkew: 0, maximumAge: 1))
        #expect(WireFixtures.decode(BatchText.batch(), decoder: strict) == .rejected(.payloadTooLarge))
        let roomy = BatchDecoder(limits: .init(maximumReadings: 0))
        #expect(WireFixtures.decode(BatchText.batch(), decoder: roomy) == .rejected(.tooManyReadings))
        let shallow = BatchDecoder(limits: .init(maximumDepth: 2))
        #expect(WireFixtures.decode(BatchText.batch(), decoder: shallow) == .rejected(.tooDeep))
        let impatient = BatchDecoder(tolerance: .init(futureSkew: 0, maximumAge: 0.25))
        let batch = try #require(WireFixtures.decode(BatchText.batch(), decoder: impatient).batch)
        #expect(batch.rejections == [.timeTooOld])
    }

    @Test("rejection reasons have stable snake_case names")
    func stableNames() {
        #expect(RejectionReason.payloadTooLarge.rawValue == "payload_too_large")
        #expect(RejectionReason.agentTopicMismatch.rawValue == "agent_topic_mismatch")
        #expect(RejectionReason.duplicateBatch.description == "duplicate_batch")
        for reason in RejectionReason.allCases {
            #expect(reason.rawValue.allSatisfy { $0 == "_" || ("a"..."z").contains($0) })
        }
    }
}

/// A payload that reports its size but traps if anyone reads it.
struct UnreadableBytes: Collection {
    let count: Int
    var startIndex: Int { 0 }
    var endIndex: Int { count }
    func index(after index: Int) -> Int { index + 1 }
    subscript(position: Int) -> UInt8 { preconditionFailure("the decoder read a byte of an oversized payload") }
    func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
        preconditionFailure("the decoder asked for the storage of an oversized payload")
    }
}
