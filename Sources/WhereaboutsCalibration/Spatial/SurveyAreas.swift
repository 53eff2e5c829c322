public import WhereaboutsCore

/// One area of the floor that the spatial check holds out at a time.
public struct SurveyArea: Sendable, Hashable {
    /// The zone's name, or the block's (a column letter west to east, a row number north to south: `A1` is the
    /// north-west block).
    public var name: String
    /// The floor's major.
    public var floor: UInt16
    /// Its outline on the plan.
    public var polygon: Polygon
    /// The survey's samples in it.
    public var samples: Int
    /// Whether it holds enough samples to be held out on its own; an area with fewer always stays in the training
    /// set, and the coverage report marks it as unchecked.
    public var isChecked: Bool
    /// Whether it is a block of the survey's bounding box (else a zone of the map).
    public var isBlock: Bool
}

/// The survey's floor cut into areas for leave-one-area-out validation.
///
/// The bounding box of a floor's surveyed positions is cut into about ``targetBlocks`` blocks of similar sides: a
/// box, not the floor's outline, so that a survey of half the floor still gets as many held-out areas as a full
/// one, each far enough from the others (1.5–3 m across on a flat) that leaving it out tests how the fit carries
/// over to places the survey did not see. The map's zones can be used instead (`zones: true`: where at least
/// three each hold enough samples and together nine tenths of the floor's), but they are not by default: rooms
/// differ in size by a factor of five or more, and leaving a whole living room out tests a radio map far beyond
/// what a survey that walked every room needs (on the Kolakowski north half the report then read 1.27 m for a
/// robot path of 0.85 m).
public struct SurveyAreas: Sendable {
    /// How the areas were made.
    public enum Kind: String, Sendable {
        case zones
        case blocks
    }

    /// Blocks per surveyed floor, about.
    public static let targetBlocks = 8

    /// How the areas were made (per floor; `zones` when any floor used its zones).
    public var kind: Kind
    /// The areas, floor by floor.
    public var areas: [SurveyArea]
    /// The fewest samples an area needs to be held out on its own.
    public var minimumSamples: Int

    /// Cuts the surveyed floors into areas.
    ///
    /// - Parameters:
    ///   - positions: every sample's floor and true position.
    ///   - minimumSamples: the fewest samples an area needs to be checked on its own.
    ///   - zones: use the map's zones where they qualify (off by default: see the type's documentation).
    public init(
        map: FloorMap, positions: [(floor: UInt16, point: Point)], minimumSamples: Int, zones: Bool = false
    ) {
        self.minimumSamples = minimumSamples
        var areas: [SurveyArea] = []
        var usedZones = false
        let byFloor = Dictionary(grouping: positions, by: \.floor)
        for floor in map.floors {
            guard let points = byFloor[floor.major]?.map(\.point), !points.isEmpty else { continue }
            if zones,
                let zoned = Self.zoneAreas(map.zones(onFloor: floor.major), points: points, minimum: minimumSamples)
            {
                areas += zoned
                usedZones = true
            } else {
                areas += Self.blocks(floor: floor.major, points: points, minimum: minimumSamples)
            }
        }
        kind = usedZones ? .zones : .blocks
        self.areas = areas
    }

    /// The index of the area a position belongs to: the area containing it, else (on a floor cut into blocks)
    /// the nearest; nil when it is on no area (outside every zone, or on an unsurveyed floor).
    public func index(floor: UInt16, point: Point) -> Int? {
        var nearest: (index: Int, distance: Double)?
        for (index, area) in areas.enumerated() where area.floor == floor {
            if area.polygon.contains(point) { return index }
            if area.isBlock {
                let distance = area.polygon.distanceToBoundary(point)
                if nearest.map({ distance < $0.distance }) ?? true { nearest = (index, distance) }
            }
        }
        return nearest?.index
    }

    private static func zoneAreas(_ zones: [Zone], points: [Point], minimum: Int) -> [SurveyArea]? {
        guard zones.count >= 3 else { return nil }
        var counts = [Int](repeating: 0, count: zones.count)
        for point in points {
            if let index = zones.firstIndex(where: { $0.polygon.contains(point) }) { counts[index] += 1 }
        }
        let checked = zones.indices.filter { counts[$0] >= minimum }
        let inChecked = checked.reduce(0) { $0 + counts[$1] }
        guard checked.count >= 3, Double(inChecked) >= 0.9 * Double(points.count) else { return nil }
        return zones.indices.map { index in
            SurveyArea(
                name: zones[index].name, floor: zones[index].floor, polygon: zones[index].polygon,
                samples: counts[index], isChecked: counts[index] >= minimum, isBlock: false)
        }
    }

    private static func blocks(floor: UInt16, points: [Point], minimum: Int) -> [SurveyArea] {
        var low = Point(x: Double.infinity, y: Double.infinity)
        var high = Point(x: -Double.infinity, y: -Double.infinity)
        for point in points {
            low = Point(x: min(low.x, point.x), y: min(low.y, point.y))
            high = Point(x: max(high.x, point.x), y: max(high.y, point.y))
        }
        let width = max(high.x - low.x, 0.5)
        let height = max(high.y - low.y, 0.5)
        let columns = min(max(Int((Double(targetBlocks) * width / height).squareRoot().rounded()), 1), targetBlocks)
        let rows = min(max(Int((Double(targetBlocks) / Double(columns)).rounded()), 1), targetBlocks)
        let side = (x: width / Double(columns), y: height / Double(rows))
        var counts = [Int](repeating: 0, count: columns * rows)
        for point in points {
            let column = min(max(Int(((point.x - low.x) / side.x).rounded(.down)), 0), columns - 1)
            // Row 0 is the northernmost (largest y).
            let row = min(max(Int(((high.y - point.y) / side.y).rounded(.down)), 0), rows - 1)
            counts[row * columns + column] += 1
        }
        var areas: [SurveyArea] = []
        for row in 0..<rows {
            for column in 0..<columns {
                let west = low.x + Double(column) * side.x
                let north = high.y - Double(row) * side.y
                let polygon = Polygon([
                    Point(x: west, y: north - side.y), Point(x: west + side.x, y: north - side.y),
                    Point(x: west + side.x, y: north), Point(x: west, y: north),
                ])
                let letters = Array("ABCDEFGHIJ")
                let count = counts[row * columns + column]
                areas.append(
                    SurveyArea(
                        name: "\(letters[column % letters.count])\(row + 1)", floor: floor, polygon: polygon,
                        samples: count, isChecked: count >= minimum, isBlock: true))
            }
        }
        return areas
    }
}
