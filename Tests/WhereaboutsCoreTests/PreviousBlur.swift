@testable import WhereaboutsCore

/// The filter's prediction as it was before its two passes became one kernel (3412cfc, `GridFilter.predict`), kept
/// verbatim but for names, so that the kernel is tested to give the same bits.
enum PreviousBlur {
    static func predict(
        _ probabilities: [Float], source sourceWindow: CellWindow, target: CellWindow, floor: GridBlurTests.Floor,
        taps kernel: [Float]
    ) -> [Float] {
        let reach = kernel.count / 2
        let sourceColumns = sourceWindow.columns
        let sourceRows = sourceWindow.rows
        let width = target.columns
        var rowPass = [Float](repeating: 0, count: width * sourceRows)
        var workProbabilities = [Float](repeating: 0, count: target.count)
        let taps = kernel
        let gridColumns = floor.columns
        let sourceColumn0 = sourceWindow.column0
        let sourceRow0 = sourceWindow.row0
        taps.withUnsafeBufferPointer { taps in
            floor.eastRunFirst.withUnsafeBufferPointer { runFirst in
                floor.eastRunLast.withUnsafeBufferPointer { runLast in
                    probabilities.withUnsafeBufferPointer { source in
                        rowPass.withUnsafeMutableBufferPointer { pass in
                            for row in 0..<sourceRows {
                                let gridBase = (sourceRow0 + row) * gridColumns
                                let passBase = row * width - target.column0
                                let sourceBase = row * sourceColumns
                                // A row whose every cell with mass reaches the whole kernel within its run is spread
                                // as one shifted copy of the row per tap.
                                // Whole shifted copies of the row only when they stay inside the target: a window
                                // at the grid's edge is clipped there, though its mass may be far from the edge.
                                var open =
                                    sourceColumn0 - reach >= target.column0
                                    && sourceColumn0 + sourceColumns + reach <= target.column0 + width
                                var empty = true
                                for column in 0..<sourceColumns where source[sourceBase + column] > 0 {
                                    empty = false
                                    let gridColumn = sourceColumn0 + column
                                    if Int(runFirst[gridBase + gridColumn]) > gridColumn - reach
                                        || Int(runLast[gridBase + gridColumn]) < gridColumn + reach
                                    {
                                        open = false
                                        break
                                    }
                                }
                                // A row without mass moves nothing (and may lie within reach of the grid's edge).
                                if empty { continue }
                                if open {
                                    let sourceRow = UnsafeBufferPointer(
                                        rebasing: source[sourceBase..<sourceBase + sourceColumns])
                                    for tap in 0..<taps.count {
                                        let base = passBase + sourceColumn0 - reach + tap
                                        addScaled(
                                            taps[tap], sourceRow,
                                            to: UnsafeMutableBufferPointer(rebasing: pass[base..<base + sourceColumns]))
                                    }
                                    continue
                                }
                                for column in 0..<sourceColumns {
                                    let mass = source[row * sourceColumns + column]
                                    guard mass > 0 else { continue }
                                    let gridColumn = sourceColumn0 + column
                                    let first = Int(runFirst[gridBase + gridColumn])
                                    let last = Int(runLast[gridBase + gridColumn])
                                    let low = gridColumn - reach
                                    if low >= first, gridColumn + reach <= last {
                                        let base = passBase + low
                                        addScaled(
                                            mass, taps,
                                            to: UnsafeMutableBufferPointer(rebasing: pass[base..<base + taps.count]))
                                    } else {
                                        for tap in 0..<taps.count {
                                            pass[passBase + fold(low + tap, first, last)] += mass * taps[tap]
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        // Second pass, along columns: into the target window. A row whose every cell with mass can reach the whole
        // kernel within its column's run is spread as whole rows.
        taps.withUnsafeBufferPointer { taps in
            floor.northRunFirst.withUnsafeBufferPointer { runFirst in
                floor.northRunLast.withUnsafeBufferPointer { runLast in
                    rowPass.withUnsafeBufferPointer { pass in
                        workProbabilities.withUnsafeMutableBufferPointer { next in
                            for row in 0..<sourceRows {
                                let gridRow = sourceRow0 + row
                                let gridBase = gridRow * gridColumns + target.column0
                                let passBase = row * width
                                var open = true
                                var empty = true
                                for column in 0..<width where pass[passBase + column] > 0 {
                                    empty = false
                                    if Int(runFirst[gridBase + column]) > gridRow - reach
                                        || Int(runLast[gridBase + column]) < gridRow + reach
                                    {
                                        open = false
                                        break
                                    }
                                }
                                if empty { continue }
                                if open {
                                    let source = UnsafeBufferPointer(rebasing: pass[passBase..<passBase + width])
                                    for tap in 0..<taps.count {
                                        let nextBase = (gridRow - reach + tap - target.row0) * width
                                        addScaled(
                                            taps[tap], source,
                                            to: UnsafeMutableBufferPointer(rebasing: next[nextBase..<nextBase + width]))
                                    }
                                    continue
                                }
                                for column in 0..<width {
                                    let mass = pass[passBase + column]
                                    guard mass > 0 else { continue }
                                    let first = Int(runFirst[gridBase + column])
                                    let last = Int(runLast[gridBase + column])
                                    for tap in 0..<taps.count {
                                        let targetRow = fold(gridRow - reach + tap, first, last) - target.row0
                                        next[targetRow * width + column] += mass * taps[tap]
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return workProbabilities
    }

    /// y += a·x, elementwise.
    @inline(__always)
    private static func addScaled(
        _ a: Float, _ x: UnsafeBufferPointer<Float>, to y: UnsafeMutableBufferPointer<Float>
    ) {
        for index in 0..<y.count { y[index] += a * x[index] }
    }

    private static func fold(_ index: Int, _ first: Int, _ last: Int) -> Int {
        if index >= first, index <= last { return index }
        let length = last - first + 1
        var offset = (index - first) % (2 * length)
        if offset < 0 { offset += 2 * length }
        if offset >= length { offset = 2 * length - 1 - offset }
        return first + offset
    }
}
