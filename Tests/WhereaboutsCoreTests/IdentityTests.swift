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
