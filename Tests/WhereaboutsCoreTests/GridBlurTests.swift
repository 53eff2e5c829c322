import Testing

@testable import WhereaboutsCore

/// The walk's blur (``GridKernels/blur(along:_:over:into:over:runFirst:runLast:gridColumns:taps:)``), one kernel
/// for both axes, on seeded random floors: runs of joined cells cut at random, random posteriors and kernels.
@Suite("The walk's blur against plain loops")
struct GridBlurTests {
    /// A random floor of `columns` × `rows` cells: each row and each column cut into runs at random, as walls and
    /// obstacles cut them (`eastRunFirst` …, as ``FloorGrid`` holds them).
    struct Floor {
        var columns: Int
        var rows: Int
        var eastRunFirst: [Int32]
        var eastRunLast: [Int32]
        var northRunFirst: [Int32]
        var northRunLast: [Int32]

        init(columns: Int, rows: Int, cuts: Double, using random: inout SplitMix64) {
            self.columns = columns
            self.rows = rows
            let count = columns * rows
            (eastRunFirst, eastRunLast, northRunFirst, northRunLast) = (
                [Int32](repeating: 0, count: count), [Int32](repeating: 0, count: count),
                [Int32](repeating: 0, count: count), [Int32](repeating: 0, count: count)
            )
            for row in 0..<rows {
                var first = 0
                for column in 0..<columns {
                    if column > 0, Double.random(in: 0..<1, using: &random) < cuts { first = column }
                    eastRunFirst[row * columns + column] = Int32(first)
                }
                var last = columns - 1
                for column in stride(from: columns - 1, through: 0, by: -1) {
                    eastRunLast[row * columns + column] = Int32(last)
                    if Int(eastRunFirst[row * columns + column]) == column { last = column - 1 }
                }
            }
            for column in 0..<columns {
                var first = 0
                for row in 0..<rows {
                    if row > 0, Double.random(in: 0..<1, using: &random) < cuts { first = row }
                    northRunFirst[row * columns + column] = Int32(first)
                }
                var last = rows - 1
                for row in stride(from: rows - 1, through: 0, by: -1) {
                    northRunLast[row * columns + column] = Int32(last)
                    if Int(northRunFirst[row * columns + column]) == row { last = row - 1 }
                }
            }
        }
    }

    /// A sampled Gaussian of `variance` cells², as the filter makes it (three exact taps when narrow).
    static func taps(variance: Double) -> [Float] {
        if variance < 0.5 {
            let side = Float(variance / 2)
            return [side, 1 - 2 * side, side]
        }
        let reach = max(Int((2.5 * variance.squareRoot()).rounded(.up)), 1)
        let values = (-reach...reach).map { exponential(-Double($0 * $0) / (2 * variance)) }
        let total = values.reduce(0, +)
        return values.map { Float($0 / total) }
    }

    /// A random case: a floor, a posterior window on it with random mass, a kernel, and the window grown by the
    /// kernel's reach (clipped to the floor) that the prediction blurs into.
    struct Case {
        var floor: Floor
        var source: CellWindow
        var mass: [Float]
        var taps: [Float]
        var target: CellWindow
        /// The first pass's window: the source's rows, the target's columns.
        var across: CellWindow {
            CellWindow(column0: target.column0, row0: source.row0, columns: target.columns, rows: source.rows)
        }

        init(seed: UInt64) {
            var random = SplitMix64(seed: seed)
            let columns = Int.random(in: 1...40, using: &random)
            let rows = Int.random(in: 1...40, using: &random)
            floor = Floor(
                columns: columns, rows: rows, cuts: [Double]([0, 0.02, 0.1, 0.4]).randomElement(using: &random) ?? 0,
                using: &random)
            let column0 = Int.random(in: 0..<columns, using: &random)
            let row0 = Int.random(in: 0..<rows, using: &random)
            source = CellWindow(
                column0: column0, row0: row0, columns: Int.random(in: 1...(columns - column0), using: &random),
                rows: Int.random(in: 1...(rows - row0), using: &random))
            // Some posteriors with a few cells of mass (rows taken cell by cell), some dense (whole shifted rows).
            let zeros = [Double]([0, 0.5, 0.95]).randomElement(using: &random) ?? 0
            mass = GridKernelsTests.values(source.count, zeros: zeros, using: &random)
            taps = GridBlurTests.taps(variance: Double.random(in: 0.05...30, using: &random))
            let reach = taps.count / 2
            let targetColumn0 = max(source.column0 - reach, 0)
            let targetRow0 = max(source.row0 - reach, 0)
            target = CellWindow(
                column0: targetColumn0, row0: targetRow0,
                columns: min(source.column0 + source.columns + reach, columns) - targetColumn0,
                rows: min(source.row0 + source.rows + reach, rows) - targetRow0)
        }

        /// Both passes through the kernel, as ``GridFilter`` predicts.
        func blurred() -> [Float] {
            var pass = [Float](repeating: 0, count: across.count)
            var next = [Float](repeating: 0, count: target.count)
            GridKernels.blur(
                along: AlongRows.self, mass, over: source, into: &pass, over: across,
                runFirst: floor.eastRunFirst, runLast: floor.eastRunLast, gridColumns: floor.columns, taps: taps)
            GridKernels.blur(
                along: AlongColumns.self, pass, over: across, into: &next, over: target,
                runFirst: floor.northRunFirst, runLast: floor.northRunLast, gridColumns: floor.columns, taps: taps)
            return next
        }
    }

    /// One pass of the blur as plainly as it can be written, in Double: each cell's mass, tap by tap, to the cell the
    /// tap lands on along the axis, reflected at the ends of the cell's run.
    static func plainPass(
        _ values: [Float], over source: CellWindow, into target: CellWindow, alongRows: Bool, floor: Floor,
        taps: [Float]
    ) -> [Double] {
        var result = [Double](repeating: 0, count: target.count)
        let reach = taps.count / 2
        for row in 0..<source.rows {
            for column in 0..<source.columns {
                let mass = values[row * source.columns + column]
                guard mass > 0 else { continue }
                let gridColumn = source.column0 + column
                let gridRow = source.row0 + row
                let cell = gridRow * floor.columns + gridColumn
                let position = alongRows ? gridColumn : gridRow
                let first = Int(alongRows ? floor.eastRunFirst[cell] : floor.northRunFirst[cell])
                let last = Int(alongRows ? floor.eastRunLast[cell] : floor.northRunLast[cell])
                for tap in taps.indices {
                    var landing = position - reach + tap
                    // Reflect until inside the run (the end cell repeated: first − 1 lands on first).
                    while landing < first || landing > last {
                        landing = landing < first ? 2 * first - 1 - landing : 2 * last + 1 - landing
                    }
                    let index =
                        alongRows
                        ? (gridRow - target.row0) * target.columns + landing - target.column0
                        : (landing - target.row0) * target.columns + gridColumn - target.column0
                    result[index] += Double(mass) * Double(taps[tap])
                }
            }
        }
        return result
    }

    @Test("each pass is within reordering error of plain loops in Double, and keeps the mass", arguments: 0..<40)
    func againstPlainLoops(seed: Int) {
        let blur = Case(seed: UInt64(seed))
        var pass = [Float](repeating: 0, count: blur.across.count)
        GridKernels.blur(
            along: AlongRows.self, blur.mass, over: blur.source, into: &pass, over: blur.across,
            runFirst: blur.floor.eastRunFirst, runLast: blur.floor.eastRunLast, gridColumns: blur.floor.columns,
            taps: blur.taps)
        let plainRows = Self.plainPass(
            blur.mass, over: blur.source, into: blur.across, alongRows: true, floor: blur.floor, taps: blur.taps)
        // A cell takes at most every tap of every cell within reach along its line, some twice when reflected.
        let terms = 2 * blur.taps.count
        for index in pass.indices {
            #expect(
                GridKernelsTests.close(pass[index], Float(plainRows[index]), terms: terms), "row pass, cell \(index)")
        }
        var next = [Float](repeating: 0, count: blur.target.count)
        GridKernels.blur(
            along: AlongColumns.self, pass, over: blur.across, into: &next, over: blur.target,
            runFirst: blur.floor.northRunFirst, runLast: blur.floor.northRunLast, gridColumns: blur.floor.columns,
            taps: blur.taps)
        let plainColumns = Self.plainPass(
            pass, over: blur.across, into: blur.target, alongRows: false, floor: blur.floor, taps: blur.taps)
        for index in next.indices {
            #expect(
                GridKernelsTests.close(next[index], Float(plainColumns[index]), terms: terms),
                "column pass, cell \(index)")
        }
        // Nothing lost at a wall or the floor's edge: the taps sum to 1 (to rounding), and so does each cell's share.
        let before = blur.mass.reduce(0.0) { $0 + Double($1) }
        let after = next.reduce(0.0) { $0 + Double($1) }
        #expect(abs(after - before) <= 1e-5 * max(before, 1))
    }

    @Test("both passes equal, bit for bit, the filter's two loops before they were one kernel", arguments: 0..<60)
    func sameAsBefore(seed: Int) {
        let blur = Case(seed: UInt64(1000 + seed))
        let before = PreviousBlur.predict(
            blur.mass, source: blur.source, target: blur.target, floor: blur.floor, taps: blur.taps)
        #expect(blur.blurred() == before)
    }
}
