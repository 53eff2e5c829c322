extension GridFilter {
    // MARK: - Fixed lag

    /// The update just made, for the smoother: its filtered posterior and its likelihood on the same cells.
    func step(of posterior: GridPosterior, kept: Window, elapsed: Double?) -> GridStep {
        var likelihood: [Float] = []
        likelihood.reserveCapacity(kept.count)
        GridKernels.append(kept, of: work, from: likelihoods, to: &likelihood)
        return GridStep(
            gridIndex: posterior.gridIndex, column0: posterior.column0, row0: posterior.row0,
            columns: posterior.columns, rows: posterior.rows, time: posterior.time,
            filtered: posterior.probabilities, likelihood: likelihood, elapsed: elapsed)
    }

    /// Sets the likelihood of every cell of the work window to 1 (no reading weighed yet).
    mutating func clearLikelihoods() {
        GridKernels.fill(&likelihoods, count: work.count, with: 1)
    }

    /// The fixed-lag smoother: the newest kept step at least ``Configuration/lag`` old (and not reported yet),
    /// given every reading since, summarised; nil when there is none. The steps up to it are then dropped.
    ///
    /// Backward from the newest step n, with β_n = 1: β_k(x) = Σ_x' T(x, x') · ℓ_k+1(x') · β_k+1(x'), where T is the
    /// prediction's walk and ℓ the step's likelihood; the smoothed posterior of step m is filtered_m · β_m,
    /// normalised. T is the same blur the prediction runs, applied to ℓ·β (the blur along rows then columns is
    /// symmetric away from walls; beside them, the order of its two passes makes it slightly less so). A step
    /// that restarted the window breaks the chain: β is 1 again before it.
    mutating func smooth(_ posterior: inout GridPosterior, now: Double, grids: [FloorGrid]) -> Summary? {
        let due = now - configuration.lag + 1e-6
        guard let target = posterior.steps.lastIndex(where: { $0.time <= due }) else { return nil }
        var index = posterior.steps.count - 1
        setBackward(count: posterior.steps[index].filtered.count)
        while index > target {
            let step = posterior.steps[index]
            let before = posterior.steps[index - 1]
            guard let elapsed = step.elapsed, step.gridIndex == before.gridIndex else {
                setBackward(count: before.filtered.count)
                index -= 1
                continue
            }
            var carried = GridPosterior(
                gridIndex: step.gridIndex, column0: step.column0, row0: step.row0, columns: step.columns,
                rows: step.rows, probabilities: step.likelihood, offset: 0, offsetVariance: 0, time: step.time,
                astray: 0)
            // Only where the step's posterior has mass: the other cells (walls, obstacles, pruned away) are no
            // place the tag could have been, and the walk never leaves from them.
            for cell in carried.probabilities.indices {
                carried.probabilities[cell] =
                    step.filtered[cell] > 0 ? carried.probabilities[cell] * backward[cell] : 0
            }
            predict(&carried, elapsed: elapsed, grid: grids[step.gridIndex])
            readBackward(onto: before)
            index -= 1
        }
        let step = posterior.steps[target]
        var smoothed = GridPosterior(
            gridIndex: step.gridIndex, column0: step.column0, row0: step.row0, columns: step.columns,
            rows: step.rows, probabilities: step.filtered, offset: 0, offsetVariance: 0, time: step.time,
            astray: 0)
        var total: Float = 0
        for cell in smoothed.probabilities.indices {
            smoothed.probabilities[cell] *= backward[cell]
            total += smoothed.probabilities[cell]
        }
        // Nothing left (only rounding could do it): the filtered posterior stands. Otherwise scaled so that its
        // largest cell is 1: the product can be tiny, and summarise adds in Float.
        if !(total > 0) || !total.isFinite {
            smoothed.probabilities = step.filtered
        } else {
            let count = smoothed.probabilities.count
            let peak = GridKernels.largest(smoothed.probabilities, count: count)
            if peak > 0, peak.isFinite { GridKernels.scale(&smoothed.probabilities, count: count, by: 1 / peak) }
        }
        posterior.steps.removeFirst(target + 1)
        return summarise(smoothed, grid: grids[step.gridIndex], gridIndex: step.gridIndex)
    }

    /// The backward factor: 1 on each of `count` cells.
    mutating func setBackward(count: Int) {
        backward.removeAll(keepingCapacity: true)
        backward.reserveCapacity(count)
        for _ in 0..<count { backward.append(1) }
    }

    /// The backward factor on `step`'s cells, from the blur in the work window, scaled so that its largest is 1.
    mutating func readBackward(onto step: GridStep) {
        backward.removeAll(keepingCapacity: true)
        backward.reserveCapacity(step.columns * step.rows)
        let window = work
        var peak: Float = 0
        for row in step.row0..<step.row0 + step.rows {
            let workRow = row - window.row0
            for column in step.column0..<step.column0 + step.columns {
                let workColumn = column - window.column0
                let inside = workRow >= 0 && workRow < window.rows && workColumn >= 0 && workColumn < window.columns
                let value = inside ? workProbabilities[workRow * window.columns + workColumn] : 0
                backward.append(value)
                peak = max(peak, value)
            }
        }
        guard peak > 0, peak.isFinite else {
            // No cell of the earlier step leads anywhere kept: no information, not none at all.
            setBackward(count: step.columns * step.rows)
            return
        }
        GridKernels.scale(&backward, count: backward.count, by: 1 / peak)
    }
}
