/// How a floor's grid cells (``GridFilter``) were chosen: their side, where it came from, and the narrowest passage
/// of the floor's free space.
///
/// An explicit ``GridFilter/Configuration/cellSize`` comes first, then the map's `model.cell_size`
/// (``RadioModel/cellSize``), then the free space: cells fine enough that the narrowest walkable passage (a
/// corridor, an aisle between desks, the gap between a wall and an obstacle, a door) is at least two cells wide, in
/// steps of 0.25 m from 0.25 to 1 m; 1 m when every passage is 2 m or wider. The floor's zones play no part: they
/// change what is reported, not what is resolved. Whichever way it came, the cell then grows if the floor or its
/// agents' gain tables would not fit their budgets (``FloorGrid/cellSize(_:width:height:agents:gainRadius:)``).
public struct GridResolution: Sendable, Hashable {
    /// Where the cell's side came from.
    public enum Source: String, Sendable, Hashable {
        /// ``GridFilter/Configuration/cellSize``.
        case configuration
        /// The map's `model.cell_size`.
        case map
        /// The floor's narrowest passage.
        case freeSpace = "free space"
    }

    /// The finest cell the free space asks for, in metres.
    public static let finestCell = 0.25
    /// The coarsest: an open floor's.
    public static let coarsestCell = 1.0
    /// The steps between them.
    public static let cellStep = 0.25

    /// The side of a cell, in metres.
    public let cellSize: Double
    public let source: Source
    /// The side asked for, before the budgets: larger than ``cellSize`` only on a floor too large for it.
    public let preferredCellSize: Double
    /// The narrowest walkable passage's width, in metres, and its middle: nil when the free space was not measured
    /// (the cell was set) or has no place a person can walk.
    public let passageWidth: Double?
    public let passageCentre: Point?

    /// The resolution of `floor` of `map` as the engine with `configuration` chooses it; `measuring` measures the
    /// narrowest passage even when the cell is set (for a report), which the engine skips.
    public init(
        floor: Floor, map: FloorMap, configuration: GridFilter.Configuration = GridFilter.Configuration(),
        measuring: Bool = false
    ) {
        let order = FloorGrid.floorOrder(of: map)
        let here = order[floor.major]
        let agents = map.agents.count { agent in
            agent.floor == floor.major || (here.flatMap { h in order[agent.floor].map { abs($0 - h) == 1 } } ?? false)
        }
        self.init(
            floor: floor, map: map, obstacles: map.obstacles.filter { $0.floor == floor.major }.map(\.polygon),
            barriers: map.walls.filter { $0.floor == floor.major }.flatMap(\.barriers), agents: agents,
            configuration: configuration, measuring: measuring)
    }

    init(
        floor: Floor, map: FloorMap, obstacles: [Polygon], barriers: [Segment], agents: Int,
        configuration: GridFilter.Configuration, measuring: Bool = false
    ) {
        var passage: FreeSpaceRaster.Passage?
        var pixel = FreeSpaceRaster.finestPixel
        let set = configuration.cellSize ?? map.model.cellSize
        if set == nil || measuring {
            let raster = FreeSpaceRaster(outline: floor.outline, obstacles: obstacles, barriers: barriers)
            passage = raster.narrowestPassage()
            pixel = raster.pixel
        }
        if let explicit = configuration.cellSize {
            (preferredCellSize, source) = (explicit, .configuration)
        } else if let mapped = map.model.cellSize {
            (preferredCellSize, source) = (mapped, .map)
        } else {
            (preferredCellSize, source) = (Self.cellSize(forPassage: passage?.width, pixel: pixel), .freeSpace)
        }
        passageWidth = passage?.width
        passageCentre = passage?.centre
        let (low, high) = floor.outline.bounds
        cellSize = FloorGrid.cellSize(
            preferredCellSize, width: high.x - low.x, height: high.y - low.y, agents: agents,
            gainRadius: configuration.gainRadius)
    }

    /// The cell for a floor whose narrowest passage is `width` metres wide (nil: none): the largest step at most
    /// half of it, from ``finestCell`` to ``coarsestCell``. A width measured on pixels of `pixel` metres may be
    /// that much short, which is forgiven: a 1 m aisle takes 0.5 m cells, not 0.25.
    static func cellSize(forPassage width: Double?, pixel: Double = FreeSpaceRaster.finestPixel) -> Double {
        guard let width else { return coarsestCell }
        let steps = ((width + pixel) / 2 / cellStep + 1e-9).rounded(.down)
        return min(max(steps * cellStep, finestCell), coarsestCell)
    }
}
