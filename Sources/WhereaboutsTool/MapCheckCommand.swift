import CommandLineSupport
import WhereaboutsCore
import WhereaboutsMapFile
import WhereaboutsSettings

/// `whereabouts map check FILE`: validates a map and summarises it, with the accuracy its agents should give
/// (``AccuracyPlan``, MapPlanReport.swift) and warnings where it falls short (the exit status stays 0).
enum MapCheckCommand {
    static let interface = CommandInterface(
        program: "whereabouts map check", synopsis: "whereabouts map check FILE", sections: [], positionalLimit: 1)

    static func run(_ settings: Settings) throws -> ExitStatus {
        guard let path = settings.positionals.first else { throw SettingsError.invalid(interface.synopsisText) }
        let bytes = try FileAccess.read(path)
        switch FloorMap.parse(bytes) {
        case .success(let map):
            print(summary(of: map, path: path))
            return .success
        case .failure(let problems):
            printError("\(path): \(problems.problems.count) problem\(problems.problems.count == 1 ? "" : "s")")
            for problem in problems.problems { printError("  \(problem)") }
            return .usage
        }
    }

    static func summary(of map: FloorMap, path: String) -> String {
        var lines = ["\(path): ok"]
        lines.append("site     \(map.site.name) (\(map.site.uuid))")
        lines.append(
            "model    measured power \(map.model.measuredPower) dBm at 1 m, path-loss exponent \(map.model.pathLossExponent)"
        )
        var warnings: [String] = []
        for floor in map.floors {
            let zones = map.zones(onFloor: floor.major)
            let agents = map.agents.filter { $0.floor == floor.major }
            let area = (floor.outline.area * 10).rounded() / 10
            lines.append(
                "floor \(floor.major)  \(floor.name): \(area) m², \(zones.count) zones, \(agents.count) agents"
            )
            lines.append("  " + cells(of: floor, map: map))
            let plan = AccuracyPlan(map: map, floor: floor.major)
            if let plan { lines.append("  " + MapPlanReport.floorLine(plan)) }
            let names = Dictionary(zones.map { ($0.minor, $0.name) }, uniquingKeysWith: { a, _ in a })
            for zone in zones {
                let planned = plan?.zones.first { $0.key == zone.key }
                lines.append(
                    "  zone \(zone.minor)  \(zone.name) (\((zone.polygon.area * 10).rounded() / 10) m²)"
                        + (planned.map { MapPlanReport.zoneSuffix($0, names: names) } ?? ""))
            }
            warnings += plan.map(MapPlanReport.warnings) ?? []
        }
        for stairs in map.stairs {
            let floors = stairs.floors.map(String.init).joined(separator: ", ")
            lines.append("stairs   floors \(floors) at (\(stairs.position.x), \(stairs.position.y))")
        }
        lines.append(
            "totals   \(map.floors.count) floor\(map.floors.count == 1 ? "" : "s"), \(map.zones.count) zones, \(map.agents.count) agents, "
                + "\(map.knownTags.count) known tags, \(map.walls.count) walls, \(map.stairs.count) stairs"
        )
        return (lines + warnings).joined(separator: "\n")
    }

    /// The grid's cell on `floor` as the locator chooses it (with the default tracker), where it comes from, and the
    /// narrowest walkable passage of the floor's free space, which sets it unless the map does.
    static func cells(of floor: Floor, map: FloorMap) -> String {
        let resolution = GridResolution(floor: floor, map: map, measuring: true)
        var line = "cells    \(resolution.cellSize) m, from the \(resolution.source.rawValue)"
        if resolution.preferredCellSize != resolution.cellSize {
            line += " (\(resolution.preferredCellSize) m coarsened to fit the cost budget)"
        }
        if let width = resolution.passageWidth, let centre = resolution.passageCentre {
            let rounded = { (value: Double) in (value * 100).rounded() / 100 }
            line += "; narrowest passage \(rounded(width)) m at (\(rounded(centre.x)), \(rounded(centre.y)))"
        } else {
            line += "; no walkable passage found"
        }
        return line
    }
}
