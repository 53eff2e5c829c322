/// One floor cut into square cells for ``GridFilter``: where a person can stand, which neighbouring cells they can
/// step between, each cell's zone, and for each agent on the floor the path gain to each cell near it.
///
/// Built once per floor when the engine starts. A cell is free when its centre is inside the floor's outline and
/// outside every obstacle; two neighbouring free cells are joined unless a barrier (a wall that blocks walking)
/// runs between their centres. The path gain of an agent is what the log-distance model with the agent's exponent
/// and the walls on the straight path take off a tag's power at 1 m; it is tabled only within
/// ``GridFilter/Configuration/gainRadius`` of the agent, so that memory grows with agents, not with floor area
/// times agents.
struct FloorGrid: Sendable {
    /// The per-agent table of path gains over a box of cells around the agent.
    struct GainTable: Sendable {
        /// The agent's index in the map.
        let agentIndex: Int
        /// Where the agent stands.
        let agentPosition: Point
        /// The box's first column and row, and its size in cells.
        let column0: Int
        let row0: Int
        let columns: Int
        let rows: Int
        /// The exponent the table was made with.
        let exponent: Double
        /// Whether the agent is on the next floor up or down, not on this one: its gains take the slab's loss
        /// (``RadioModel/floorLoss``), its σ grows by ``GridFilter/Configuration/floorLossSigma``, and its radio
        /// surface (learned on its own floor) is not used.
        let acrossFloor: Bool
        /// Where the table's three planes start in the floor's ``FloorGrid/tableValues``, each a value per cell of
        /// the box, row by row: the gain in dB (0 or less) from `start`; 1 / σ from `start + count`, σ² being the
        /// filter's RSSI variance plus what the model's error adds with distance; log σ from `start + 2 × count`,
        /// for the likelihood's normalisation. (1/σ² is not tabled: squaring 1/σ is cheaper than reading another
        /// plane.)
        let start: Int

        /// Cells in the box: the length of each plane.
        var count: Int { columns * rows }

        /// Whether the box holds every cell of a window.
        func covers(column0 c0: Int, row0 r0: Int, columns w: Int, rows h: Int) -> Bool {
            c0 >= column0 && r0 >= row0 && c0 + w <= column0 + columns && r0 + h <= row0 + rows
        }
    }

    /// The floor's major.
    let major: UInt16
    /// The corner of cell (0, 0) with the smallest coordinates.
    let origin: Point
    /// The side of a cell, in metres.
    let cellSize: Double
    /// How the cell was chosen (from the configuration, the map or the free space; zones play no part).
    let resolution: GridResolution
    let columns: Int
    let rows: Int
    /// Per cell: whether a person can stand there.
    let free: [Bool]
    /// Per cell: the first and last column of its run along the row, the cells joined to it east and west (only
    /// itself for a cell that is not free). The prediction moves mass only within a run.
    let eastRunFirst: [Int32]
    let eastRunLast: [Int32]
    /// Per cell: the first and last row of its run along the column, the cells joined to it north and south.
    let northRunFirst: [Int32]
    let northRunLast: [Int32]
    /// Per cell: the index in ``zones`` of the zone that covers most of it, or -1, and the share of the cell it
    /// covers; then the zone that covers most of the rest, or -1, and its share. A cell on a boundary is shared, so
    /// that zone probabilities do not jump by whole cells (at 1 m, a third of a cell across a boundary was counted
    /// in the wrong room). Shares are counted on 4 × 4 points of the cell.
    let zoneOfCell: [Int16]
    let zoneShareOfCell: [Float]
    let secondZoneOfCell: [Int16]
    let secondZoneShareOfCell: [Float]
    /// The floor's zones, in map order.
    let zones: [ZoneKey]
    /// Per agent on this floor and on the floors next above and below it, its gain table; this floor's agents
    /// first, each floor's in map order.
    private(set) var tables: [GainTable]
    /// Every table's planes (``GainTable/start``), in one array: the weighing reads many tables at once, and one
    /// array is borrowed in one closure.
    private(set) var tableValues: [Float]
    /// The slot in ``tables`` of each map agent, or -1 when it is on a floor neither this one nor next to it.
    let slotOfAgent: [Int]

    /// Per map agent, its antenna's height above a tag on this floor (negative below it).
    private let agentHeightAboveTag: [Double]
    private let floorLoss: Double
    private let floorLossSigma: Double
    private let walls: [Wall]
    private let gainRadius: Double
    private let sigma: Double
    private let sigmaPerMetre: Double

    init(
        floor: Floor,
        map: FloorMap,
        zones floorZones: [Zone],
        walls: [Wall],
        obstacles: [Polygon],
        barriers: [Segment],
        radio: RadioConstants,
        configuration: GridFilter.Configuration
    ) {
        major = floor.major
        let neighbours = Self.neighbours(of: floor, map: map)
        let (low, high) = floor.outline.bounds
        resolution = GridResolution(
            floor: floor, map: map, obstacles: obstacles, barriers: barriers,
            agents: map.agents.count { $0.floor == floor.major || neighbours[$0.floor] != nil },
            configuration: configuration)
        let cellSize = resolution.cellSize
        self.cellSize = cellSize
        self.walls = walls
        gainRadius = configuration.gainRadius
        sigma = configuration.rssiSigma
        sigmaPerMetre = configuration.rssiSigmaPerMetre
        origin = low
        columns = max(Int(((high.x - low.x) / cellSize).rounded(.up)), 1)
        rows = max(Int(((high.y - low.y) / cellSize).rounded(.up)), 1)
        let cells = Self.cells(
            outline: floor.outline, zones: floorZones, obstacles: obstacles, origin: low, cellSize: cellSize,
            columns: columns, rows: rows)
        free = cells.free
        zoneOfCell = cells.zoneOfCell
        zoneShareOfCell = cells.zoneShareOfCell
        secondZoneOfCell = cells.secondZoneOfCell
        secondZoneShareOfCell = cells.secondZoneShareOfCell
        let runs = Self.runs(
            free: cells.free, barriers: barriers, origin: low, cellSize: cellSize, columns: columns, rows: rows)
        eastRunFirst = runs.eastFirst
        eastRunLast = runs.eastLast
        northRunFirst = runs.northFirst
        northRunLast = runs.northLast
        zones = floorZones.map(\.key)
        agentHeightAboveTag = Self.agentHeightsAboveTag(on: floor, map: map)
        floorLoss = map.model.floorLoss
        floorLossSigma = configuration.floorLossSigma
        (tables, tableValues, slotOfAgent) = Self.tables(
            floor: floor.major, map: map, neighbours: neighbours, heights: agentHeightAboveTag, radio: radio,
            walls: walls, floorLoss: floorLoss, floorLossSigma: floorLossSigma, origin: low, cellSize: cellSize,
            columns: columns, rows: rows, radius: gainRadius, sigma: sigma, sigmaPerMetre: sigmaPerMetre)
    }

    /// Every agent's gain table on the floor, this floor's agents first, then the next floors' (`neighbours`): a
    /// table's slot says whose it is. Returns the tables, their values in one array, and each agent's slot (−1 for
    /// none).
    static func tables(
        floor: UInt16, map: FloorMap, neighbours: [UInt16: Floor], heights: [Double], radio: RadioConstants,
        walls: [Wall], floorLoss: Double, floorLossSigma: Double, origin: Point, cellSize: Double, columns: Int,
        rows: Int, radius: Double, sigma: Double, sigmaPerMetre: Double
    ) -> (tables: [GainTable], values: [Float], slots: [Int]) {
        var slots = [Int](repeating: -1, count: map.agents.count)
        var tables: [GainTable] = []
        var tableValues: [Float] = []
        let wallSegments = walls.map(\.segment)
        for across in [false, true] {
            for (index, agent) in map.agents.enumerated()
            where across ? neighbours[agent.floor] != nil : agent.floor == floor {
                slots[index] = tables.count
                let (table, values) = Self.table(
                    agentIndex: index, agent: agent, heightAboveTag: heights[index],
                    exponent: radio.pathLossExponent(ofAgent: index), acrossFloor: across, floorLoss: floorLoss,
                    floorLossSigma: floorLossSigma, walls: walls, wallSegments: wallSegments, origin: origin,
                    cellSize: cellSize, columns: columns, rows: rows, radius: radius, sigma: sigma,
                    sigmaPerMetre: sigmaPerMetre, start: tableValues.count)
                tables.append(table)
                tableValues.append(contentsOf: values)
            }
        }
        return (tables, tableValues, slots)
    }

    /// The floors next above and below `floor`, by major: their agents hear a tag on it through a slab.
    static func neighbours(of floor: Floor, map: FloorMap) -> [UInt16: Floor] {
        let order = floorOrder(of: map)
        var neighbours: [UInt16: Floor] = [:]
        if let here = order[floor.major] {
            for other in map.floors where abs((order[other.major] ?? here) - here) == 1 {
                neighbours[other.major] = other
            }
        }
        return neighbours
    }

    /// Per map agent, its antenna's height above a tag on `floor` (negative below it), in metres.
    static func agentHeightsAboveTag(on floor: Floor, map: FloorMap) -> [Double] {
        let order = floorOrder(of: map)
        let floorHeights = Dictionary(map.floors.map { ($0.major, $0.height) }, uniquingKeysWith: { a, _ in a })
        return map.agents.map { agent in
            var rise = (floorHeights[agent.floor] ?? floor.height) - floor.height
            if rise == 0, agent.floor != floor.major, let there = order[agent.floor], let here = order[floor.major] {
                // Floors the map gives no heights (both 0): a storey of 3 m each.
                rise = 3 * Double(there - here)
            }
            return rise + agent.height - map.model.tagHeight
        }
    }

    /// Each floor's place from the lowest, by height, then by major (a map may leave heights out: 0).
    static func floorOrder(of map: FloorMap) -> [UInt16: Int] {
        let ordered = map.floors.sorted { ($0.height, $0.major) < ($1.height, $1.major) }
        return Dictionary(ordered.enumerated().map { ($1.major, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// At most this many cells a floor (a square kilometre of 1 m cells, 29 MB of per-cell arrays): a floor larger
    /// than its cells allow gets coarser ones. Map coordinates reach 100 km, and a floor 20 km across at 1 m asked
    /// for 400 million cells: the locator died allocating them.
    static let maximumCells = 1_000_000
    /// At most this many cells in a floor's agents' gain tables together (12 bytes each: 120 MB). A map file may
    /// name hundreds of thousands of agents; 200 agents at 0.5 m cells take 3 million.
    static let maximumTableCells = 10_000_000

    /// `preferred`, or the first coarser size that keeps a `width` × `height` floor within ``maximumCells`` and its
    /// `agents`' tables (each reaching `gainRadius` around its agent) within ``maximumTableCells``: from what the
    /// floor's area alone needs (a multiple of 0.25 m), in steps of 0.25 m.
    static func cellSize(
        _ preferred: Double, width: Double, height: Double, agents: Int = 0, gainRadius: Double = 30
    ) -> Double {
        func fits(_ size: Double) -> Bool {
            let columns = max((width / size).rounded(.up), 1)
            let rows = max((height / size).rounded(.up), 1)
            let reach = (2 * gainRadius / size).rounded(.up) + 2
            let table = min(columns, reach) * min(rows, reach)
            return columns * rows <= Double(maximumCells) && Double(agents) * table <= Double(maximumTableCells)
        }
        guard !fits(preferred) else { return preferred }
        var size = max(((width * height / Double(maximumCells)).squareRoot() / 0.25).rounded(.up) * 0.25, preferred)
        // Bounded: past a table of one cell per agent nothing coarser helps (a map file holds fewer agents than that).
        while !fits(size), size < max(width, height, 2 * gainRadius) { size += 0.25 }
        return size
    }

    /// The centre of a cell.
    func centre(column: Int, row: Int) -> Point {
        Point(x: origin.x + (Double(column) + 0.5) * cellSize, y: origin.y + (Double(row) + 0.5) * cellSize)
    }

    /// The cell a point falls in, clamped to the grid.
    func cell(of point: Point) -> (column: Int, row: Int) {
        let column = Int(((point.x - origin.x) / cellSize).rounded(.down))
        let row = Int(((point.y - origin.y) / cellSize).rounded(.down))
        return (min(max(column, 0), columns - 1), min(max(row, 0), rows - 1))
    }

    /// Remakes the tables of agents whose exponent changed (calibration set new constants).
    mutating func refresh(radio: RadioConstants, map: FloorMap) {
        let wallSegments = walls.map(\.segment)
        for slot in tables.indices {
            let table = tables[slot]
            let exponent = radio.pathLossExponent(ofAgent: table.agentIndex)
            guard exponent != table.exponent else { continue }
            // The same box (it does not depend on the exponent), so the new planes take the old ones' place.
            let (remade, values) = Self.table(
                agentIndex: table.agentIndex, agent: map.agents[table.agentIndex],
                heightAboveTag: agentHeightAboveTag[table.agentIndex], exponent: exponent,
                acrossFloor: table.acrossFloor, floorLoss: floorLoss, floorLossSigma: floorLossSigma, walls: walls,
                wallSegments: wallSegments, origin: origin, cellSize: cellSize, columns: columns, rows: rows,
                radius: gainRadius, sigma: sigma, sigmaPerMetre: sigmaPerMetre, start: table.start)
            // (A table of another size would move every later table's planes.)
            precondition(values.count == 3 * table.count, "a remade gain table changed its box")
            tables[slot] = remade
            tableValues.replaceSubrange(table.start..<table.start + 3 * table.count, with: values)
        }
    }

    /// The walls of those given that reach the box from `low` to `high`, in order. Through `segments`, the walls'
    /// segments in the same order: a wall holds its doors, and copying each wall to test it cost a retain and a
    /// release per wall and agent.
    private static func walls(_ walls: [Wall], segments: [Segment], reaching low: Point, _ high: Point) -> [Wall] {
        segments.indices.filter {
            let segment = segments[$0]
            return max(segment.start.x, segment.end.x) >= low.x && min(segment.start.x, segment.end.x) <= high.x
                && max(segment.start.y, segment.end.y) >= low.y && min(segment.start.y, segment.end.y) <= high.y
        }.map { walls[$0] }
    }

    private static func table(
        agentIndex: Int,
        agent: Agent,
        heightAboveTag: Double,
        exponent: Double,
        acrossFloor: Bool,
        floorLoss: Double,
        floorLossSigma: Double,
        walls: [Wall],
        wallSegments: [Segment],
        origin: Point,
        cellSize: Double,
        columns: Int,
        rows: Int,
        radius: Double,
        sigma: Double,
        sigmaPerMetre: Double,
        start: Int
    ) -> (table: GainTable, values: [Float]) {
        let reach = Int((radius / cellSize).rounded(.up))
        let home = (
            column: Int(((agent.position.x - origin.x) / cellSize).rounded(.down)),
            row: Int(((agent.position.y - origin.y) / cellSize).rounded(.down))
        )
        let column0 = min(max(home.column - reach, 0), columns - 1)
        let row0 = min(max(home.row - reach, 0), rows - 1)
        let column1 = max(min(home.column + reach + 1, columns), column0 + 1)
        let row1 = max(min(home.row + reach + 1, rows), row0 + 1)
        let width = column1 - column0
        let height = row1 - row0
        let count = width * height
        var values = [Float](repeating: 0, count: 3 * count)  // The three planes, one after the other.
        let dz2 = heightAboveTag * heightAboveTag
        // A surveyed residual is of the agent's own floor.
        let surface = acrossFloor ? nil : agent.radioSurface
        let slab = acrossFloor ? floorLoss : 0
        let slabVariance = acrossFloor ? floorLossSigma * floorLossSigma : 0
        // Only walls that reach the box of the agent and the table's cells can cross a path between them: a large
        // floor's walls are many, and each cell's path was tested against all of them.
        let walls = Self.walls(
            walls, segments: wallSegments,
            reaching: Point(
                x: min(origin.x + Double(column0) * cellSize, agent.position.x),
                y: min(origin.y + Double(row0) * cellSize, agent.position.y)),
            Point(
                x: max(origin.x + Double(column1) * cellSize, agent.position.x),
                y: max(origin.y + Double(row1) * cellSize, agent.position.y)))
        for row in 0..<height {
            for column in 0..<width {
                let centre = Point(
                    x: origin.x + (Double(column0 + column) + 0.5) * cellSize,
                    y: origin.y + (Double(row0 + row) + 0.5) * cellSize)
                var gain =
                    pathGain(
                        from: agent.position, heightAboveTag: heightAboveTag, exponent: exponent, walls: walls,
                        to: centre) - slab
                var variance: Double
                if let surface {
                    // The survey's residual corrects the trend; its uncertainty replaces the guess that the model's
                    // error grows with distance.
                    let residual = surface.residual(at: centre)
                    gain += residual.mean
                    variance = sigma * sigma + residual.variance
                } else {
                    let dx = centre.x - agent.position.x
                    let dy = centre.y - agent.position.y
                    let growth = sigmaPerMetre * max((dx * dx + dy * dy + dz2).squareRoot(), 0.1)
                    variance = sigma * sigma + growth * growth + slabVariance
                }
                values[row * width + column] = Float(gain)
                let cellSigma = variance.squareRoot()
                values[count + row * width + column] = Float(1 / cellSigma)
                values[2 * count + row * width + column] = Float(naturalLog(cellSigma))
            }
        }
        let table = GainTable(
            agentIndex: agentIndex, agentPosition: agent.position, column0: column0, row0: row0, columns: width,
            rows: height, exponent: exponent, acrossFloor: acrossFloor, start: start)
        return (table, values)
    }
}
