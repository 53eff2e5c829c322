public import WhereaboutsCore

/// One survey measurement of how far an agent's RSSI sat from the path-loss trend: where the tag stood (truth), and
/// the residual in dB (positive: heard louder than the trend says).
public struct ResidualSample: Sendable, Hashable {
    public var point: Point
    public var residual: Double

    public init(point: Point, residual: Double) {
        self.point = point
        self.residual = residual
    }
}

/// Learns an agent's ``RadioSurface`` from survey residuals: a Gaussian process with a Matérn 3/2 kernel,
/// `k(r) = s² (1 + √3 r / ℓ) exp(−√3 r / ℓ)`, whose signal deviation `s`, length scale `ℓ` and noise deviation are
/// chosen by maximum marginal likelihood over a grid of candidates, then evaluated on a raster of cells.
///
/// Samples are pooled into bins first (``binSize``, doubled until at most ``maximumBins`` remain), so that the cost
/// does not grow with the survey's length: a bin's mean has the noise variance `σ² / min(count, 4)`, since samples
/// a few seconds apart on a slow walk are not independent. Cells farther than three length scales from every bin
/// keep the prior (mean 0, deviation `s`): the model alone speaks there.
public struct ResidualSurfaceFit: Sendable {
    /// The kernel's parameters, in dB and metres.
    public struct Hyperparameters: Sendable, Hashable {
        public var signal: Double
        public var lengthScale: Double
        public var noise: Double

        public init(signal: Double, lengthScale: Double, noise: Double) {
            self.signal = signal
            self.lengthScale = lengthScale
            self.noise = noise
        }
    }

    /// The side of a bin, in metres, before any doubling.
    public var binSize = 0.5
    /// The most bins the process is fitted on.
    public var maximumBins = 160
    /// The fewest bins worth a surface: below it, ``fit(_:bounds:cellSize:)`` returns nil.
    public var minimumBins = 8
    /// Candidates for the signal deviation, the length scale and the noise deviation.
    public var signals: [Double] = [1.5, 2.5, 3.5, 5, 7]
    public var lengthScales: [Double] = [0.75, 1.5, 3, 6]
    public var noises: [Double] = [1.5, 2.5, 4]

    public init() {}

    /// The surface over a box, or nil when the samples cover too little (fewer than ``minimumBins`` bins).
    public func fit(_ samples: [ResidualSample], bounds: (minimum: Point, maximum: Point), cellSize: Double)
        -> RadioSurface?
    {
        let bins = pooled(samples.filter { $0.residual.isFinite && $0.point.x.isFinite && $0.point.y.isFinite })
        guard bins.count >= minimumBins, cellSize > 0, cellSize.isFinite else { return nil }
        var best: (score: Double, parameters: Hyperparameters, factor: Factor)?
        for signal in signals {
            for lengthScale in lengthScales {
                for noise in noises {
                    let parameters = Hyperparameters(signal: signal, lengthScale: lengthScale, noise: noise)
                    guard let factor = Factor(bins: bins, parameters: parameters) else { continue }
                    if best.map({ factor.logLikelihood > $0.score }) ?? true {
                        best = (factor.logLikelihood, parameters, factor)
                    }
                }
            }
        }
        guard let best else { return nil }
        let columns = max(Int(((bounds.maximum.x - bounds.minimum.x) / cellSize).rounded(.up)), 1)
        let rows = max(Int(((bounds.maximum.y - bounds.minimum.y) / cellSize).rounded(.up)), 1)
        var mean = [Double](repeating: 0, count: columns * rows)
        var deviation = [Double](repeating: best.parameters.signal, count: columns * rows)
        let reach = 3 * best.parameters.lengthScale
        for row in 0..<rows {
            for column in 0..<columns {
                let centre = Point(
                    x: bounds.minimum.x + (Double(column) + 0.5) * cellSize,
                    y: bounds.minimum.y + (Double(row) + 0.5) * cellSize)
                guard bins.contains(where: { $0.point.distance(to: centre) <= reach }) else { continue }
                let prediction = best.factor.predict(at: centre)
                mean[row * columns + column] = prediction.mean
                deviation[row * columns + column] = max(prediction.variance, 0.0001).squareRoot()
            }
        }
        var surface = RadioSurface(
            origin: bounds.minimum, cellSize: cellSize, columns: columns, rows: rows, mean: mean, deviation: deviation,
            priorDeviation: best.parameters.signal)
        surface.lengthScale = best.parameters.lengthScale
        surface.noiseDeviation = best.parameters.noise
        return surface
    }

    struct Bin {
        var point: Point
        var residual: Double
        var count: Int
    }

    /// The samples pooled into square bins: each bin's mean position and residual.
    func pooled(_ samples: [ResidualSample]) -> [Bin] {
        var size = binSize > 0 && binSize.isFinite ? binSize : 0.5
        while true {
            var sums: [Int64: (x: Double, y: Double, residual: Double, count: Int)] = [:]
            for sample in samples {
                let column = Int64((sample.point.x / size).rounded(.down))
                let row = Int64((sample.point.y / size).rounded(.down))
                let key = column &* 1_000_003 &+ row
                var sum = sums[key] ?? (0, 0, 0, 0)
                sum.x += sample.point.x
                sum.y += sample.point.y
                sum.residual += sample.residual
                sum.count += 1
                sums[key] = sum
            }
            if sums.count <= maximumBins || size > 1000 {
                return sums.sorted { $0.key < $1.key }.map { _, sum in
                    let count = Double(sum.count)
                    return Bin(
                        point: Point(x: sum.x / count, y: sum.y / count), residual: sum.residual / count,
                        count: sum.count)
                }
            }
            size *= 2
        }
    }

    /// The kernel matrix's Cholesky factor for some bins and parameters, with what prediction needs.
    struct Factor {
        let bins: [Bin]
        let parameters: Hyperparameters
        /// Lower triangle, row-major, `n × n`.
        let lower: [Double]
        /// `K⁻¹ y`.
        let weights: [Double]
        let logLikelihood: Double

        init?(bins: [Bin], parameters: Hyperparameters) {
            let n = bins.count
            var matrix = [Double](repeating: 0, count: n * n)
            for row in 0..<n {
                for column in 0...row {
                    var value = Self.kernel(bins[row].point.distance(to: bins[column].point), parameters)
                    if row == column {
                        value += parameters.noise * parameters.noise / Double(min(bins[row].count, 4))
                    }
                    matrix[row * n + column] = value
                }
            }
            // Cholesky in place on the lower triangle.
            for row in 0..<n {
                for column in 0...row {
                    var sum = matrix[row * n + column]
                    for k in 0..<column { sum -= matrix[row * n + k] * matrix[column * n + k] }
                    if row == column {
                        guard sum > 0, sum.isFinite else { return nil }
                        matrix[row * n + row] = sum.squareRoot()
                    } else {
                        matrix[row * n + column] = sum / matrix[column * n + column]
                    }
                }
            }
            let y = bins.map(\.residual)
            let z = Self.forward(matrix, y, n)
            var weights = [Double](repeating: 0, count: n)
            for row in stride(from: n - 1, through: 0, by: -1) {
                var sum = z[row]
                for k in (row + 1)..<n { sum -= matrix[k * n + row] * weights[k] }
                weights[row] = sum / matrix[row * n + row]
            }
            var logDeterminant = 0.0
            for index in 0..<n { logDeterminant += 2 * naturalLog(matrix[index * n + index]) }
            let fit = z.reduce(0) { $0 + $1 * $1 }
            let likelihood = -0.5 * fit - 0.5 * logDeterminant - 0.5 * Double(n) * naturalLog(2 * Double.pi)
            guard likelihood.isFinite else { return nil }
            self.bins = bins
            self.parameters = parameters
            lower = matrix
            self.weights = weights
            logLikelihood = likelihood
        }

        /// The posterior mean and variance of the surface (without the noise) at a point.
        func predict(at point: Point) -> (mean: Double, variance: Double) {
            let n = bins.count
            let covariances = bins.map { Self.kernel($0.point.distance(to: point), parameters) }
            var mean = 0.0
            for index in 0..<n { mean += covariances[index] * weights[index] }
            let v = Self.forward(lower, covariances, n)
            let variance = parameters.signal * parameters.signal - v.reduce(0) { $0 + $1 * $1 }
            return (mean, variance)
        }

        /// Solves `L z = b` for the lower-triangular factor.
        static func forward(_ lower: [Double], _ b: [Double], _ n: Int) -> [Double] {
            var z = [Double](repeating: 0, count: n)
            for row in 0..<n {
                var sum = b[row]
                for k in 0..<row { sum -= lower[row * n + k] * z[k] }
                z[row] = sum / lower[row * n + row]
            }
            return z
        }

        static func kernel(_ distance: Double, _ parameters: Hyperparameters) -> Double {
            let scaled = 3.0.squareRoot() * distance / parameters.lengthScale
            return parameters.signal * parameters.signal * (1 + scaled) * exponential(-scaled)
        }
    }
}
