import Testing

@testable import WhereaboutsCore

/// The grid filter's kernels against plain loops on seeded random inputs.
///
/// Where a kernel adds in the same order as the plain loop (elementwise work, maxima, the weighing, whose four lanes
/// are four independent cells), the results must be equal bit for bit. Where it adds in another order (four lanes,
/// then the lanes; the blur's whole shifted rows), floating-point rounding differs, and each result must be within
/// what reordering a sum of non-negative terms can change: 2·n·ε of the sum, n the number of terms, ε
/// `Float.ulpOfOne` (each order's rounding error is at most (n − 1)·ε of the sum of the terms' magnitudes).
@Suite("The grid filter's kernels against plain loops")
struct GridKernelsTests {
    /// Uniform in 0..<1, with about `zeros` of the values exactly 0 (cells without mass).
    static func values(_ count: Int, zeros: Double = 0.3, using random: inout SplitMix64) -> [Float] {
        (0..<count).map { _ in
            Double.random(in: 0..<1, using: &random) < zeros ? 0 : Float.random(in: 0..<1, using: &random)
        }
    }

    /// Whether `value` is within reordering error of `reference`, a sum of `terms` non-negative terms.
    static func close(_ value: Float, _ reference: Float, terms: Int) -> Bool {
        abs(value - reference) <= 2 * Float(max(terms, 1)) * Float.ulpOfOne * abs(reference)
            + Float.leastNormalMagnitude
    }

    // MARK: - Sums and maxima

    @Test("sum: within reordering error of a plain loop", arguments: [0, 1, 3, 4, 5, 17, 64, 1001])
    func sum(count: Int) {
        var random = SplitMix64(seed: UInt64(100 + count))
        for _ in 0..<20 {
            let values = Self.values(count + 3, using: &random)
            var reference: Float = 0
            for index in 0..<count { reference += values[index] }
            #expect(Self.close(GridKernels.sum(values, count: count), reference, terms: count))
        }
    }

    @Test("largest, and largest where the mass is above 0: equal to a plain loop", arguments: [0, 1, 3, 4, 7, 64, 999])
    func largest(count: Int) {
        var random = SplitMix64(seed: UInt64(200 + count))
        for _ in 0..<20 {
            let values = Self.values(count, using: &random)
            let mass = Self.values(count, zeros: 0.5, using: &random)
            let logs = values.map { -100 * $0 }
            var reference: Float = 0
            var masked = -Float.infinity
            for index in 0..<count {
                reference = max(reference, values[index])
                if mass[index] > 0 { masked = max(masked, logs[index]) }
            }
            #expect(GridKernels.largest(values, count: count) == reference)
            #expect(GridKernels.largest(logs, whereAbove0: mass, count: count) == masked)
        }
    }

    @Test("weighted moments: within reordering error of plain sums; the peak equal", arguments: [1, 2, 4, 9, 100, 777])
    func weightedMoments(count: Int) {
        var random = SplitMix64(seed: UInt64(300 + count))
        for _ in 0..<20 {
            let p = Self.values(count, using: &random)
            let d = Self.values(count, zeros: 0, using: &random).map { 20 * $0 }
            let r = Self.values(count, zeros: 0, using: &random).map { 3 * $0 }
            var reference = SIMD4<Float>.zero
            var peak: Float = 0
            for index in 0..<count {
                reference += SIMD4(p[index], p[index] * d[index], p[index] * d[index] * d[index], p[index] * r[index])
                peak = max(peak, p[index])
            }
            let (moments, largest) = p.withUnsafeBufferPointer { p in
                d.withUnsafeBufferPointer { d in
                    r.withUnsafeBufferPointer { r in GridKernels.weightedMoments(p, d, r) }
                }
            }
            for lane in 0..<4 { #expect(Self.close(moments[lane], reference[lane], terms: count)) }
            #expect(largest == peak)
        }
    }

    // MARK: - Small pieces

    /// The series is good to about 1e-7; x·log2 e, rounded to a Float, is off by up to |x|·ε/2 of a power of 2, and
    /// so the result by up to ln 2·|x|·ε/2 relative more (1.4·|x|·ε bounds both roundings of the reduction).
    @Test("exponential: within 2e-7 + 1.4·|x|·ε of e^x relative, for x from 0 down to −87; e^−87 below")
    func fastExponential() {
        var random = SplitMix64(seed: 400)
        for _ in 0..<10_000 {
            let x = -Float.random(in: 0...87, using: &random)
            let reference = exponential(Double(x))
            let value = Double(GridKernels.exponential(x))
            let tolerance = 2e-7 + 1.4 * Double(abs(x)) * Double(Float.ulpOfOne)
            #expect(abs(value - reference) <= tolerance * reference, "e^\(x)")
        }
        #expect(GridKernels.exponential(-200) == GridKernels.exponential(-87))
        #expect(GridKernels.exponential(0) == 1)
    }

    @Test("fold: the cell a walk from the run's first cell reaches, turning back at each end (the end cell repeated)")
    func reflection() {
        for first in 0..<4 {
            for last in first..<first + 6 {
                for index in (first - 30)...(last + 30) {
                    var position = first
                    var facing = index >= first ? 1 : -1
                    for _ in 0..<abs(index - first) {
                        if position + facing > last || position + facing < first {
                            facing = -facing
                        } else {
                            position += facing
                        }
                    }
                    #expect(GridKernels.fold(index, first, last) == position, "\(index) in \(first)...\(last)")
                }
            }
        }
    }

    @Test("box: the first and last rows and columns at the threshold, as a scan of every cell finds them")
    func box() {
        var random = SplitMix64(seed: 500)
        for _ in 0..<300 {
            let columns = Int.random(in: 1...12, using: &random)
            let rows = Int.random(in: 1...12, using: &random)
            let values = Self.values(columns * rows, zeros: 0.7, using: &random).map { $0 * $0 * $0 }
            let ratio = Float.random(in: 0.01...0.9, using: &random)
            let peak = values.max() ?? 0
            var reference: (left: Int, right: Int, top: Int, bottom: Int)?
            if peak > 0 {
                var box = (left: columns, right: -1, top: rows, bottom: -1)
                for row in 0..<rows {
                    for column in 0..<columns where values[row * columns + column] >= peak * ratio {
                        box = (
                            min(box.left, column), max(box.right, column), min(box.top, row), max(box.bottom, row)
                        )
                    }
                }
                reference = box
            }
            let found = GridKernels.box(of: values, columns: columns, rows: rows, ratio: ratio, peak: nil)
            #expect(
                found.map { [$0.left, $0.right, $0.top, $0.bottom] }
                    == reference.map { [$0.left, $0.right, $0.top, $0.bottom] })
        }
    }
}
