import CommandLineSupport
import WhereaboutsCore
import WhereaboutsSettings
import WhereaboutsSimulation
import WhereaboutsWire

/// `whereabouts render`: draws the map, and the last positions if given, as SVG.
enum RenderCommand {
    static let usage = "usage: whereabouts render --map M [--positions P.jsonl] --out FILE.svg"

    static let table: [Setting] = [.value("map"), .value("out"), .value("positions")]

    static func run(_ settings: Settings) throws -> ExitStatus {
        let mapPath = try settings.required("map")
        let outPath = try settings.required("out")
        let positionsPath = settings.value("positions")

        let map = try RecordingFiles.map(mapPath)
        let positions = try positionsPath.map { try RecordingFiles.records($0, as: PositionRecord.self).records } ?? []
        let svg = MapRenderer().svg(map: map, positions: positions)
        try FileAccess.write(Array(svg.utf8), to: outPath)
        return .success
    }
}
