/// Solves `H x = g` for a symmetric positive definite `H` (normal equations with priors) by Cholesky
/// factorisation. Small dense systems only: a calibration has a few parameters per agent and tag.
enum SymmetricSolver {
    /// The solution, or nil when `H` is not positive definite (or holds non-finite values).
    ///
    /// - Parameter matrix: `n × n`, row-major.
    static func solve(_ matrix: [Double], _ vector: [Double]) -> [Double]? {
        let n = vector.count
        guard matrix.count == n * n else { return nil }
        var lower = [Double](repeating: 0, count: n * n)
        for row in 0..<n {
            for column in 0...row {
                var sum = matrix[row * n + column]
                for k in 0..<column { sum -= lower[row * n + k] * lower[column * n + k] }
                if row == column {
                    guard sum > 0, sum.isFinite else { return nil }
                    lower[row * n + row] = sum.squareRoot()
                } else {
                    lower[row * n + column] = sum / lower[column * n + column]
                }
            }
        }
        var y = [Double](repeating: 0, count: n)
        for row in 0..<n {
            var sum = vector[row]
            for k in 0..<row { sum -= lower[row * n + k] * y[k] }
            y[row] = sum / lower[row * n + row]
        }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var sum = y[row]
            for k in (row + 1)..<n { sum -= lower[k * n + row] * x[k] }
            x[row] = sum / lower[row * n + row]
        }
        return x.allSatisfy(\.isFinite) ? x : nil
    }
}
