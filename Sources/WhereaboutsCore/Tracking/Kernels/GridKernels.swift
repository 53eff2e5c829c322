/// The grid filter's hot loops, written once each and tested against plain loops (`GridKernelsTests`): the walk's
/// blur (``blur(along:_:over:into:over:runFirst:runLast:gridColumns:taps:)``), the weighing of readings
/// (``weigh(_:tables:window:offset:priorPrecision:penalty:floor:into:)``), and the sums, maxima, moments and window
/// copies around them.
///
/// The model (``GridFilter``) says what is computed, in the words of docs/tracker.md; these say how, fast: four lanes
/// at a time, through buffer pointers, without bounds checks. Unsafe pointers live here and nowhere else in the
/// tracker. Floating-point sums depend on their order, and each kernel keeps the order the filter has always used,
/// so its results are the same bit for bit.
enum GridKernels {
    /// Calls `body` with the grid at `index` of `grids`, borrowed, not copied: a copy of a floor's grid retained and
    /// released each of its arrays, every update. (`borrowing`: with a plain parameter the optimiser still copied
    /// the grid out of the buffer once the update was inlined into its caller, 3 % of the engine bench.)
    static func borrow<Result>(
        _ index: Int, of grids: [FloorGrid], _ body: (borrowing FloorGrid) -> Result
    ) -> Result {
        grids.withUnsafeBufferPointer { buffer in body(buffer[index]) }
    }

    /// Makes the first `count` values of `buffer` `value`, growing it when it is shorter.
    static func fill(_ buffer: inout [Float], count: Int, with value: Float) {
        if buffer.count < count {
            buffer = [Float](repeating: value, count: count)
            return
        }
        buffer.withUnsafeMutableBufferPointer { b in
            for index in 0..<count { b[index] = value }
        }
    }

    /// Multiplies the first `count` values of `buffer` by `factor`.
    static func scale(_ buffer: inout [Float], count: Int, by factor: Float) {
        buffer.withUnsafeMutableBufferPointer { b in
            for index in 0..<count { b[index] *= factor }
        }
    }

    /// Copies the first `count` values of `source` over those of `target`.
    static func copy(_ source: [Float], count: Int, into target: inout [Float]) {
        source.withUnsafeBufferPointer { source in
            target.withUnsafeMutableBufferPointer { target in
                for index in 0..<count { target[index] = source[index] }
            }
        }
    }

    /// Moves the cells of `box` (in `window`'s cells) to the front of `buffer`, row by row: `buffer` then starts
    /// with the box's cells, a row of `box.columns` after another. Towards the front, a cell never moves to a later
    /// index, so nothing is overwritten unread.
    static func compact(_ box: CellWindow, of window: CellWindow, in buffer: inout [Float]) {
        buffer.withUnsafeMutableBufferPointer { p in
            for row in 0..<box.rows {
                let from = (box.row0 + row) * window.columns + box.column0
                let to = row * box.columns
                for column in 0..<box.columns { p[to + column] = p[from + column] }
            }
        }
    }

    /// Appends the cells of `box` (in `window`'s cells) of `source` to `target`, row by row.
    static func append(_ box: CellWindow, of window: CellWindow, from source: [Float], to target: inout [Float]) {
        source.withUnsafeBufferPointer { p in
            for row in box.row0..<box.row0 + box.rows {
                let base = row * window.columns
                target.append(
                    contentsOf: UnsafeBufferPointer(rebasing: p[base + box.column0..<base + box.column0 + box.columns]))
            }
        }
    }

    /// The sum of the first `count` values, four lanes at a time (lane by lane, then the lanes added, then the
    /// rest one by one: the order is part of the result).
    static func sum(_ values: [Float], count: Int) -> Float {
        values.withUnsafeBufferPointer { sum(UnsafeBufferPointer(rebasing: $0[0..<count])) }
    }

    /// The largest of the first `count` values (0 when there are none: they are probabilities).
    static func largest(_ values: [Float], count: Int) -> Float {
        values.withUnsafeBufferPointer { largest(UnsafeBufferPointer(rebasing: $0[0..<count])) }
    }

    /// The largest of the first `count` of `values` among the cells whose `mass` is above 0; −∞ when there is none.
    static func largest(_ values: [Float], whereAbove0 mass: [Float], count: Int) -> Float {
        values.withUnsafeBufferPointer { values in
            mass.withUnsafeBufferPointer { mass in
                largest(
                    UnsafeBufferPointer(rebasing: values[0..<count]),
                    whereAbove0: UnsafeBufferPointer(rebasing: mass[0..<count]))
            }
        }
    }

    /// The sum of `values`, four lanes at a time.
    @inline(__always)
    static func sum(_ values: UnsafeBufferPointer<Float>) -> Float {
        var lanes = SIMD4<Float>.zero
        let whole = values.count & ~3
        var index = 0
        while index < whole {
            lanes += SIMD4(values[index], values[index &+ 1], values[index &+ 2], values[index &+ 3])
            index &+= 4
        }
        var result = lanes.sum()
        while index < values.count {
            result += values[index]
            index &+= 1
        }
        return result
    }

    /// The largest of `values` (0 when there are none: they are probabilities).
    @inline(__always)
    static func largest(_ values: UnsafeBufferPointer<Float>) -> Float {
        var lanes = SIMD4<Float>.zero
        let whole = values.count & ~3
        var index = 0
        while index < whole {
            let value = SIMD4(values[index], values[index &+ 1], values[index &+ 2], values[index &+ 3])
            lanes.replace(with: value, where: value .> lanes)
            index &+= 4
        }
        var result = lanes.max()
        while index < values.count {
            result = max(result, values[index])
            index &+= 1
        }
        return result
    }

    /// The largest of `values` among the cells whose `mass` is above 0; −∞ when there is none.
    @inline(__always)
    static func largest(_ values: UnsafeBufferPointer<Float>, whereAbove0 mass: UnsafeBufferPointer<Float>) -> Float {
        var lanes = SIMD4<Float>(repeating: -.infinity)
        let whole = values.count & ~3
        let none = SIMD4<Float>(repeating: -.infinity)
        var index = 0
        while index < whole {
            let value = SIMD4(values[index], values[index &+ 1], values[index &+ 2], values[index &+ 3])
            let weight = SIMD4(mass[index], mass[index &+ 1], mass[index &+ 2], mass[index &+ 3])
            let candidate = none.replacing(with: value, where: weight .> 0)
            lanes.replace(with: candidate, where: candidate .> lanes)
            index &+= 4
        }
        var result = lanes.max()
        while index < values.count {
            if mass[index] > 0 { result = max(result, values[index]) }
            index &+= 1
        }
        return result
    }

    /// Σp, Σp·d, Σp·d², Σp·r over the cells, and the largest p, four lanes at a time (a plain loop would add one
    /// cell at a time: floating point sums are not reordered for us).
    @inline(__always)
    static func weightedMoments(
        _ p: UnsafeBufferPointer<Float>,
        _ d: UnsafeBufferPointer<Float>,
        _ r: UnsafeBufferPointer<Float>
    ) -> (moments: SIMD4<Float>, largest: Float) {
        var largest = SIMD4<Float>.zero
        var total = SIMD4<Float>.zero
        var first = SIMD4<Float>.zero
        var second = SIMD4<Float>.zero
        var precision = SIMD4<Float>.zero
        let whole = p.count & ~3
        var index = 0
        while index < whole {
            let mass = SIMD4(p[index], p[index &+ 1], p[index &+ 2], p[index &+ 3])
            let delta = SIMD4(d[index], d[index &+ 1], d[index &+ 2], d[index &+ 3])
            let readings = SIMD4(r[index], r[index &+ 1], r[index &+ 2], r[index &+ 3])
            let weighted = mass * delta
            largest.replace(with: mass, where: mass .> largest)
            total += mass
            first += weighted
            second += weighted * delta
            precision += mass * readings
            index &+= 4
        }
        var result = SIMD4(total.sum(), first.sum(), second.sum(), precision.sum())
        var peak = largest.max()
        while index < p.count {
            result += SIMD4(p[index], p[index] * d[index], p[index] * d[index] * d[index], p[index] * r[index])
            peak = max(peak, p[index])
            index &+= 1
        }
        return (result, peak)
    }

    /// `index` folded into `first...last` by reflection at the ends, as often as it takes.
    @inline(__always)
    static func fold(_ index: Int, _ first: Int, _ last: Int) -> Int {
        if index >= first, index <= last { return index }
        let length = last - first + 1
        // Once past an end, the usual case near a wall or the grid's edge: the same index, without a division.
        if index < first, first - index <= length { return 2 * first - 1 - index }
        if index > last, index - last <= length { return 2 * last + 1 - index }
        var offset = (index - first) % (2 * length)
        if offset < 0 { offset += 2 * length }
        if offset >= length { offset = 2 * length - 1 - offset }
        return first + offset
    }

    /// e to the power `x` for x ≤ 0, to about 1e-7 relative; e^−87 below −87 (2^n stays a normal float). Inlined,
    /// unlike `expf`, which matters once per cell per update.
    @inline(__always)
    static func exponential(_ x: Float) -> Float {
        // e^x = 2^(x·log2 e) = 2^n · 2^f, n an integer, f in [−0.5, 0.5]. Adding 1.5 × 2^23 rounds t to an integer
        // and leaves it in the low bits, so that no conversion (which checks its range, and stops vectorisation) is
        // needed.
        let t = max(x, -87) * 1.442_695_04
        let shifted = t + 12_582_912
        let f = t - (shifted - 12_582_912)
        // 2^f by its Taylor series in f·ln 2, to the sixth power.
        let u = f * 0.693_147_18
        let p =
            1 + u * (1 + u * (0.5 + u * (0.166_666_67 + u * (0.041_666_668 + u * (0.008_333_334 + u * 0.001_388_889)))))
        return p * Float(bitPattern: (shifted.bitPattern &- 0x4B40_0000 &+ 127) &<< 23)
    }
}
