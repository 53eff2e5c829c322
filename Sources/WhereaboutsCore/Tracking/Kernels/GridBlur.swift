/// An axis the walk's blur runs along: a cell's position on it, and where the cells of a line along it lie in a
/// window's buffer (row by row).
protocol BlurAxis {
    /// The position along the axis of the cell at (`column`, `row`) on the grid.
    static func position(column: Int, row: Int) -> Int
    /// The index in `window`'s buffer of the cell at position 0 of the line along the axis through (`column`, `row`)
    /// (outside the window, usually): the cell at position q of that line is at this plus q × ``stride(in:)``.
    static func lineStart(column: Int, row: Int, in window: CellWindow) -> Int
    /// How far apart, in `window`'s buffer, neighbours along the axis are.
    static func stride(in window: CellWindow) -> Int
    /// The first and last positions along the axis of `window`'s cells in grid row `row` (a row of a source).
    static func span(of window: CellWindow, row: Int) -> (first: Int, last: Int)
    /// The first and last positions along the axis that `window` holds (a target).
    static func extent(of window: CellWindow) -> (first: Int, last: Int)
}

/// East–west: along a row, from column to column.
enum AlongRows: BlurAxis {
    @inline(__always) static func position(column: Int, row: Int) -> Int { column }
    @inline(__always) static func lineStart(column: Int, row: Int, in window: CellWindow) -> Int {
        (row - window.row0) * window.columns - window.column0
    }
    @inline(__always) static func stride(in window: CellWindow) -> Int { 1 }
    @inline(__always) static func span(of window: CellWindow, row: Int) -> (first: Int, last: Int) {
        (window.column0, window.column0 + window.columns - 1)
    }
    @inline(__always) static func extent(of window: CellWindow) -> (first: Int, last: Int) {
        (window.column0, window.column0 + window.columns - 1)
    }
}

/// North–south: along a column, from row to row.
enum AlongColumns: BlurAxis {
    @inline(__always) static func position(column: Int, row: Int) -> Int { row }
    @inline(__always) static func lineStart(column: Int, row: Int, in window: CellWindow) -> Int {
        column - window.column0 - window.row0 * window.columns
    }
    @inline(__always) static func stride(in window: CellWindow) -> Int { window.columns }
    @inline(__always) static func span(of window: CellWindow, row: Int) -> (first: Int, last: Int) { (row, row) }
    @inline(__always) static func extent(of window: CellWindow) -> (first: Int, last: Int) {
        (window.row0, window.row0 + window.rows - 1)
    }
}

extension GridKernels {
    /// One pass of the walk's blur along `axis`: adds the cells of `source` (over `sourceWindow`), each spread by
    /// `taps` (from −reach to +reach) along the axis, into `target` (over `targetWindow`, which must hold every cell
    /// the spread reaches). Mass moves only within the cell's run of joined cells along the axis (`runFirst` and
    /// `runLast`, per grid cell, `gridColumns` to a grid row) and is reflected at its ends.
    ///
    /// A source row whose every cell with mass reaches the whole kernel within its run, and whose shifted copies stay
    /// inside the target, is added as one shifted copy of the row per tap; the others cell by cell. The two orders
    /// add a target cell's terms differently, so which a row takes is part of the result (bit for bit).
    static func blur<Axis: BlurAxis>(
        along axis: Axis.Type,
        _ source: [Float], over sourceWindow: CellWindow,
        into target: inout [Float], over targetWindow: CellWindow,
        runFirst: [Int32], runLast: [Int32], gridColumns: Int, taps: [Float]
    ) {
        taps.withUnsafeBufferPointer { taps in
            runFirst.withUnsafeBufferPointer { runFirst in
                runLast.withUnsafeBufferPointer { runLast in
                    source.withUnsafeBufferPointer { source in
                        target.withUnsafeMutableBufferPointer { target in
                            blur(
                                along: axis, source, over: sourceWindow, into: target, over: targetWindow,
                                runFirst: runFirst, runLast: runLast, gridColumns: gridColumns, taps: taps)
                        }
                    }
                }
            }
        }
    }

    @inline(__always)
    private static func blur<Axis: BlurAxis>(
        along axis: Axis.Type,
        _ source: UnsafeBufferPointer<Float>, over s: CellWindow,
        into target: UnsafeMutableBufferPointer<Float>, over t: CellWindow,
        runFirst: UnsafeBufferPointer<Int32>, runLast: UnsafeBufferPointer<Int32>, gridColumns: Int,
        taps: UnsafeBufferPointer<Float>
    ) {
        let reach = taps.count / 2
        let stride = Axis.stride(in: t)
        let inside = Axis.extent(of: t)
        for row in 0..<s.rows {
            let gridRow = s.row0 + row
            let gridBase = gridRow * gridColumns + s.column0
            let sourceBase = row * s.columns
            // Whole shifted copies of the row only when they stay inside the target: a window at the grid's edge is
            // clipped there, though its mass may be far from the edge.
            let line = Axis.span(of: s, row: gridRow)
            let shape = rowShape(
                along: axis, source, from: sourceBase, count: s.columns, column0: s.column0, row: gridRow,
                runFirst: runFirst, runLast: runLast, gridBase: gridBase, reach: reach)
            // A row without mass moves nothing (and may lie within reach of the grid's edge).
            if shape.empty { continue }
            if shape.fits, line.first - reach >= inside.first, line.last + reach <= inside.last {
                let sourceRow = UnsafeBufferPointer(rebasing: source[sourceBase..<sourceBase + s.columns])
                let start =
                    Axis.lineStart(column: s.column0, row: gridRow, in: t)
                    + (Axis.position(column: s.column0, row: gridRow) - reach) * stride
                for tap in 0..<taps.count {
                    let base = start + tap * stride
                    addScaled(
                        taps[tap], sourceRow,
                        to: UnsafeMutableBufferPointer(rebasing: target[base..<base + s.columns]))
                }
                continue
            }
            for column in 0..<s.columns {
                let mass = source[sourceBase + column]
                guard mass > 0 else { continue }
                let gridColumn = s.column0 + column
                let position = Axis.position(column: gridColumn, row: gridRow)
                let first = Int(runFirst[gridBase + column])
                let last = Int(runLast[gridBase + column])
                let lineStart = Axis.lineStart(column: gridColumn, row: gridRow, in: t)
                let low = position - reach
                if low >= first, position + reach <= last {
                    var index = lineStart + low * stride
                    for tap in 0..<taps.count {
                        target[index] += mass * taps[tap]
                        index &+= stride
                    }
                } else {
                    for tap in 0..<taps.count {
                        target[lineStart + fold(low + tap, first, last) * stride] += mass * taps[tap]
                    }
                }
            }
        }
    }
}

extension GridKernels {
    /// Whether the `count` source cells from `from` (grid cells from `gridBase`, in grid row `row` from `column0`)
    /// hold no mass (`empty`), and whether every cell with mass reaches the whole kernel (`reach` each way) within its
    /// run (`fits`). Four cells at a time: a cell at a time, with a branch per cell, this was a sixth of the blur.
    @inline(__always)
    fileprivate static func rowShape<Axis: BlurAxis>(
        along axis: Axis.Type, _ source: UnsafeBufferPointer<Float>, from: Int, count: Int, column0: Int, row: Int,
        runFirst: UnsafeBufferPointer<Int32>, runLast: UnsafeBufferPointer<Int32>, gridBase: Int, reach: Int
    ) -> (empty: Bool, fits: Bool) {
        var massive = SIMDMask<SIMD4<Int32>>(repeating: false)
        var short = SIMDMask<SIMD4<Int32>>(repeating: false)
        let whole = count & ~3
        var column = 0
        while column < whole {
            let mass = SIMD4(
                source[from &+ column], source[from &+ column &+ 1], source[from &+ column &+ 2],
                source[from &+ column &+ 3])
            let at = gridBase &+ column
            let first = SIMD4(runFirst[at], runFirst[at &+ 1], runFirst[at &+ 2], runFirst[at &+ 3])
            let last = SIMD4(runLast[at], runLast[at &+ 1], runLast[at &+ 2], runLast[at &+ 3])
            let position = SIMD4<Int32>(
                Int32(truncatingIfNeeded: Axis.position(column: column0 &+ column, row: row)),
                Int32(truncatingIfNeeded: Axis.position(column: column0 &+ column &+ 1, row: row)),
                Int32(truncatingIfNeeded: Axis.position(column: column0 &+ column &+ 2, row: row)),
                Int32(truncatingIfNeeded: Axis.position(column: column0 &+ column &+ 3, row: row)))
            let spread = SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: reach))
            let held = mass .> 0
            massive .|= held
            short .|= held .& ((first .> position &- spread) .| (last .< position &+ spread))
            column &+= 4
        }
        var empty = !any(massive)
        var fits = !any(short)
        while column < count {
            if source[from &+ column] > 0 {
                empty = false
                let position = Axis.position(column: column0 &+ column, row: row)
                if Int(runFirst[gridBase &+ column]) > position - reach
                    || Int(runLast[gridBase &+ column]) < position + reach
                {
                    fits = false
                }
            }
            column &+= 1
        }
        return (empty, fits)
    }
}

/// y += a·x, elementwise, four lanes at a time (explicit lanes: the loop the compiler vectorised checked its arrays
/// for overlap and ran eight lanes, so that a short row, the usual one, went mostly through its one-by-one tail).
@inline(__always)
private func addScaled(_ a: Float, _ x: UnsafeBufferPointer<Float>, to y: UnsafeMutableBufferPointer<Float>) {
    guard let xBase = x.baseAddress, let yBase = y.baseAddress else { return }
    let scale = SIMD4<Float>(repeating: a)
    let whole = y.count & ~3
    var index = 0
    while index < whole {
        let sum =
            UnsafeRawPointer(yBase + index).loadUnaligned(as: SIMD4<Float>.self)
            + scale * UnsafeRawPointer(xBase + index).loadUnaligned(as: SIMD4<Float>.self)
        UnsafeMutableRawPointer(yBase + index).storeBytes(of: sum, as: SIMD4<Float>.self)
        index &+= 4
    }
    while index < y.count {
        y[index] += a * x[index]
        index &+= 1
    }
}
