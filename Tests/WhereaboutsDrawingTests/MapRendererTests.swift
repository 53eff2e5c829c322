import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsDrawing
import WhereaboutsWire

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Counts the elements of a document by name, and fails on any XML error.
final class ElementCounter: NSObject, XMLParserDelegate {
    var counts: [String: Int] = [:]
    var classes: [String: Int] = [:]
    var texts: [String] = []
    var error: (any Error)?

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        counts[name, default: 0] += 1
        if let kind = attributes["class"] { classes[kind, default: 0] += 1 }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { texts.append(string) }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) { error = parseError }
}

@Suite("Map renderer")
struct MapRendererTests {
    func parse(_ svg: String) throws -> ElementCounter {
        let parser = XMLParser(data: Data(svg.utf8))
        let counter = ElementCounter()
        parser.delegate = counter
        let ok = parser.parse()
        #expect(ok, "not well-formed: \(String(describing: counter.error ?? parser.parserError))")
        return counter
    }

    @Test("the demo office draws as well-formed SVG with every floor, zone, wall and agent")
    func demoOffice() throws {
        let map = try shippedMap("demo-office.json")
        let tag = try #require(map.knownTags.first).identity
        let positions = [
            PositionRecord(time: 1, tag: tag, x: 2, y: 2, floor: 1, zone: 1, accuracy: 9),
            PositionRecord(time: 2, tag: tag, x: 5, y: 5, floor: 1, zone: 1, accuracy: 1.5),
            PositionRecord(time: 2, tag: .address(7), x: 12, y: 15, floor: 2, zone: nil, accuracy: 2),
        ]
        let svg = MapRenderer().svg(map: map, positions: positions)
        let counter = try parse(svg)
        #expect(counter.counts["svg"] == 1)
        #expect(counter.classes["floor"] == map.floors.count)
        #expect(counter.counts["clipPath"] == map.floors.count)
        #expect(counter.classes["zone"] == map.zones.count)
        #expect(counter.classes["wall"] == map.walls.count)
        #expect(counter.classes["agent"] == map.agents.count)
        #expect(counter.classes["tag"] == 2, "the last position of each tag")
        #expect(counter.texts.contains("Alice"))
        #expect(counter.texts.contains("Lobby (1)"), "occupancy from the last positions")
        #expect(counter.texts.contains("Reception (0)"))
        #expect(svg.contains(#"r="45""#), "1.5 m accuracy at 30 px/m")
    }

    @Test("names with markup characters are escaped, and stairs are drawn")
    func escaping() throws {
        var text = try fixtureText("scenarios/two-floors.json")
        text = text.replacingOccurrences(of: #""name": "West""#, with: #""name": "R&D <\"lab\">""#)
        let map = try loadMap(text)
        let counter = try parse(MapRenderer().svg(map: map))
        #expect(counter.texts.joined().contains(#"R&D <"lab"> (0)"#))
        #expect(counter.classes["stairs"] == 2, "one on each floor the stairs join")
    }

    @Test("walls that block walking are drawn with their doors as gaps, and obstacles as areas")
    func freeSpace() throws {
        let map = try loadMap(
            """
            {
              "site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Two rooms"},
              "model": {"measured_power": -59, "path_loss_exponent": 2.0},
              "floors": [{"major": 1, "name": "Ground", "height": 0, "outline": [[0,0],[20,0],[20,10],[0,10]]}],
              "agents": [{"id": "a", "floor": 1, "x": 2, "y": 2, "z": 2.4}],
              "walls": [
                {"floor": 1, "from": [10, 0], "to": [10, 10], "loss": 4, "blocks_walking": true,
                 "doors": [{"at": [10, 5], "width": 1}]},
                {"floor": 1, "from": [15, 0], "to": [15, 10], "loss": 3}
              ],
              "obstacles": [{"floor": 1, "polygon": [[4,4],[7,4],[7,6],[4,6]]}]
            }
            """)
        let counter = try parse(MapRenderer().svg(map: map))
        // The door splits its wall in two; the other wall only attenuates.
        #expect(counter.classes["wall blocking"] == 2)
        #expect(counter.classes["wall"] == 1)
        #expect(counter.classes["obstacle"] == 1)
    }

    @Test("a tag's posterior is drawn cell by cell, its zones labelled with their probabilities, and the truth marked")
    func posterior() throws {
        let map = try shippedMap("demo-office.json")
        let zones = map.zones(onFloor: 1)
        let first = try #require(zones.first)
        let second = try #require(zones.dropFirst().first)
        let posterior = TagPosterior(
            floor: 1, cellSize: 0.5,
            cells: [
                TagPosterior.Cell(centre: first.polygon.centroid, probability: 0.6),
                TagPosterior.Cell(centre: first.polygon.centroid + Point(x: 0.5, y: 0), probability: 0.299),
                TagPosterior.Cell(centre: second.polygon.centroid, probability: 0.1),
                // Under half a percent of the peak: left out of the drawing, though counted in its zone.
                TagPosterior.Cell(centre: first.polygon.centroid + Point(x: 0, y: 0.5), probability: 0.001),
            ])
        let truth = TruthRecord(time: 1, tag: .address(7), x: 3, y: 4, floor: 1)
        let svg = MapRenderer().svg(map: map, posterior: posterior, truth: [truth])
        let counter = try parse(svg)
        #expect(counter.classes["posterior-cell"] == 3)
        #expect(counter.classes["truth"] == 2, "a cross of two lines")
        let text = counter.texts.joined(separator: "|")
        #expect(text.contains("\(first.name) (p 0.9)"), "\(text)")
        #expect(text.contains("\(second.name) (p 0.1)"), "\(text)")
        #expect(text.contains("purple: the grid posterior, cells of 0.5 m"))
        // Without a posterior the zones are labelled with their counts, as before.
        #expect(!(try parse(MapRenderer().svg(map: map)).texts.joined().contains("(p ")))
    }
}
