import Foundation
import TestFixtures
import Testing
import WhereaboutsCalibration
import WhereaboutsCore

@Suite("The radio map's Gaussian process", .ownThread)
struct ResidualSurfaceFitTests {
    /// A smooth field of ±4 dB, like furniture and reflections make.
    static func field(_ point: Point) -> Double {
        4 * sin(point.x / 1.5) * cos(point.y / 2)
    }

    /// A lawnmower walk over the left 6 m of a 30 × 6 m floor, one sample every 0.25 m, with seeded noise of 2 dB.
    static func walk() -> [ResidualSample] {
        var generator = SplitMix64(seed: 0x5EED)
        var samples: [ResidualSample] = []
        for lane in 0..<7 {
            let y = 0.5 + Double(lane) * 0.8
            for step in 0...22 {
                let x = 0.25 + Double(step) * 0.25
                let point = Point(x: x, y: y)
                samples.append(ResidualSample(point: point, residual: field(point) + 2 * generator.nextGaussian()))
            }
        }
        return samples
    }

    @Test("a field walked over is recovered where the walk passed; far from it the prior stands")
    func recovers() throws {
        let bounds = (minimum: Point(x: 0, y: 0), maximum: Point(x: 30, y: 6))
        let surface = try #require(ResidualSurfaceFit().fit(Self.walk(), bounds: bounds, cellSize: 0.5))
        #expect(surface.columns == 60 && surface.rows == 12)
        var squares = 0.0
        var count = 0
        for row in 1..<11 {
            for column in 1..<11 {
                let centre = Point(x: (Double(column) + 0.5) * 0.5, y: (Double(row) + 0.5) * 0.5)
                let error = surface.residual(at: centre).mean - Self.field(centre)
                squares += error * error
                count += 1
            }
        }
        let rms = (squares / Double(count)).squareRoot()
        print("radio map fit: RMS error \(rms) dB over the walked area (noise 2 dB, field ±4 dB)")
        #expect(rms < 1.2)
        let walked = surface.residual(at: Point(x: 3, y: 3))
        let far = surface.residual(at: Point(x: 29.5, y: 3))  // beyond three of the longest length scales
        #expect(walked.variance < far.variance / 4)
        #expect(far.mean == 0)
        #expect(far.variance == surface.priorDeviation * surface.priorDeviation)
        #expect(surface.lengthScale != nil && surface.noiseDeviation != nil)
    }

    @Test("away from the walk the surface goes back to the trend, its deviation growing to the prior's")
    func revertsAwayFromTheSurvey() throws {
        let bounds = (minimum: Point(x: 0, y: 0), maximum: Point(x: 30, y: 6))
        let surface = try #require(ResidualSurfaceFit().fit(Self.walk(), bounds: bounds, cellSize: 0.5))
        let prior = surface.priorDeviation * surface.priorDeviation
        var previous = 0.0
        for step in 0...48 {
            // From the walk's east edge (x 5.75 m) eastward, along its middle lane.
            let residual = surface.residual(at: Point(x: 5.75 + Double(step) * 0.5, y: 2.9))
            #expect(residual.variance >= previous - 1e-6, "the variance never shrinks going away (\(step))")
            #expect(residual.variance <= prior + 1e-6)
            previous = residual.variance
        }
        let near = surface.residual(at: Point(x: 6, y: 2.9))
        let farther = surface.residual(at: Point(x: 12, y: 2.9))
        #expect(near.variance < prior / 2)
        #expect(farther.variance > 0.9 * prior)
        #expect(abs(farther.mean) < 0.5, "the mean goes back to the trend (0 dB)")
    }

    @Test("too few places, or values that are not numbers, give no surface and no crash")
    func tooLittle() {
        let bounds = (minimum: Point(x: 0, y: 0), maximum: Point(x: 4, y: 4))
        let few = (0..<50).map { ResidualSample(point: Point(x: 1 + Double($0 % 3) * 0.1, y: 1), residual: 2) }
        #expect(ResidualSurfaceFit().fit(few, bounds: bounds, cellSize: 0.5) == nil)
        let broken = (0..<50).map {
            ResidualSample(point: Point(x: Double($0) * 0.5, y: .nan), residual: .infinity)
        }
        #expect(ResidualSurfaceFit().fit(broken, bounds: bounds, cellSize: 0.5) == nil)
        #expect(ResidualSurfaceFit().fit(Self.walk(), bounds: bounds, cellSize: 0) == nil)
    }

    @Test("a long walk is pooled into a bounded number of bins")
    func bounded() throws {
        var long: [ResidualSample] = []
        for index in 0..<20_000 {
            let point = Point(x: Double(index % 200) * 0.3, y: Double(index / 200) * 0.3)
            long.append(ResidualSample(point: point, residual: Self.field(point)))
        }
        var fit = ResidualSurfaceFit()
        fit.signals = [3]
        fit.lengthScales = [2]
        fit.noises = [1.5]
        let surface = try #require(
            fit.fit(long, bounds: (minimum: Point(x: 0, y: 0), maximum: Point(x: 60, y: 30)), cellSize: 2))
        #expect(surface.columns == 30 && surface.rows == 15)
        #expect(surface.mean.allSatisfy { $0.isFinite && abs($0) < 10 })
    }
}
