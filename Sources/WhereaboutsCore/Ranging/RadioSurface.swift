/// One agent's share of a radio map: what its RSSI does beyond the path-loss model, learned from a survey.
///
/// The path-loss model (the agent's offset and exponent, the walls) gives the trend; a survey shows where the
/// agent hears a tag louder or quieter than the trend says (furniture, reflections, the antenna's pattern). The
/// surface holds that residual in dB on a raster of square cells, with its standard deviation: small where the
/// survey passed, growing to ``priorDeviation`` away from it, where the mean returns to 0 and the model alone
/// speaks. `whereabouts calibrate` makes it (a Gaussian process over the survey's residuals); the grid tracker adds
/// the mean to its expected level and the variance to its RSSI variance.
public struct RadioSurface: Sendable, Hashable {
    /// The corner of cell (0, 0) with the smallest coordinates.
    public var origin: Point
    /// The side of a cell, in metres.
    public var cellSize: Double
    public var columns: Int
    public var rows: Int
    /// The residual in dB per cell, row by row (row 0 at the smallest y).
    public var mean: [Double]
    /// Its standard deviation in dB per cell.
    public var deviation: [Double]
    /// The standard deviation far from every surveyed point, in dB (the mean is 0 there).
    public var priorDeviation: Double
    /// How far, in metres, the survey's residuals stay alike (the Gaussian process's length scale), when known.
    public var lengthScale: Double? = nil
    /// The survey's noise around the surface, in dB, when known.
    public var noiseDeviation: Double? = nil

    /// A surface; `mean` and `deviation` hold `columns × rows` values each.
    public init(
        origin: Point,
        cellSize: Double,
        columns: Int,
        rows: Int,
        mean: [Double],
        deviation: [Double],
        priorDeviation: Double
    ) {
        self.origin = origin
        self.cellSize = cellSize
        self.columns = columns
        self.rows = rows
        self.mean = mean
        self.deviation = deviation
        self.priorDeviation = priorDeviation
    }

    /// The residual and its variance at a point: the cell's values inside the raster, the prior outside it.
    public func residual(at point: Point) -> (mean: Double, variance: Double) {
        let column = Int(((point.x - origin.x) / cellSize).rounded(.down))
        let row = Int(((point.y - origin.y) / cellSize).rounded(.down))
        guard column >= 0, row >= 0, column < columns, row < rows, mean.count == columns * rows,
            deviation.count == columns * rows
        else { return (0, priorDeviation * priorDeviation) }
        let index = row * columns + column
        return (mean[index], deviation[index] * deviation[index])
    }
}

/// The path-loss model's gain from an agent to a point on its floor: what the log-distance law with the agent's
/// exponent, the height between antenna and tag, and the walls on the straight path take off a tag's power at 1 m
/// (dB, 0 or less). The grid tracker's tables and the radio map's residuals use this one function, so that a
/// survey's residuals are measured against the trend the tracker adds them to.
public func pathGain(from agent: Point, heightAboveTag: Double, exponent: Double, walls: [Wall], to point: Point)
    -> Double
{
    let dx = point.x - agent.x
    let dy = point.y - agent.y
    let distance = max((dx * dx + dy * dy + heightAboveTag * heightAboveTag).squareRoot(), 0.1)
    var gain = -10 * exponent * logarithm10(distance)
    if !walls.isEmpty {
        let path = Segment(agent, point)
        for wall in walls where wall.segment.properlyIntersects(path) { gain -= wall.loss }
    }
    return gain
}
