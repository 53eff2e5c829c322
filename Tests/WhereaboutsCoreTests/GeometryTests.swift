import Testing
import WhereaboutsCore

@Suite("Geometry")
struct GeometryTests {
    let square = Polygon([Point(x: 0, y: 0), Point(x: 4, y: 0), Point(x: 4, y: 4), Point(x: 0, y: 4)])
    // An L shape: the notch (2…4, 2…4) is outside.
    let ell = Polygon([
        Point(x: 0, y: 0), Point(x: 4, y: 0), Point(x: 4, y: 2), Point(x: 2, y: 2), Point(x: 2, y: 4),
        Point(x: 0, y: 4),
    ])

    @Test("point in polygon: inside, outside, on the boundary, in a concave notch")
    func pointInPolygon() {
        #expect(square.contains(Point(x: 2, y: 2)))
        #expect(!square.contains(Point(x: 5, y: 2)))
        #expect(!square.contains(Point(x: -0.001, y: 2)))
        #expect(square.contains(Point(x: 0, y: 2)))
        #expect(square.contains(Point(x: 4, y: 4)))
        #expect(ell.contains(Point(x: 1, y: 3)))
        #expect(ell.contains(Point(x: 3, y: 1)))
        #expect(!ell.contains(Point(x: 3, y: 3)))
    }

    @Test("area, centroid and signed distance")
    func measures() {
        #expect(square.area == 16)
        #expect(ell.area == 12)
        #expect(square.centroid == Point(x: 2, y: 2))
        #expect(abs(square.signedDistance(Point(x: 1, y: 2)) - 1) < 1e-12)
        #expect(abs(square.signedDistance(Point(x: 6, y: 2)) + 2) < 1e-12)
    }

    @Test("clamping keeps inside points and brings outside points just inside")
    func clamping() {
        #expect(square.clamped(Point(x: 1, y: 1)) == Point(x: 1, y: 1))
        let clamped = square.clamped(Point(x: 10, y: 2))
        #expect(square.contains(clamped))
        #expect(abs(clamped.x - 4) < 0.1 && abs(clamped.y - 2) < 0.1)
        let fromNotch = ell.clamped(Point(x: 3.5, y: 2.2))
        #expect(ell.contains(fromNotch))
        #expect(fromNotch.distance(to: Point(x: 3.5, y: 2.2)) < 0.3)
    }

    @Test("self-intersection: a bow tie and a fold-back are caught, simple shapes are not")
    func selfIntersection() {
        let bowTie = Polygon([Point(x: 0, y: 0), Point(x: 2, y: 2), Point(x: 2, y: 0), Point(x: 0, y: 2)])
        #expect(bowTie.isSelfIntersecting)
        let foldBack = Polygon([Point(x: 0, y: 0), Point(x: 4, y: 0), Point(x: 2, y: 0), Point(x: 2, y: 3)])
        #expect(foldBack.isSelfIntersecting)
        #expect(!square.isSelfIntersecting)
        #expect(!ell.isSelfIntersecting)
    }

    @Test("overlap and enclosure: sharing an edge is not overlap; a notch is not enclosed")
    func overlapAndEnclosure() {
        let right = Polygon([Point(x: 4, y: 0), Point(x: 8, y: 0), Point(x: 8, y: 4), Point(x: 4, y: 4)])
        #expect(!square.overlaps(right))
        let shifted = Polygon([Point(x: 3, y: 1), Point(x: 7, y: 1), Point(x: 7, y: 3), Point(x: 3, y: 3)])
        #expect(square.overlaps(shifted))
        let inner = Polygon([Point(x: 1, y: 1), Point(x: 2, y: 1), Point(x: 2, y: 2), Point(x: 1, y: 2)])
        #expect(square.overlaps(inner))
        #expect(square.encloses(inner))
        let acrossNotch = Polygon([Point(x: 1, y: 1), Point(x: 3.5, y: 1), Point(x: 3.5, y: 3.5), Point(x: 1, y: 3.5)])
        #expect(!ell.encloses(acrossNotch))
        #expect(square.overlaps(square))
    }
}
