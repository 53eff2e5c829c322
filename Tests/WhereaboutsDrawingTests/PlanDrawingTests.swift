import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsDrawing

#if canImport(FoundationXML)
    import FoundationXML
#endif

@Suite("The planning heat map")
struct PlanDrawingTests {
    @Test("free cells are shaded by band, zones say their expected accuracy, each floor its figures, and a legend")
    func content() throws {
        let map = try shippedMap("demo-office.json")
        let plans = AccuracyPlan.floors(of: map)
        #expect(plans.count == 2)
        let svg = MapRenderer().planSVG(map: map, plans: plans)
        #expect(svg.hasSuffix("</svg>\n"))
        let parser = XMLParser(data: Data(svg.utf8))
        let counter = ElementCounter()
        parser.delegate = counter
        #expect(parser.parse(), "not well-formed: \(String(describing: counter.error ?? parser.parserError))")
        // Runs of cells of one band along a row: at least a rectangle per row of each floor, fewer than a cell each.
        let cells = counter.classes["plan-cell"] ?? 0
        let rows = plans.reduce(0) { $0 + $1.rows }
        #expect(cells >= rows && cells < plans.reduce(0) { $0 + $1.freeCells }, "\(cells) rectangles")
        #expect(counter.classes["plan-zone"] == map.zones.count)
        #expect(counter.classes["plan-summary"] == 2)
        let kitchen = try #require(plans[0].zones.first { $0.name == "Kitchen" }?.accuracy)
        #expect(svg.contains("≈ \(kitchen.rounded(toDecimals: 1)) m"))
        #expect(svg.contains("accuracy, m:") && svg.contains("1.5–2") && svg.contains("≥ 6") && svg.contains("none"))
        #expect(svg.contains(MapRenderer.planSummary(plans[1])))
        // The still picture's tag and occupancy legend is not drawn: the plan has neither.
        #expect(!svg.contains("zones shaded by occupancy"))
    }

    @Test("cells no agent hears are grey")
    func unheard() throws {
        let map = try loadMap(
            """
            {"site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Empty"},
             "floors": [{"major": 1, "name": "Ground", "outline": [[0,0],[4,0],[4,3],[0,3]]}], "agents": []}
            """)
        let svg = MapRenderer().planSVG(map: map, plans: AccuracyPlan.floors(of: map))
        // One run per row, all grey.
        #expect(svg.components(separatedBy: #"class="plan-cell""#).count - 1 == 6)
        #expect(svg.components(separatedBy: ##"fill="#8c8c8c" fill-opacity="0.55"/>"##).count - 1 == 6)
        #expect(svg.contains("median none"))
    }
}
