public import WhereaboutsCore
public import WhereaboutsJSON

/// A floor's ``AccuracyPlan`` as JSON, for the map editor's planning view (`POST /edit/api/check` answers one per
/// floor under `"plan"`).
///
/// ```json
/// {"floor": 1, "origin": [x, y], "cell_size": 0.5, "columns": 40, "rows": 24,
///  "accuracy": [1.84, 1.9, null, …], "agents_heard": [4, 4, 0, …],
///  "median": 1.9, "p90": 2.6, "sparse_share": 0.05,
///  "zones": [{"minor": 1, "name": "Kitchen", "accuracy": 2.1, "width": 3.5, "confused_share": 0.3,
///             "confused_with": [2]}]}
/// ```
///
/// `accuracy` holds `columns × rows` values row by row, row 0 at the smallest y, column 0 at the smallest x, from
/// `origin` (the corner of cell (0, 0)): the radius in metres that should hold about 68 % of the locator's fixes of a
/// tag standing in the cell (as the locator's published `accuracy`), to the centimetre; `null` where nobody can
/// stand or no agent hears a tag. `agents_heard` is, per cell, how many agents on the floor hear a tag there.
/// `median` and `p90` are over the free cells agents hear (`null` when none), `sparse_share` the share of the free
/// area heard by fewer than three agents. Per zone: `accuracy` its cells' mean (`null` when none is heard), `width`
/// its narrowest width, `confused_share` the share of its cells whose radius reaches another zone, and
/// `confused_with` those zones' minors, most reached first.
public enum AccuracyPlanJSON {
    /// One floor's plan.
    public static func encode(_ plan: AccuracyPlan) -> JSONValue {
        let centimetres = { (value: Double?) -> JSONValue in value.map { .number($0.rounded(toDecimals: 2)) } ?? .null }
        let zones = plan.zones.map { zone -> JSONValue in
            .object(
                JSONObject([
                    ("minor", .number(Double(zone.key.minor))),
                    ("name", .string(zone.name)),
                    ("accuracy", centimetres(zone.accuracy)),
                    ("width", centimetres(zone.width)),
                    ("confused_share", .number(zone.confusedShare.rounded(toDecimals: 3))),
                    ("confused_with", .array(zone.confusedWith.map { .number(Double($0.minor)) })),
                ]))
        }
        return .object(
            JSONObject([
                ("floor", .number(Double(plan.floor))),
                ("origin", .array([.number(plan.origin.x), .number(plan.origin.y)])),
                ("cell_size", .number(plan.cellSize)),
                ("columns", .number(Double(plan.columns))),
                ("rows", .number(Double(plan.rows))),
                ("accuracy", .array(plan.accuracy.map(centimetres))),
                ("agents_heard", .array(plan.agentsHeard.map { .number(Double($0)) })),
                ("median", centimetres(plan.quantile(0.5))),
                ("p90", centimetres(plan.quantile(0.9))),
                ("sparse_share", .number(plan.sparseShare.rounded(toDecimals: 3))),
                ("zones", .array(zones)),
            ]))
    }

    /// Every floor's plan of `map`, in the map's order: what the editor's check answers under `"plan"`.
    public static func encode(
        _ map: FloorMap, configuration: AccuracyPlan.Configuration = AccuracyPlan.Configuration()
    ) -> JSONValue {
        .array(AccuracyPlan.floors(of: map, configuration: configuration).map(encode))
    }
}
