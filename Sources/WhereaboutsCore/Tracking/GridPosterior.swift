/// A box of cells on a floor's grid: first column and row, and size; its cells are kept row by row.
struct CellWindow: Sendable, Equatable {
    var column0: Int
    var row0: Int
    var columns: Int
    var rows: Int
    var count: Int { columns * rows }
}

/// One tag's posterior: a window of its floor's grid with a probability per cell, and its learned power offset.
struct GridPosterior: Sendable {
    /// Which floor grid (index in the tracker's grids).
    var gridIndex: Int
    /// The window: first column and row on the grid, and its size in cells.
    var column0: Int
    var row0: Int
    var columns: Int
    var rows: Int
    /// Probability per cell of the window, row by row; they sum to 1.
    var probabilities: [Float]
    /// The tag's power at 1 m minus its nominal power, in dB, and the variance of that estimate.
    var offset: Double
    var offsetVariance: Double
    /// When it was last updated (seconds).
    var time: Double
    /// Updates in a row loudest at an agent far from the estimate, or surprised by their readings.
    var astray: Int
    /// The readings' misfit to the prediction, averaged over the last updates (about 1 when the model holds), and
    /// how many updates in a row it was surprising (``GridFilter/note(_:in:summary:)``).
    var misfit = 1.0
    var surprised = 0
    /// Whether the last update's readings fit badly enough (``GridFilter/Configuration/reseedMisfit``) that the next
    /// prediction takes a small uniform share around the loudest agent: a mode pruned too early can come back.
    var reseed = false
    /// How many agents the update that started the window brought (up to the update's cap, whether or not their
    /// tables reached the window), and how many updates the window has had since.
    var startAgents = 0
    var updates = 0
    /// The last update's log likelihood of the readings it weighed, marginal over its prediction (up to a constant),
    /// and how many it weighed: ``GridFilter/floorEvidence(evidence:weighed:readings:)``.
    var evidence = 0.0
    var weighed = 0
    /// The posterior mean after its last update.
    var mean: Point?
    /// With a fixed lag: the updates not reported yet, oldest first (the newest is this posterior).
    var steps: [GridStep] = []

    /// The window's cells on the grid.
    var window: CellWindow { CellWindow(column0: column0, row0: row0, columns: columns, rows: rows) }
}

/// One update of a tag's posterior, kept for the fixed-lag smoother until it is reported.
struct GridStep: Sendable {
    /// Its floor grid, and its window of cells on it.
    var gridIndex: Int
    var column0: Int
    var row0: Int
    var columns: Int
    var rows: Int
    /// When the update was made (seconds).
    var time: Double
    /// The filtered posterior then, per cell of the window.
    var filtered: [Float]
    /// The update's likelihood per cell of the window, scaled so that its largest over the weighed cells is 1.
    var likelihood: [Float]
    /// Seconds walked since the step before; nil when the window (re)started here.
    var elapsed: Double?
}
