import WhereaboutsCore

/// What `whereabouts map check` says of a map's expected accuracy (an ``AccuracyPlan`` per floor): a line per floor,
/// the figure beside each zone, and warnings that leave the exit status alone (the map is valid; it may just be
/// short of agents).
enum MapPlanReport {
    /// A floor heard by fewer than three agents over at least this share of its free area is warned of: a corner
    /// or two out of three agents' reach is normal, a room is not.
    static let sparseWarningShare = 0.05

    /// The floor's line: median and p90 over the free cells agents hear, and the sparse share.
    static func floorLine(_ plan: AccuracyPlan) -> String {
        let figure = { (value: Double?) in value.map { "\(metres($0)) m" } ?? "none (no agent hears this floor)" }
        return "plan     expected accuracy median \(figure(plan.quantile(0.5))), p90 \(figure(plan.quantile(0.9)))"
            + " over \(plan.cellSize) m cells; \(percent(plan.sparseShare)) % of the free area heard by fewer than"
            + " \(plan.configuration.minimumAgents) agents"
    }

    /// What follows a zone's line: its expected accuracy and the zones its fixes may land in.
    static func zoneSuffix(_ zone: AccuracyPlan.ZonePlan, names: [UInt16: String]) -> String {
        guard let accuracy = zone.accuracy else { return ", no agent hears it" }
        var text = ", expected accuracy \(metres(accuracy)) m"
        if zone.confusedShare > 0 {
            let others = zone.confusedWith.prefix(3).map { names[$0.minor] ?? "\($0.minor)" }
            text += ", \(percent(zone.confusedShare)) % of it within reach of \(others.joined(separator: ", "))"
        }
        return text
    }

    /// The warnings for one floor's plan: zones whose expected accuracy is wider than half their narrowest width,
    /// zones no agent hears, and a floor much of whose free area fewer than three agents hear.
    ///
    /// Why half the width: the circle holding 68 % of fixes is then wider than the zone, and a tag anywhere in a
    /// square zone of that width is fixed inside it only about half the time (errors Gaussian, 68 % radius = 1.51 σ;
    /// each axis keeps 74 %); the zone's occupancy then rests on the tracker's dwell and hysteresis alone.
    static func warnings(_ plan: AccuracyPlan) -> [String] {
        var lines: [String] = []
        for zone in plan.zones {
            let name = "floor \(plan.floor), zone \"\(zone.name)\""
            guard let accuracy = zone.accuracy else {
                lines.append("warning  \(name): no agent hears a tag there")
                continue
            }
            if accuracy > zone.width / 2 {
                lines.append(
                    "warning  \(name): expected accuracy \(metres(accuracy)) m, wider than the zone "
                        + "(\(metres(zone.width)) m across)")
            }
        }
        if plan.freeCells > 0, plan.sparseShare >= sparseWarningShare {
            lines.append(
                "warning  floor \(plan.floor): \(percent(plan.sparseShare)) % of the free area is heard by fewer "
                    + "than \(plan.configuration.minimumAgents) agents")
        }
        return lines
    }

    private static func metres(_ value: Double) -> String { "\((value * 10).rounded() / 10)" }

    private static func percent(_ share: Double) -> Int { Int((share * 100).rounded()) }
}
