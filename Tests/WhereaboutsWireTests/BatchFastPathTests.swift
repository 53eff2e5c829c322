import TestFixtures
import Testing
import WhereaboutsCore
import WhereaboutsJSON

@testable import WhereaboutsWire

/// The fast path must agree with the tree decoder on everything, and must be the one that reads what agents send.
@Suite("Batch decoding without a JSON tree", .ownThread)
struct BatchFastPathTests {
    let agent = WireFixtures.agent
    let now = WireFixtures.now

    func fast(_ payload: [UInt8], decoder: BatchDecoder = BatchDecoder()) -> BatchDecodeResult? {
        payload.withUnsafeBufferPointer { buffer in
            var reader = BatchFastPath(buffer)
            return reader.decode(topicAgent: agent, isKnownAgent: { $0 == agent }, now: now, decoder: decoder)
        }
    }

    func tree(_ payload: [UInt8], decoder: BatchDecoder = BatchDecoder()) -> BatchDecodeResult {
        decoder.decodeThroughTree(payload, topicAgent: agent, isKnownAgent: { $0 == agent }, now: now)
    }

    func decoded(_ payload: [UInt8]) -> BatchDecodeResult {
        BatchDecoder().decode(payload, topicAgent: agent, knownAgents: [agent], now: now)
    }

    /// Random batches as agents write them: every tag kind, optional members, values in and out of range.
    func randomBatches(count: Int, seed: UInt64) -> [ReadingBatch] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let readings = (0..<Int.random(in: 0...30, using: &generator)).map { _ -> ReadingBatch.Reading in
                let tag: TagIdentity =
                    Bool.random(using: &generator)
                    ? .iBeacon(
                        uuid: WireFixtures.site, major: .random(in: 0...UInt16.max, using: &generator),
                        minor: .random(in: 0...UInt16.max, using: &generator))
                    : .address(UInt64.random(in: 0...0xFFFF_FFFF_FFFF, using: &generator))
                return ReadingBatch.Reading(
                    tag: tag, time: now - Double.random(in: -10...100, using: &generator),
                    rssi: Double.random(in: -140...30, using: &generator).rounded(toDecimals: 2),
                    count: Int.random(in: 0...60, using: &generator),
                    variance: Bool.random(using: &generator) ? Double.random(in: -5...200, using: &generator) : nil,
                    power: Bool.random(using: &generator) ? Int.random(in: -140...30, using: &generator) : nil,
                    batteryMillivolts: Bool.random(using: &generator)
                        ? Int.random(in: 0...70_000, using: &generator) : nil,
                    temperature: Bool.random(using: &generator) ? Double.random(in: -150...250, using: &generator) : nil
                )
            }
            return ReadingBatch(
                agent: agent, epoch: Int.random(in: 0...Int(now * 1000), using: &generator),
                seq: Int.random(in: 0...(1 << 40), using: &generator), sent: now - 1, readings: readings)
        }
    }

    @Test("batches as agents write them take the fast path, and it gives what the tree decoder gives")
    func agreesOnAgentBatches() throws {
        for batch in randomBatches(count: 500, seed: 0xFA57) {
            let payload = Array(batch.payload.utf8)
            let result = try #require(fast(payload), "the fast path refused \(batch.payload.prefix(200))")
            #expect(result == tree(payload))
        }
        #expect(fast(Array(WireFixtures.sampleBatch.payload.utf8)) != nil)
    }

    /// A number's text in one of the many ways JSON allows: sign, leading zeros, a point anywhere, an exponent.
    static func numberText(using generator: inout SplitMix64) -> String {
        let digitCount = Int.random(in: 1...24, using: &generator)
        var digits = (0..<digitCount).map { _ in String(Int.random(in: 0...9, using: &generator)) }.joined()
        while digits.count > 1, digits.first == "0" { digits.removeFirst() }  // JSON allows no leading zero
        var text = digits
        if Bool.random(using: &generator) {
            let zeros = String(repeating: "0", count: Int.random(in: 0...6, using: &generator))
            text = "0." + zeros + digits
        } else if digits.count > 1, Bool.random(using: &generator) {
            let point = digits.index(digits.startIndex, offsetBy: Int.random(in: 1..<digits.count, using: &generator))
            text = String(digits[..<point]) + "." + String(digits[point...])
        }
        if Bool.random(using: &generator) {
            let sign = ["", "+", "-"].randomElement(using: &generator) ?? ""
            let e = Bool.random(using: &generator) ? "e" : "E"
            text += e + sign + String(Int.random(in: 0...40, using: &generator))
        }
        return Bool.random(using: &generator) ? "-" + text : text
    }

    @Test("numbers written every way JSON allows convert to the correctly rounded value, bit for bit")
    func numbersAreCorrectlyRounded() throws {
        var generator = SplitMix64(seed: 0x6E75_6D62)
        let named = [
            "0", "-0", "1e22", "1e23", "9007199254740993e-3", "123456789012345678901234e-20", "5e-324", "0.1e1",
            "4.9E+1", "-71.5", "0.000000000000000000000000071e27", "1e-22", "17e-23", "2.2250738585072014e-308",
            "1796124999.8489382", "0.1234567890123456789", "5402.2500000000000001",
        ]
        var checked = 0
        for text in named + (0..<5_000).map({ _ in Self.numberText(using: &generator) }) {
            let expected = try #require(Double(text), "\(text) is a JSON number")
            // Written as the variance, which keeps any value in its range as it was read.
            guard (0...BatchDecoder.maximumVariance).contains(expected) else { continue }
            let reading = #"{"tag":"\#(WireFixtures.tagText)","t":\#(now - 1),"rssi":-70,"var":\#(text)}"#
            let batch = #"{"v":1,"agent":"hall-1","epoch":1,"seq":1,"sent":\#(now - 1),"readings":[\#(reading)]}"#
            let payload = Array(batch.utf8)
            let result = try #require(fast(payload), "the fast path refused \(text)")
            #expect(result == tree(payload), "\(text)")
            guard case .decoded(let decoded) = result, case .accepted(let accepted) = decoded.outcomes.first else {
                Issue.record("\(text) was not accepted")
                continue
            }
            #expect(accepted.variance?.bitPattern == expected.bitPattern, "\(text)")
            // `==` above takes -0 for +0: the tree must give the same bits too.
            if case .decoded(let treeDecoded) = tree(payload),
                case .accepted(let treeAccepted) = treeDecoded.outcomes.first
            {
                #expect(treeAccepted.variance?.bitPattern == expected.bitPattern, "the tree, \(text)")
            }
            checked += 1
        }
        #expect(checked > 1_000, "enough of the random numbers land in the variance's range")
    }

    @Test("long mantissas over a power of ten round to nearest, ties to even, as the standard library's conversion")
    func longMantissasRoundCorrectly() throws {
        var generator = SplitMix64(seed: 0x7175_6F74)
        // Ties: 2^53 + 1 and 2^53 + 5 lie halfway between two doubles; the even one is taken.
        var cases: [(UInt64, Int)] = [(90_071_992_547_409_930, 1), (90_071_992_547_409_950, 1), (1, 19)]
        cases += [(17_961_249_998_489_382, 7), (9_999_999_999_999_999_999, 19), (UInt64(1) << 63, 3)]
        for _ in 0..<20_000 {
            let digits = Int.random(in: 1...19, using: &generator)
            let limit = digits == 19 ? 9_999_999_999_999_999_999 : (0..<digits).reduce(UInt64(1)) { r, _ in r * 10 } - 1
            cases.append((UInt64.random(in: 1...limit, using: &generator), Int.random(in: 1...19, using: &generator)))
        }
        var computed = 0
        for (mantissa, exponent) in cases {
            let expected = try #require(Double("\(mantissa)e-\(exponent)"))
            guard let value = BatchFastPath.quotient(mantissa, powerOfTen: exponent) else {
                // Refused only where documented: a mantissa more than 55 bits longer than the divisor.
                let divisorBits = 64 - (0..<exponent).reduce(UInt64(1)) { r, _ in r * 10 }.leadingZeroBitCount
                #expect(64 - mantissa.leadingZeroBitCount > 55 + divisorBits, "\(mantissa)e-\(exponent)")
                continue
            }
            #expect(value.bitPattern == expected.bitPattern, "\(mantissa)e-\(exponent)")
            computed += 1
        }
        #expect(computed > 19_000)
    }

    @Test("an exponent of many digits, pulled back by many digits after the point, gets the tree decoder's verdict")
    func longExponents() throws {
        let zeros = String(repeating: "0", count: 9_999)
        // -6e90000 (not finite), 6e4 and -60 written with long exponents; a cut-short exponent read them as -6 or 6.
        for rssi in ["-0.\(zeros)6e100000", "0.\(zeros)6e10004", "-0.\(zeros)\(zeros)6e20000", "-6e-0000000000001"] {
            let reading = #"{"tag":"\#(WireFixtures.tagText)","t":\#(now - 1),"rssi":\#(rssi)}"#
            let batch = #"{"v":1,"agent":"hall-1","epoch":1,"seq":1,"sent":\#(now - 1),"readings":[\#(reading)]}"#
            let payload = Array(batch.utf8)
            let result = decoded(payload)
            #expect(result == tree(payload), "\(rssi.prefix(20))…\(rssi.suffix(12))")
            guard case .decoded(let decodedBatch) = result else {
                Issue.record("the batch was refused")
                continue
            }
            let expected = try #require(Double(rssi))
            switch decodedBatch.outcomes.first {
            case .accepted(let accepted): #expect(accepted.rssi == expected)
            case .rejected(let reason): #expect(reason == (expected.isFinite ? .rssiOutOfRange : .nonFinite))
            case nil: Issue.record("no reading")
            }
        }
    }

    @Test("a decode made earlier or later, retimed, is the decode at the time it is taken, or says to decode again")
    func retimedIsTheDecodeThen() {
        var generator = SplitMix64(seed: 0x7E71_3ED0)
        let decoder = BatchDecoder()
        var payloads = randomBatches(count: 300, seed: 0x71BE).map { Array($0.payload.utf8) }
        payloads += BadPayloads.all.map(\.bytes)
        var retimed = 0
        var decodedAgain = 0
        var changed = 0
        for payload in payloads {
            for _ in 0..<8 {
                let decodedAt = now + Double.random(in: -30...30, using: &generator)
                let takenAt = decodedAt + Double.random(in: -70...70, using: &generator)
                let early = decoder.decode(payload, topicAgent: agent, knownAgents: [agent], now: decodedAt)
                let then = decoder.decode(payload, topicAgent: agent, knownAgents: [agent], now: takenAt)
                guard let result = decoder.retimed(early, decodedAt: decodedAt, now: takenAt) else {
                    decodedAgain += 1
                    continue
                }
                #expect(result == then, "\(String(decoding: payload.prefix(120), as: UTF8.self))")
                retimed += 1
                if early != then { changed += 1 }
            }
        }
        #expect(retimed > 100)
        #expect(decodedAgain > 100)
        #expect(changed > 10)

        // What a live locator sees: fresh readings, taken a moment after they were decoded. Every one is retimed
        // without decoding again, and those that aged past the limit in between are refused as a decode then would.
        var aged = 0
        for seq in 0..<200 {
            let readings = (0..<20).map { _ in
                ReadingBatch.Reading(
                    tag: WireFixtures.tag, time: now - Double.random(in: 58...59.99, using: &generator), rssi: -70,
                    count: 1, variance: nil, power: nil)
            }
            let payload = Array(
                ReadingBatch(agent: agent, epoch: 1, seq: seq, sent: now, readings: readings).payload.utf8)
            let takenAt = now + Double.random(in: 0...1.5, using: &generator)
            let early = decoder.decode(payload, topicAgent: agent, knownAgents: [agent], now: now)
            let then = decoder.decode(payload, topicAgent: agent, knownAgents: [agent], now: takenAt)
            let result = decoder.retimed(early, decodedAt: now, now: takenAt)
            #expect(result == then)
            if early != then { aged += 1 }
        }
        #expect(aged > 100)
    }

    @Test("every named hostile payload gets the tree decoder's verdict")
    func agreesOnHostileCorpus() {
        for payload in BadPayloads.all {
            #expect(decoded(payload.bytes) == tree(payload.bytes), "\(payload.name)")
        }
    }

    @Test("seeded mutations of real batches (bytes flipped, dropped, inserted, spaces) get the tree decoder's verdict")
    func agreesOnMutations() {
        var generator = SplitMix64(seed: 0x3D17)
        let alphabet = Array(#"{}[]":,.-+eE0123456789 tnfrualse\"#.utf8) + [0x00, 0xFF, 0xC3, 0x0A]
        var fastTaken = 0
        for batch in randomBatches(count: 200, seed: 0xBEEF) {
            let original = Array(batch.payload.utf8)
            for _ in 0..<25 {
                var payload = original
                for _ in 0..<Int.random(in: 1...3, using: &generator) where !payload.isEmpty {
                    let index = Int.random(in: 0..<payload.count, using: &generator)
                    switch Int.random(in: 0..<4, using: &generator) {
                    case 0: payload[index] = alphabet.randomElement(using: &generator) ?? 0
                    case 1: payload.remove(at: index)
                    case 2: payload.insert(alphabet.randomElement(using: &generator) ?? 0, at: index)
                    default: payload.insert(0x20, at: index)
                    }
                }
                let result = decoded(payload)
                #expect(result == tree(payload), "\(String(decoding: payload, as: UTF8.self))")
                if fast(payload) != nil { fastTaken += 1 }
            }
        }
        #expect(fastTaken > 100, "some mutations (spaces, digits) stay in the fast path's shape")
    }

    @Test("strings read eight bytes at a time: every byte value at every place of a tag gets the tree's verdict")
    func stringsEightAtATime() throws {
        // The word test alone: exactly the bytes the tree decoder must see are flagged, wherever they lie.
        let special: (UInt8) -> Bool = { byte in
            byte < 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
        }
        for place in 0..<8 {
            for value in 0...255 {
                var bytes = Array("ib:7-a0_Z".utf8.prefix(8))
                bytes[place] = UInt8(value)
                let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                #expect(
                    BatchFastPath.mayEndString(UInt64(littleEndian: word)) == special(UInt8(value)),
                    "byte \(value) at \(place)")
            }
        }
        // In a batch: every byte value put at every place of a tag's text (on both sides of each eight-byte step),
        // decoded by the fast path and by the tree, agree; plain characters keep the fast path.
        let batch = try #require(randomBatches(count: 40, seed: 0x57A6).first { $0.readings.count >= 2 })
        let original = Array(batch.payload.utf8)
        let tagStart = try #require(original.firstRange(of: Array(#""tag":""#.utf8))).upperBound
        let tagLength = try #require(original[tagStart...].firstIndex(of: UInt8(ascii: "\""))) - tagStart
        var fastTaken = 0
        for place in 0..<tagLength {
            for value in 0...255 {
                var payload = original
                payload[tagStart + place] = UInt8(value)
                let result = decoded(payload)
                #expect(result == tree(payload), "byte \(value) at \(place) of the tag")
                if let taken = fast(payload) {
                    fastTaken += 1
                    #expect(!special(UInt8(value)), "byte \(value) at \(place) taken without the tree")
                    #expect(taken == result)
                }
            }
        }
        #expect(fastTaken > 0)
    }
}
