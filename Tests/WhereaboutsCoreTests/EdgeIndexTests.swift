import Foundation
import TestFixtures
import Testing
import WhereaboutsCore

/// The plain answers, edge by edge, that the indexed polygon must give too.
enum BruteForce {
    static func contains(_ vertices: [Point], _ point: Point) -> Bool {
        var inside = false
        var previous = vertices.count - 1
        for current in vertices.indices {
            let a = vertices[current]
            let b = vertices[previous]
            if Segment(a, b).distance(to: point) < 1e-9 { return true }
            if (a.y > point.y) != (b.y > point.y), point.x < a.x + (point.y - a.y) / (b.y - a.y) * (b.x - a.x) {
                inside.toggle()
            }
            previous = current
        }
        return inside
    }

    /// Whether two edges that are not neighbours touch (the seeded shapes below never fold neighbours back).
    static func crosses(_ vertices: [Point]) -> Bool {
        let count = vertices.count
        let edges = vertices.indices.map { Segment(vertices[$0], vertices[($0 + 1) % count]) }
        for i in 0..<count {
            for j in (i + 2)..<max(count, i + 2) where !(i == 0 && j == count - 1) && edges[i].intersects(edges[j]) {
                return true
            }
        }
        return false
    }
}

@Suite("Indexed polygons", .ownThread)
struct EdgeIndexTests {
    /// A star-shaped outline around (50, 50): simple unless `jitter` makes radii cross.
    func star(_ count: Int, jitter: Double, using generator: inout SplitMix64) -> [Point] {
        (0..<count).map { index in
            let angle =
                2 * Double.pi * (Double(index) + Double.random(in: -jitter...jitter, using: &generator))
                / Double(count)
            let radius = Double.random(in: 10...40, using: &generator)
            return Point(x: 50 + radius * cos(angle), y: 50 + radius * sin(angle))
        }
    }

    @Test("containment, crossings, overlap and enclosure agree with the edge-by-edge answers (seeded)")
    func agreesWithBruteForce() {
        var generator = SplitMix64(seed: 0xED6E)
        var crossingShapes = 0
        for round in 0..<200 {
            let count = Int.random(in: 32...300, using: &generator)
            // Most shapes are simple; a large angular jitter makes some cross themselves.
            let vertices = star(count, jitter: round % 4 == 0 ? 3 : 0.4, using: &generator)
            let polygon = Polygon(vertices)
            let crosses = BruteForce.crosses(vertices)
            if crosses { crossingShapes += 1 }
            #expect(polygon.isSelfIntersecting == crosses, "round \(round)")
            for _ in 0..<50 {
                let point = Point(
                    x: Double.random(in: 0...100, using: &generator), y: Double.random(in: 0...100, using: &generator))
                #expect(polygon.contains(point) == BruteForce.contains(vertices, point), "round \(round) \(point)")
            }
            for vertex in vertices.prefix(5) { #expect(polygon.contains(vertex)) }
            let square = Polygon([
                Point(x: 48, y: 48), Point(x: 52, y: 48), Point(x: 52, y: 52), Point(x: 48, y: 52),
            ])
            let plainSquare = Polygon(square.vertices)
            if !crosses {
                #expect(
                    polygon.encloses(square)
                        == (BruteForce.contains(vertices, Point(x: 48, y: 48))
                            && vertices.indices.allSatisfy { i in
                                square.edges.allSatisfy {
                                    !$0.properlyIntersects(Segment(vertices[i], vertices[(i + 1) % count]))
                                }
                            } && square.vertices.allSatisfy { BruteForce.contains(vertices, $0) }))
                #expect(polygon.overlaps(plainSquare) == plainSquare.overlaps(polygon))
            }
        }
        #expect(crossingShapes > 10, "the seeded shapes must include self-crossing ones")
    }

    @Test("a 64,000-vertex outline answers like its plain self")
    func largeOutline() {
        let count = 64_000
        let vertices = (0..<count).map { index -> Point in
            let angle = 2 * Double.pi * Double(index) / Double(count)
            let radius = 50 * (1 + 0.02 * sin(37 * angle))
            return Point(x: 60 + radius * cos(angle), y: 60 + radius * sin(angle))
        }
        let outline = Polygon(vertices)
        #expect(!outline.isSelfIntersecting)
        #expect(outline.contains(Point(x: 60, y: 60)))
        #expect(!outline.contains(Point(x: 112, y: 60)))
        #expect(outline.encloses(Polygon([Point(x: 50, y: 50), Point(x: 60, y: 50), Point(x: 60, y: 60)])))
        var crossed = vertices
        crossed.swapAt(100, 31_000)
        #expect(Polygon(crossed).isSelfIntersecting)
    }
}
