public import WhereaboutsCore

/// One RSSI sample for the path-loss fit: a transmitter heard by an agent at a known distance.
public struct PathLossObservation: Sendable, Hashable {
    /// The transmitter's index among the fit's transmitters (tags, or agents' beacons).
    public var transmitter: Int
    /// The receiving agent's index in the map.
    public var receiver: Int
    /// The 3-D distance between the antennas, metres.
    public var distance: Double
    /// The raw RSSI (before the agent's offset), dBm: a single advert or a window's mean.
    public var rssi: Double
    /// The variance of `rssi` around the model's value, dB² (model error plus the noise left in the mean).
    public var variance: Double
    /// When (Unix seconds); used to split the data into time blocks.
    public var time: Double
    /// Where the transmitter stood on the receiver's floor, when known (a survey with truth): the radio map's input.
    public var position: Point?

    public init(
        transmitter: Int,
        receiver: Int,
        distance: Double,
        rssi: Double,
        variance: Double,
        time: Double,
        position: Point? = nil
    ) {
        self.transmitter = transmitter
        self.receiver = receiver
        self.distance = distance
        self.rssi = rssi
        self.variance = variance
        self.time = time
        self.position = position
    }
}

/// A fitted quantity's Gaussian prior, its bounds, and whether it is held at its prior instead of fitted.
public struct ParameterPrior: Sendable, Hashable {
    /// The value the fit is pulled toward (and held at when `fixed`).
    public var mean: Double
    /// How strongly: the prior's standard deviation.
    public var sigma: Double
    /// The allowed values.
    public var bounds: ClosedRange<Double>
    /// Whether the value is held at `mean` (clamped to `bounds`) rather than fitted.
    public var fixed: Bool

    public init(mean: Double, sigma: Double, bounds: ClosedRange<Double>, fixed: Bool = false) {
        self.mean = mean
        self.sigma = sigma
        self.bounds = bounds
        self.fixed = fixed
    }
}

/// The log-distance model's RSSI before the agent's offset: `P1m − 10 n log10(d) − offset`.
public func expectedRawRSSI(power: Double, offset: Double, exponent: Double, distance: Double) -> Double {
    power - 10 * exponent * logarithm10(max(distance, 0.1)) - offset
}

/// A robust, bounded, regularised fit of the path-loss constants: each transmitter's power, each agent's offset
/// and exponent.
///
/// The model `rssi = P_t − o_a − 10 n_a log10(d)` is linear in the unknowns, so each step is a weighted least
/// squares with Gaussian priors (normal equations, Cholesky). Around it:
/// - **Robust**: iteratively reweighted with Huber's weights on the standardised residuals, scaled by their
///   median absolute deviation, so that a blocked path or a reflection counts linearly, not squared.
/// - **Bounded**: a value that leaves its bounds is held at the bound and the rest refitted (an active set).
/// - **Regularised**: the priors keep a value the data hardly constrains near its default.
struct PathLossRegression: Sendable {
    /// The fitted values.
    struct Solution: Sendable, Equatable {
        var powers: [Double]
        var offsets: [Double]
        var exponents: [Double]
        /// The robust standard deviation of the standardised residuals (about 1 when the variances were right).
        var scale: Double
        /// Each power's posterior standard deviation, dB (priors included); nil for a power held fixed or at a bound.
        var powerDeviations: [Double?] = []
    }

    var powers: [ParameterPrior]
    var offsets: [ParameterPrior]
    var exponents: [ParameterPrior]
    var huberThreshold = 1.5
    var maximumIterations = 30

    /// Fits the observations. Observations naming a transmitter or receiver out of range are ignored.
    func solve(_ input: [PathLossObservation]) -> Solution {
        let observations = input.filter { observation in
            powers.indices.contains(observation.transmitter) && offsets.indices.contains(observation.receiver)
                && observation.distance.isFinite && observation.distance > 0 && observation.rssi.isFinite
                && observation.variance.isFinite && observation.variance > 0
        }
        let priors = powers + offsets + exponents
        var fixed = priors.map(\.fixed)
        var values = priors.map { prior in min(max(prior.mean, prior.bounds.lowerBound), prior.bounds.upperBound) }
        var robustWeights = [Double](repeating: 1, count: observations.count)
        var scale = 1.0
        let logDistances = observations.map { logarithm10(max($0.distance, 0.1)) }

        for _ in 0..<maximumIterations {
            let system = normalEquations(
                observations, logDistances: logDistances, priors: priors, values: values, fixed: fixed,
                weights: robustWeights, scale: scale)
            guard let solution = SymmetricSolver.solve(system.matrix, system.vector) else { break }
            let step = take(solution, for: system.free, priors: priors, values: &values, fixed: &fixed)
            let newScale = reweight(
                &robustWeights, standardized: standardizedResiduals(observations, logDistances, values: values))
            let scaleChange = abs(newScale - scale)
            scale = newScale
            if !step.clamped, step.change < 1e-5, scaleChange < 1e-5 { break }
        }
        let system = normalEquations(
            observations, logDistances: logDistances, priors: priors, values: values, fixed: fixed,
            weights: robustWeights, scale: scale)
        return Solution(
            powers: Array(values[powerBase..<offsetBase]),
            offsets: Array(values[offsetBase..<exponentBase]),
            exponents: Array(values[exponentBase...]),
            scale: scale,
            powerDeviations: powerDeviations(system)
        )
    }

    /// The powers' posterior deviations: the diagonal of the inverse of the last step's normal matrix (the
    /// observations' weights and the priors' precisions), one solve per free power.
    private func powerDeviations(_ system: (matrix: [Double], vector: [Double], free: [Int])) -> [Double?] {
        var deviations = [Double?](repeating: nil, count: powers.count)
        for (row, index) in system.free.enumerated() where index < offsetBase {
            var unit = [Double](repeating: 0, count: system.free.count)
            unit[row] = 1
            guard let column = SymmetricSolver.solve(system.matrix, unit), column[row] > 0, column[row].isFinite
            else { continue }
            deviations[index - powerBase] = column[row].squareRoot()
        }
        return deviations
    }

    // Where each kind of value starts in the one vector of all values: powers, then offsets, then exponents.
    private var powerBase: Int { 0 }
    private var offsetBase: Int { powers.count }
    private var exponentBase: Int { powers.count + offsets.count }

    /// One weighted least-squares step: the normal equations over the free values (`free` lists them, one per
    /// row), with the fixed ones moved to the right-hand side and each free value's prior added.
    private func normalEquations(
        _ observations: [PathLossObservation], logDistances: [Double], priors: [ParameterPrior], values: [Double],
        fixed: [Bool], weights robustWeights: [Double], scale: Double
    ) -> (matrix: [Double], vector: [Double], free: [Int]) {
        var column = [Int](repeating: -1, count: priors.count)
        var free: [Int] = []
        for index in priors.indices where !fixed[index] {
            column[index] = free.count
            free.append(index)
        }
        let n = free.count
        var matrix = [Double](repeating: 0, count: n * n)
        var vector = [Double](repeating: 0, count: n)
        for (i, observation) in observations.enumerated() {
            let weight = robustWeights[i] / (observation.variance * scale * scale)
            let terms = [
                (powerBase + observation.transmitter, 1.0),
                (offsetBase + observation.receiver, -1.0),
                (exponentBase + observation.receiver, -10 * logDistances[i]),
            ]
            var target = observation.rssi
            for (index, coefficient) in terms where fixed[index] { target -= coefficient * values[index] }
            for (rowIndex, rowCoefficient) in terms where !fixed[rowIndex] {
                let row = column[rowIndex]
                vector[row] += weight * rowCoefficient * target
                for (columnIndex, columnCoefficient) in terms where !fixed[columnIndex] {
                    matrix[row * n + column[columnIndex]] += weight * rowCoefficient * columnCoefficient
                }
            }
        }
        for (row, index) in free.enumerated() {
            let precision = 1 / (priors[index].sigma * priors[index].sigma)
            matrix[row * n + row] += precision
            vector[row] += precision * priors[index].mean
        }
        return (matrix, vector, free)
    }

    /// Takes a step's solution for the free values; a value out of its bounds is held at the bound from now on
    /// (the active set). Returns the largest change and whether any value was clamped.
    private func take(
        _ solution: [Double], for free: [Int], priors: [ParameterPrior], values: inout [Double], fixed: inout [Bool]
    ) -> (change: Double, clamped: Bool) {
        var change = 0.0
        var clamped = false
        for (row, index) in free.enumerated() {
            let bounds = priors[index].bounds
            var value = solution[row]
            if value < bounds.lowerBound || value > bounds.upperBound {
                value = min(max(value, bounds.lowerBound), bounds.upperBound)
                fixed[index] = true
                clamped = true
            }
            change = max(change, abs(value - values[index]))
            values[index] = value
        }
        return (change, clamped)
    }

    /// The observations' residuals against `values`, each over its standard deviation.
    private func standardizedResiduals(
        _ observations: [PathLossObservation], _ logDistances: [Double], values: [Double]
    ) -> [Double] {
        var standardized: [Double] = []
        standardized.reserveCapacity(observations.count)
        for (i, observation) in observations.enumerated() {
            let predicted =
                values[powerBase + observation.transmitter] - values[offsetBase + observation.receiver] - 10
                * values[exponentBase + observation.receiver] * logDistances[i]
            standardized.append((observation.rssi - predicted) / observation.variance.squareRoot())
        }
        return standardized
    }

    /// Huber's weights for the standardised residuals, scaled by their median absolute deviation; returns that
    /// scale.
    private func reweight(_ robustWeights: inout [Double], standardized: [Double]) -> Double {
        let newScale = min(max(1.4826 * (median(standardized.map(abs)) ?? 1), 1e-3), 1e3)
        for i in standardized.indices {
            let u = abs(standardized[i]) / newScale
            robustWeights[i] = u <= huberThreshold ? 1 : huberThreshold / u
        }
        return newScale
    }
}
