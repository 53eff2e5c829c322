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
}
