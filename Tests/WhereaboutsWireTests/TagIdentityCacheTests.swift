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
}
