import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsDrawing

#if canImport(FoundationXML)
    import FoundationXML
#endif

@Suite("The coverage report's drawing")
struct CoverageDrawingTests {
    @Test("areas are shaded and labelled with their errors, unchecked ones say why, and samples are marked")
    func content() throws {
        let map = try shippedMap("kolakowski-flat.json")
        let square = { (x: Double, y: Double) in
            Polygon([Point(x: x, y: y), Point(x: x + 3, y: y), Point(x: x + 3, y: y + 3), Point(x: x, y: y + 3)])
        }
        let overlay = CoverageOverlay(
            areas: [
                .init(
                    name: "A1", floor: 1, polygon: square(0, 3), samples: 400, checked: true, before: 1.5, after: 0.8),
                .init(
                    name: "B1", floor: 1, polygon: square(3, 3), samples: 300, checked: true, before: 1.2, after: 2.5),
                .init(name: "A2", floor: 1, polygon: square(0, 0), samples: 5, checked: false, before: nil, after: nil),
                .init(name: "B2", floor: 1, polygon: square(3, 0), samples: 0, checked: false, before: nil, after: nil),
            ],
            // Two marks: the second point falls in the first one's 0.25 m cell.
            samples: [(1, Point(x: 1, y: 4)), (1, Point(x: 1.05, y: 4.05)), (1, Point(x: 4, y: 4))],
            summary: "held out by area, median error: map 1.35 m, calibrated 1.2 m")
        let svg = MapRenderer().coverageSVG(map: map, coverage: overlay)
        #expect(svg.hasSuffix("</svg>\n"))
        #expect(svg.components(separatedBy: #"class="coverage-area""#).count - 1 == 4)
        #expect(svg.components(separatedBy: #"class="survey-sample""#).count - 1 == 2)
        #expect(svg.contains(#"data-area="A1""#) && svg.contains("1.5 → 0.8 m"))
        #expect(svg.contains("A1 (400)") && svg.contains("B1 (300)"))
        #expect(svg.contains("too few samples") && svg.contains("not surveyed"))
        // Green under 1 m, red from 2 m, grey when unchecked.
        #expect(svg.contains(#"data-area="A1" points"#) && svg.contains(##"fill="#2e9e44""##))
        #expect(svg.contains(##"fill="#d03a2a""##) && svg.contains(##"fill="#9a9a9a""##))
        #expect(svg.contains("held out by area, median error: map 1.35 m, calibrated 1.2 m"))
        // Well-formed, with the labels as text.
        let parser = XMLParser(data: Data(svg.utf8))
        let counter = ElementCounter()
        parser.delegate = counter
        #expect(parser.parse(), "not well-formed: \(String(describing: counter.error ?? parser.parserError))")
        #expect(counter.classes["coverage-label"] == 8)
    }
}
