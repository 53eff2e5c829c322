import CommandLineSupport
import WhereaboutsCore
import WhereaboutsMapFile
import WhereaboutsSettings

/// `whereabouts map check FILE`: validates a map and summarises it.
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
        for floor in map.floors {
            let zones = map.zones(onFloor: floor.major)
            let agents = map.agents.filter { $0.floor == floor.major }
            let area = (floor.outline.area * 10).rounded() / 10
            lines.append(
                "floor \(floor.major)  \(floor.name): \(area) m², \(zones.count) zones, \(agents.count) agents"
            )
            for zone in zones {
                lines.append("  zone \(zone.minor)  \(zone.name) (\((zone.polygon.area * 10).rounded() / 10) m²)")
            }
        }
        for stairs in map.stairs {
            let floors = stairs.floors.map(String.init).joined(separator: ", ")
            lines.append("stairs   floors \(floors) at (\(stairs.position.x), \(stairs.position.y))")
        }
        lines.append(
            "totals   \(map.floors.count) floor\(map.floors.count == 1 ? "" : "s"), \(map.zones.count) zones, \(map.agents.count) agents, "
                + "\(map.knownTags.count) known tags, \(map.walls.count) walls, \(map.stairs.count) stairs"
        )
        return lines.joined(separator: "\n")
    }
}
