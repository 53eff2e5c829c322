import Testing
import WhereaboutsCore
import WhereaboutsDrawing

/// A zone's name on the live page (`<floor>-<zone>`): written in one place, read back in one place.
@Suite("Zone page key")
struct ZoneKeyPageTests {
    @Test("every zone of the demo office is drawn under its page key, which reads back to the zone")
    func drawnAndReadBack() throws {
        let map = try shippedMap("demo-office.json")
        let renderer = MapRenderer()
        for zone in map.zones {
            #expect(zone.key.pageKey == "\(zone.floor)-\(zone.minor)")
            #expect(ZoneKey(pageKey: zone.key.pageKey) == zone.key)
            let floor = try #require(map.floors.first { $0.major == zone.floor })
            #expect(renderer.liveFloorSVG(map: map, floor: floor).contains(#"data-zone="\#(zone.key.pageKey)""#))
        }
        #expect(ZoneKey(floor: 65535, minor: 0).pageKey == "65535-0")
    }

    @Test("only the canonical form is a page key", arguments: ["01-1", "1-01", "+1-1", "1-", "-1", "1-1-1", "1/1", ""])
    func refused(text: String) {
        #expect(ZoneKey(pageKey: text) == nil)
    }
}
