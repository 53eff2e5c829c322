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
        // The contest over, the tag still on this floor: the change is decided as ever, after its dwell.
        _ = membership.place(tag, floor: 2, evidence: inBoardroom, time: 8, transitions: &transitions)
        #expect(membership.zone(of: tag) == openPlan)
        _ = membership.place(tag, floor: 2, evidence: inBoardroom, time: 9, transitions: &transitions)
        #expect(membership.zone(of: tag) == boardroom)
        #expect(transitions.map(\.kind) == [.exit, .enter])
    }
}
