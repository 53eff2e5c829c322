import Testing
import WhereaboutsCore

@testable import WhereaboutsWire

@Suite("Tag identities remembered by their bytes")
struct TagIdentityCacheTests {
    @Test("the cache gives what parsing gives, for valid and invalid texts, the first time and again")
    func agreesWithParsing() {
        let cache = TagIdentityCache()
        var texts = [WireFixtures.tagText, "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-8", "not a tag", ""]
        texts += (0..<200).map { "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-\($0 % 7)-\($0)" }
        texts += (0..<50).map { TagIdentity.address(UInt64($0) * 0x0101_0101).description }
        for _ in 0..<2 {
            for text in texts {
                let bytes = Array(text.utf8)
                let cached = bytes.withUnsafeBufferPointer { cache.identity($0) }
                #expect(cached == TagIdentity(wire: text), "\(text)")
            }
        }
    }

    @Test("beacon texts read from their bytes name what the wire's parse names, mutated ones included")
    func beaconBytes() {
        // Texts of the beacon kinds with bytes changed, cut or added; each must be read as TagIdentity(wire:)
        // reads it (its check of the characters and the length included), and never go to the table.
        let cache = TagIdentityCache()
        let alphabet = Array("0123456789abcdefABCDEFgxz-_: é".utf8)
        var random = SplitMix64(seed: 21)
        var read = 0
        var refused = 0
        for round in 0..<20_000 {
            var text = Array(
                (round % 2 == 0
                    ? "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-\(round % 70_000)-\(round % 13)"
                    : "altbeacon-E2C56DB5-DFFB-48D2-B060-D0F5A71096E0-\(round % 9)-\(round)").utf8)
            for _ in 0..<Int(random.next() % 3) {
                let position = Int(random.next() % UInt64(text.count + 1))
                let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
                switch random.next() % 3 {
                case 0 where position < text.count: text[position] = byte
                case 1: text.insert(byte, at: position)
                default: if position < text.count { text.remove(at: position) }
                }
            }
            let wire = TagIdentity(wire: String(decoding: text, as: UTF8.self))
            guard let beacon = text.withUnsafeBufferPointer({ TagIdentity.beacon($0) }) else {
                // Not a beacon kind any more: the cache parses it as the wire does.
                #expect(text.withUnsafeBufferPointer { cache.identity($0) } == wire)
                continue
            }
            #expect(beacon == wire, "\(String(decoding: text, as: UTF8.self))")
            #expect(text.withUnsafeBufferPointer { cache.identity($0) } == wire)
            if wire == nil { refused += 1 } else { read += 1 }
        }
        // Both outcomes were exercised, and the beacon texts never went to the table.
        #expect(read > 1_000 && refused > 1_000, "\(read) read, \(refused) refused")
        #expect(cache.count < 20_000 - read - refused + 1)
    }

    @Test("byte runs are equal only when every byte is, wherever the difference lies")
    func comparesEveryByte() {
        for length in 0...40 {
            let run = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(run.withUnsafeBufferPointer { a in run.withUnsafeBufferPointer { TagIdentityCache.same(a, $0) } })
            for position in 0..<length {
                var other = run
                other[position] ^= 0x40
                let same = run.withUnsafeBufferPointer { a in
                    other.withUnsafeBufferPointer { TagIdentityCache.same(a, $0) }
                }
                #expect(!same, "length \(length), differing at \(position)")
            }
        }
    }

    @Test("past its limit it starts afresh, and its answers stay right before and after")
    func bounded() {
        let cache = TagIdentityCache(limit: 100)
        // Device addresses: the beacon kinds are read from their bytes and never stored.
        let texts = (0..<250).map { TagIdentity.address(UInt64($0) &* 0x0101_0101).description }
        for round in 0..<2 {
            for text in texts {
                let cached = Array(text.utf8).withUnsafeBufferPointer { cache.identity($0) }
                #expect(cached == TagIdentity(wire: text), "round \(round): \(text)")
                #expect(cache.count <= 100)
            }
            // The first round starts afresh twice and keeps its last 50; the second finds none of its texts (each
            // start afresh dropped those it would have found) and ends with its last 100.
            #expect(cache.count == (round == 0 ? 50 : 100))
        }
    }

    @Test("a text made to have another's hash gets its own answer, and the two take turns")
    func collision() throws {
        // "mac-…" is 16 bytes, two words of the hash. A second 16-byte text with the same first word and a last
        // word solved for the same final hash (each step of the hash can be undone) collides with it exactly.
        let real = Array(TagIdentity.address(0x0011_2233_4455).description.utf8)
        #expect(real.count == 16)
        let target = real.withUnsafeBufferPointer { TagIdentityCache.hash($0) }
        var forged = real
        forged[0] = UInt8(ascii: "x")  // another first word, so that the state before the last word differs
        let first = forged[0..<8].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        var state = (0x9E37_79B9_7F4A_7C15 ^ UInt64(16) ^ first) &* 0xBF58_476D_1CE4_E5B9
        state ^= state >> 31
        // Undo the finish (× c2, then x ^= x >> 29), then the last word's step (× c1, then x ^= x >> 31).
        let beforeFinish = Self.inverseMultiply(Self.inverseShift(target, 29), 0x94D0_49BB_1331_11EB)
        let mixed = Self.inverseMultiply(Self.inverseShift(beforeFinish, 31), 0xBF58_476D_1CE4_E5B9)
        withUnsafeBytes(of: (mixed ^ state).littleEndian) { forged.replaceSubrange(8..<16, with: $0) }
        #expect(forged.withUnsafeBufferPointer { TagIdentityCache.hash($0) } == target)
        #expect(forged != real)

        let cache = TagIdentityCache()
        let address = try #require(TagIdentity(wire: String(decoding: real, as: UTF8.self)))
        for _ in 0..<3 {
            #expect(real.withUnsafeBufferPointer { cache.identity($0) } == address)
            #expect(forged.withUnsafeBufferPointer { cache.identity($0) } == nil)
        }
        #expect(cache.count <= 6)
    }

    /// x for which x ^ (x >> shift) is `value`.
    static func inverseShift(_ value: UInt64, _ shift: UInt64) -> UInt64 {
        var x = value
        for _ in 0..<(64 / shift + 1) { x = value ^ (x >> shift) }
        return x
    }

    /// x for which x × factor is `value` (modulo 2⁶⁴; `factor` odd).
    static func inverseMultiply(_ value: UInt64, _ factor: UInt64) -> UInt64 {
        var inverse = factor
        for _ in 0..<6 { inverse = inverse &* (2 &- factor &* inverse) }
        return value &* inverse
    }
}
