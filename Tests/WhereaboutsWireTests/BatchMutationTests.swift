import TestFixtures
import Testing
import WhereaboutsCore
import WhereaboutsWire

/// Reliability plan S3: seeded random mutations of a valid batch never crash the decoder, and whatever it
/// accepts passes validation.
@Suite("Batch mutations", .ownThread)
struct BatchMutationTests {
    /// Bytes that make mutations interesting to a JSON parser.
    static let interesting: [UInt8] =
        Array(#"{}[]",:-+.0123456789eEtrufalsn\ NaIy"#.utf8) + [0x00, 0x0A, 0x7F, 0x80, 0xC0, 0xE2, 0xED, 0xF4, 0xFF]

    static func mutate(_ bytes: [UInt8], _ generator: inout SplitMix64) -> [UInt8] {
        var bytes = bytes
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<7, using: &generator) {
            case 0 where !bytes.isEmpty:  // flip one bit
                bytes[position] ^= 1 << UInt8.random(in: 0...7, using: &generator)
            case 1 where !bytes.isEmpty:  // replace with an interesting byte
                bytes[position] = interesting[Int.random(in: 0..<interesting.count, using: &generator)]
            case 2:  // truncate
                bytes = Array(bytes.prefix(position))
            case 3:  // insert interesting bytes
                let insert = (0..<Int.random(in: 1...8, using: &generator)).map { _ in
                    interesting[Int.random(in: 0..<interesting.count, using: &generator)]
                }
                bytes.insert(contentsOf: insert, at: position)
            case 4 where !bytes.isEmpty:  // delete a run
                let end = min(bytes.count, position + Int.random(in: 1...16, using: &generator))
                bytes.removeSubrange(position..<end)
            case 5 where !bytes.isEmpty:  // duplicate a run
                let end = min(bytes.count, position + Int.random(in: 1...64, using: &generator))
                bytes.insert(contentsOf: bytes[position..<end], at: position)
            default:  // a random byte anywhere
                bytes.insert(UInt8.random(in: 0...255, using: &generator), at: position)
            }
        }
        return bytes
    }

    @Test("10,000 mutated batches decode to a clean rejection or to readings that all pass validation")
    func mutatedBatches() {
        let seed: UInt64 = 0xF022_0004
        print("batch mutation seed: \(seed)")
        var generator = SplitMix64(seed: seed)
        let decoder = BatchDecoder()
        let original = Array(WireFixtures.sampleBatch.payload.utf8)
        var outcomes = (rejected: 0, decoded: 0, readingsAccepted: 0)
        for _ in 0..<10_000 {
            let payload = Self.mutate(original, &generator)
            let result = decoder.decode(
                payload, topicAgent: WireFixtures.agent, knownAgents: [WireFixtures.agent], now: WireFixtures.now)
            switch result {
            case .rejected:
                outcomes.rejected += 1
            case .decoded(let batch):
                outcomes.decoded += 1
                #expect(batch.agent == WireFixtures.agent)
                #expect((0...BatchDecoder.maximumSequence).contains(batch.epoch))
                #expect((0...BatchDecoder.maximumSequence).contains(batch.seq))
                #expect(batch.sent.isFinite && batch.sent >= 0)
                for reading in batch.accepted {
                    outcomes.readingsAccepted += 1
                    #expect(decoder.validate(reading, now: WireFixtures.now) == nil)
                    #expect(TagIdentity(wire: reading.tag.description) == reading.tag)
                }
            }
        }
        print(
            "mutations: \(outcomes.rejected) rejected, \(outcomes.decoded) decoded, \(outcomes.readingsAccepted) readings accepted"
        )
        // Both paths must have been exercised for the loop to mean anything.
        #expect(outcomes.rejected > 1000)
        #expect(outcomes.decoded > 100)
    }

    @Test("10,000 random byte strings are rejected cleanly")
    func randomBytes() {
        let seed: UInt64 = 0xB17E_0005
        print("random bytes seed: \(seed)")
        var generator = SplitMix64(seed: seed)
        for _ in 0..<10_000 {
            let payload = (0..<Int.random(in: 0...300, using: &generator)).map { _ in
                Bool.random(using: &generator)
                    ? UInt8.random(in: 0...255, using: &generator)
                    : Self.interesting[Int.random(in: 0..<Self.interesting.count, using: &generator)]
            }
            #expect(WireFixtures.decode(payload).rejection != nil)
        }
    }
}
