extension GridFilter {
    /// How badly the update's readings fit its prediction: the mean squared standardised residual per reading that
    /// the evidence (``GridPosterior/evidence``, the log likelihood marginal over the prediction) implies, about 1
    /// when the readings are as the model expects and the tag is where the prediction says. The expectation is
    /// taken at the prediction's mean (the last posterior's): each reading's log density there is −½ − log σ on
    /// average. Nil without a mean, or when a chosen agent's table does not reach it.
    func misfit(of posterior: GridPosterior, grid: FloorGrid) -> Double? {
        guard let mean = posterior.mean, posterior.weighed > 0 else { return nil }
        let cell = grid.cell(of: mean)
        var expected = 0.0
        for observation in chosen {
            let table = grid.tables[observation.slot]
            guard table.covers(column0: cell.column, row0: cell.row, columns: 1, rows: 1) else { return nil }
            let index =
                table.start + 2 * table.count + (cell.row - table.row0) * table.columns + cell.column
                - table.column0
            expected += -0.5 - Double(grid.tableValues[index])
        }
        return max(1 + 2 * (expected - posterior.evidence) / Double(posterior.weighed), 0)
    }

    /// Keeps an update's misfit (``misfit(of:grid:)``) in the posterior and widens the summary's spread by it.
    ///
    /// The readings' misfit, averaged over the last updates, scales the spread by its square root when above 1, as
    /// a least-squares fit's covariance is scaled by its reduced χ² (the Birge ratio): readings that fit worse than
    /// the model allows say the posterior is narrower than the truth. An update whose misfit reaches
    /// ``Configuration/lostMisfit``, with ``Configuration/lostAgents`` agents or more, counts as surprised: the
    /// update counts as astray (``Configuration/astrayUpdates`` in a row restart the window), so a tag parked
    /// where its readings say it cannot be starts again within seconds.
    func note(_ misfit: Double?, in posterior: inout GridPosterior, summary: inout Summary) {
        // Updates of fewer agents (live, often a batch or two since the last) neither widen nor count: their learned
        // offset absorbs most of any misfit, and one link's lasting shadow is no evidence of being lost.
        guard let misfit, posterior.weighed >= configuration.lostAgents else {
            posterior.misfit = 1
            posterior.surprised = 0
            posterior.reseed = false
            return
        }
        posterior.reseed = misfit >= configuration.reseedMisfit
        posterior.misfit = 0.5 * posterior.misfit + 0.5 * misfit
        let surprising = misfit >= configuration.lostMisfit
        posterior.surprised = surprising ? posterior.surprised + 1 : 0
        if surprising { summary.surprise = misfit.squareRoot() }
        if posterior.misfit > 1 { summary.spread *= posterior.misfit.squareRoot() }
    }

    /// Counts the update as astray (``GridPosterior/astray``) or not: loudest at an agent far from the estimate, or
    /// surprised by its readings (``note(_:in:summary:)``), wherever the loudest agent is.
    ///
    /// Even when its table misses the window: an agent heard loudest far from a window it cannot weigh in on is what
    /// says the window is in the wrong place.
    func countAstray(_ posterior: inout GridPosterior, mean: Point, loudest: Int?, grid: FloorGrid) {
        let lost = posterior.surprised > 0
        if let loudest {
            posterior.astray = isFar(mean, from: loudest, grid: grid) || lost ? posterior.astray + 1 : 0
        } else if lost {
            posterior.astray += 1
        }
    }
}
