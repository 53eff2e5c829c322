import TestFixtures
import Testing

@testable import WhereaboutsCore

@Suite("Zone membership")
struct ZoneMembershipTests {
    @Test("while another floor is contesting the tag's, its zone is held; the change waits for the contest to end")
    func heldWhileFloorContested() throws {
        let map = try loadShippedMap("demo-office.json")
        var membership = ZoneMembership(map: map, configuration: ZoneHysteresis.Configuration())
        let tag = demoTag(1)
        let openPlan = ZoneKey(floor: 2, minor: 1)
        let boardroom = ZoneKey(floor: 2, minor: 2)
        var transitions: [ZoneTransition] = []
        let inOpenPlan = ZoneEvidence(zones: [openPlan, boardroom], mass: [0.95, 0.05])
        for second in 0..<3 {
            _ = membership.place(
                tag, floor: 2, evidence: inOpenPlan, time: Double(second), transitions: &transitions)
        }
        #expect(membership.zone(of: tag) == openPlan)
        transitions.removeAll()
        // On the stairs: the floor below is louder but not yet for long enough. The estimate on this floor drifts
        // into the boardroom; the zone holds, however long.
        let inBoardroom = ZoneEvidence(zones: [openPlan, boardroom], mass: [0.05, 0.95])
        for second in 3..<8 {
            let placed = membership.place(
                tag, floor: 2, evidence: inBoardroom, held: true, time: Double(second), transitions: &transitions)
            #expect(placed.zone == openPlan)
            #expect(placed.probability == 0.05)
        }
        #expect(transitions.isEmpty)
        // The contest over, the tag still on this floor: the change is decided as ever, here at once (the readings
        // since the last update the zone rule saw span the dwell).
        _ = membership.place(tag, floor: 2, evidence: inBoardroom, time: 8, transitions: &transitions)
        #expect(membership.zone(of: tag) == boardroom)
        #expect(transitions.map(\.kind) == [.exit, .enter])
    }

    @Test("a zone's members stay sorted by identity as tags come and go")
    func membersStaySorted() throws {
        var random = SplitMix64(seed: 0x2011E)
        // Every kind of identity, so that the order across kinds is exercised too.
        let uuid = try #require(BeaconUUID("f7826da6-4fa2-4e98-8024-bc5b71e0893e"))
        let pool: [TagIdentity] = try (0..<40).map { n in
            switch n % 4 {
            case 0: .iBeacon(uuid: uuid, major: UInt16(n % 3), minor: UInt16(n))
            case 1: .altBeacon(uuid: uuid, major: 1, minor: UInt16(n))
            case 2: .address(UInt64(n) << 20)
            default:
                .eddystone(
                    try #require(
                        EddystoneUID(namespace: [UInt8](repeating: UInt8(n), count: 10), instance: [1, 2, 3, 4, 5, 6])))
            }
        }
        var members = ZoneMembers()
        var reference: Set<TagIdentity> = []
        for _ in 0..<2_000 {
            let tag = pool[Int(random.next() % UInt64(pool.count))]
            if random.next() % 2 == 0 {
                members.insert(tag)
                reference.insert(tag)
            } else {
                members.remove(tag)
                reference.remove(tag)
            }
            #expect(members.tags.count == reference.count)
        }
        #expect(members.tags == reference.sorted())
        #expect(pool.allSatisfy { members.tags.contains($0) == reference.contains($0) })
    }
}
