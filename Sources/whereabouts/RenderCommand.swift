import CommandLineSupport
import WhereaboutsCore
import WhereaboutsSimulation
import WhereaboutsWire

/// `whereabouts render`: draws the map, and the last positions if given, as SVG.
enum RenderCommand {
    static let usage = "usage: whereabouts render --map M [--positions P.jsonl] --out FILE.svg"

    static func run(_ arguments: inout Arguments) throws -> ExitStatus {
        guard let mapPath = try arguments.option("map") else { throw UsageError("--map is required\n\(usage)") }
        guard let outPath = try arguments.option("out") else { throw UsageError("--out is required\n\(usage)") }
        let positionsPath = try arguments.option("positions")
        try arguments.finish()

        let map = try RecordingFiles.map(mapPath)
        let positions = try positionsPath.map { try RecordingFiles.records($0, as: PositionRecord.self).records } ?? []
        let svg = MapRenderer().svg(map: map, positions: positions)
        try FileAccess.write(Array(svg.utf8), to: outPath)
        return .success
    }
}
