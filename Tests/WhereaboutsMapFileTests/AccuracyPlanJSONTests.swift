import Testing
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsMapFile

@Suite("The accuracy plan as JSON for the editor")
struct AccuracyPlanJSONTests {
    static let text = """
        {
          "site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Two rooms"},
          "floors": [{"major": 3, "name": "Third", "outline": [[0,0],[10,0],[10,4],[0,4]]}],
          "zones": [
            {"floor": 3, "minor": 7, "name": "West", "polygon": [[0,0],[5,0],[5,4],[0,4]]},
            {"floor": 3, "minor": 9, "name": "East", "polygon": [[5,0],[10,0],[10,4],[5,4]]}
          ],
          "obstacles": [{"floor": 3, "polygon": [[0,0],[1,0],[1,1],[0,1]]}],
          "agents": [
            {"id": "a", "floor": 3, "x": 1, "y": 2, "z": 2.4}, {"id": "b", "floor": 3, "x": 9, "y": 2, "z": 2.4},
            {"id": "c", "floor": 3, "x": 5, "y": 3.5, "z": 2.4}
          ]
        }
        """

    @Test("the raster row by row with null where nobody stands, the figures, and each zone's plan")
    func encoding() throws {
        let map = try FloorMap.parse(Array(Self.text.utf8)).get()
        let plan = try #require(AccuracyPlan(map: map, floor: 3))
        let value = AccuracyPlanJSON.encode(plan)
        // Through text and back, as the page reads it.
        let object = try #require(try JSONParser().parse(JSONWriter().string(value)).object)
        #expect(object["floor"]?.integer == 3)
        #expect(object["origin"]?.array?.compactMap(\.double) == [0, 0])
        #expect(object["cell_size"]?.double == 0.5)
        #expect(object["columns"]?.integer == 20 && object["rows"]?.integer == 8)
        let accuracy = try #require(object["accuracy"]?.array)
        #expect(accuracy.count == 160)
        // The obstacle's 2 × 2 cells in the south-west corner (row 0 at the smallest y) are null, nothing else.
        #expect(accuracy[0] == .null && accuracy[1] == .null && accuracy[20] == .null && accuracy[21] == .null)
        #expect(accuracy.count { $0 == .null } == 4)
        let first = try #require(accuracy[2].double)
        #expect(abs(first - (plan.accuracy[2] ?? 0)) <= 0.005)
        #expect(object["agents_heard"]?.array?[2].integer == 3)
        #expect(object["median"]?.double != nil && object["p90"]?.double != nil)
        #expect(object["sparse_share"]?.double == 0)
        let zones = (object["zones"]?.array ?? []).compactMap(\.object)
        #expect(zones.count == 2)
        #expect(zones.map { $0["minor"]?.integer } == [7, 9])
        #expect(zones.map { $0["name"]?.string } == ["West", "East"])
        #expect(zones[0]["width"]?.double == 4)
        #expect(zones[0]["confused_with"]?.array == [.number(9)])
        let share = try #require(zones[0]["confused_share"]?.double)
        #expect(share > 0 && share <= 1)
    }

    @Test("every floor of a map, in order; a floor nobody hears has nulls, not numbers")
    func floors() throws {
        // Agents on floor 1 only; floor 5 is far above (not the next floor up: there is one between).
        let text = """
            {
              "site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Tower"},
              "floors": [
                {"major": 5, "name": "Top", "height": 12, "outline": [[0,0],[2,0],[2,2],[0,2]]},
                {"major": 3, "name": "Middle", "height": 6, "outline": [[0,0],[2,0],[2,2],[0,2]]},
                {"major": 1, "name": "Ground", "height": 0, "outline": [[0,0],[6,0],[6,4],[0,4]]}
              ],
              "agents": [
                {"id": "a", "floor": 1, "x": 1, "y": 1, "z": 2.4}, {"id": "b", "floor": 1, "x": 5, "y": 3, "z": 2.4}
              ]
            }
            """
        let map = try FloorMap.parse(Array(text.utf8)).get()
        let plans = (AccuracyPlanJSON.encode(map).array ?? []).compactMap(\.object)
        try #require(plans.count == 3)
        #expect(plans.map { $0["floor"]?.integer } == [1, 3, 5])
        #expect(plans[0]["accuracy"]?.array?.allSatisfy { $0.double != nil } == true)
        #expect(plans[0]["sparse_share"]?.double == 1, "two agents: every cell is heard by fewer than three")
        #expect(plans[2]["accuracy"]?.array?.allSatisfy { $0 == .null } == true)
        #expect(plans[2]["median"] == .null && plans[2]["sparse_share"]?.double == 1)
        #expect(plans[2]["zones"]?.array?.isEmpty == true)
    }
}
