import Testing
import WhereaboutsCore
import WhereaboutsJSON

@testable import WhereaboutsWire

/// The fast path must agree with the tree decoder on everything, and must be the one that reads what agents send.
@Suite("Batch decoding without a JSON tree")
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
}
