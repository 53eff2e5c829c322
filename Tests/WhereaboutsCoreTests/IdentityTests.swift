import Foundation
import Testing
import WhereaboutsCore

@Suite("Tag identity")
struct IdentityTests {
    @Test(
        "canonical strings round-trip",
        arguments: [
            "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-100-0",
            "altbeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-65535-7",
            "eddystone-00112233445566778899-aabbccddeeff",
            "mac-a1b2c3d4e5f6",
        ]
    )
    func roundTrip(text: String) throws {
        let identity = try #require(TagIdentity(text))
        #expect(identity.description == text)
    }

    @Test("upper-case hex is accepted and printed in lower case")
    func upperCase() throws {
        let identity = try #require(TagIdentity("ibeacon-E2C56DB5-DFFB-48D2-B060-D0F5A71096E0-1-2"))
        #expect(identity.description == "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2")
    }

    @Test(
        "malformed strings are refused, multi-byte text included",
        arguments: [
            "", "ibeacon", "ibeacon-", "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-100",
            "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-65536-0", "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-01-0",
            "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0--1-0", "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-0-",
            "ibeacon-" + String(repeating: "é", count: 19), "ibeacon-" + String(repeating: "é", count: 30) + "-1-1",
            "mac-a1b2c3d4e5", "mac-a1b2c3d4e5fg", "eddystone-0011-aabb", "beacon-1",
            "ibeacon-zzzzzzzz-dffb-48d2-b060-d0f5a71096e0-1-1",
        ]
    )
    func malformed(text: String) {
        #expect(TagIdentity(text) == nil)
    }

    @Test("Eddystone ids keep their bytes and order as namespace then instance, byte by byte")
    func eddystoneOrder() throws {
        var random = SplitMix64(seed: 0xED57)
        // Few byte values, so that many ids share a namespace and differ in one late byte.
        let pairs = (0..<400).map { _ in
            (
                (0..<10).map { _ in UInt8.random(in: 0...2, using: &random) },
                (0..<6).map { _ in UInt8.random(in: 0...2, using: &random) }
            )
        }
        let ids = try pairs.map { try #require(EddystoneUID(namespace: $0.0, instance: $0.1)) }
        for (id, pair) in zip(ids, pairs) {
            #expect(id.namespace == pair.0 && id.instance == pair.1)
        }
        for _ in 0..<4_000 {
            let a = Int.random(in: 0..<pairs.count, using: &random)
            let b = Int.random(in: 0..<pairs.count, using: &random)
            let bytesBefore = (pairs[a].0 + pairs[a].1).lexicographicallyPrecedes(pairs[b].0 + pairs[b].1)
            #expect((ids[a] < ids[b]) == bytesBefore)
            #expect((ids[a] == ids[b]) == (pairs[a].0 == pairs[b].0 && pairs[a].1 == pairs[b].1))
        }
        #expect(
            EddystoneUID(namespace: [UInt8](repeating: 0, count: 9), instance: [UInt8](repeating: 0, count: 6)) == nil)
        #expect(
            EddystoneUID(namespace: [UInt8](repeating: 0, count: 10), instance: [UInt8](repeating: 0, count: 7)) == nil)
    }

    @Test("identity constraints select by UUID, major and minor like CLBeaconIdentityConstraint")
    func constraints() throws {
        let uuid = try #require(BeaconUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0"))
        let other = try #require(BeaconUUID("00000000-dffb-48d2-b060-d0f5a71096e0"))
        let tag = TagIdentity.iBeacon(uuid: uuid, major: 1, minor: 2)
        #expect(BeaconIdentityConstraint(uuid: uuid).matches(tag))
        #expect(try #require(BeaconIdentityConstraint(uuid: uuid, major: 1, minor: nil)).matches(tag))
        #expect(try #require(BeaconIdentityConstraint(uuid: uuid, major: 1, minor: 2)).matches(tag))
        #expect(!(try #require(BeaconIdentityConstraint(uuid: uuid, major: 1, minor: 3))).matches(tag))
        #expect(!(try #require(BeaconIdentityConstraint(uuid: uuid, major: 2, minor: nil))).matches(tag))
        #expect(!BeaconIdentityConstraint(uuid: other).matches(tag))
        #expect(BeaconIdentityConstraint(uuid: uuid, major: nil, minor: 2) == nil)
        #expect(!BeaconIdentityConstraint(uuid: uuid).matches(.address(0xA1B2_C3D4_E5F6)))
        #expect(
            BeaconIdentityConstraint("e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2")?.description
                == "e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2")
        #expect(BeaconIdentityConstraint("e2c56db5-dffb-48d2-b060-d0f5a71096e0::2") == nil)
    }

    /// The 16 bytes a canonical UUID text names, read one character at a time; nil for any other text.
    static func referenceBytes(_ text: [UInt8]) -> [UInt8]? {
        guard text.count == 36 else { return nil }
        var digits: [UInt8] = []
        for (index, byte) in text.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits.append(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digits.append(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digits.append(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
        }
        return stride(from: 0, to: 32, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
    }

    @Test("a UUID's text read eight digits at a time: every byte value at every position, and random UUIDs")
    func uuidWords() throws {
        func parsed(_ text: [UInt8]) -> [UInt8]? {
            text.withUnsafeBufferPointer { BeaconUUID(canonical: $0) }?.bytes
        }
        // Every single-byte change of a mixed-case text: 36 positions x 256 values.
        let base = Array("e2C56Db5-dFfB-48d2-B060-d0F5a71096E0".utf8)
        var accepted = 0
        for position in base.indices {
            for value in 0...255 {
                var text = base
                text[position] = UInt8(value)
                let expected = Self.referenceBytes(text)
                #expect(parsed(text) == expected, "\(position): \(value)")
                if expected != nil { accepted += 1 }
            }
        }
        // 32 digit positions x 22 hex characters, and the dashes left as they were.
        #expect(accepted == 32 * 22 + 4)
        // Random UUIDs in random case, against Foundation's parser; and random changes of two bytes.
        var random = SplitMix64(seed: 77)
        for _ in 0..<2_000 {
            let uuid = UUID()
            let text = Array(uuid.uuidString.utf8).map { byte in
                random.next() % 2 == 0 ? byte : Array(String(UnicodeScalar(byte)).lowercased().utf8)[0]
            }
            let foundation = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            #expect(parsed(text) == foundation, "\(String(decoding: text, as: UTF8.self))")
            var changed = text
            for _ in 0..<2 {
                changed[Int(random.next() % 36)] = UInt8(truncatingIfNeeded: random.next())
            }
            #expect(parsed(changed) == Self.referenceBytes(changed))
        }
        #expect(parsed(Array(base.dropLast())) == nil)
        #expect(parsed(base + [UInt8(ascii: "0")]) == nil)
    }
}
