import CommandLineSupport
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsMapFile
import WhereaboutsWire

/// The synthetic floor the benchmarks run on: one floor of square rooms, one agent near the middle of each room,
/// and each room a zone.
///
/// 50 agents give a 100 m × 50 m floor (10 × 5 rooms of 10 m); 200 agents give 200 m × 100 m. Agents stand up to
/// a metre off the room centre (seeded), so that the layout is grid-ish rather than perfectly regular.
struct BenchMap {
    /// The site every benchmark uses (tags carry it, so the engine tracks them).
    static let siteUUID = "f7826da6-4fa2-4e98-8024-bc5b71e0893e"
    /// Room (and agent) spacing in metres.
    static let spacing = 10.0

    let columns: Int
    let rows: Int
    /// The map as JSON text, for files the locator reads.
    let text: String
    /// The parsed map.
    let map: FloorMap

    var width: Double { Double(columns) * Self.spacing }
    var height: Double { Double(rows) * Self.spacing }

    /// Lays out `agents` agents (rounded down to a whole grid twice as wide as deep).
    init(agents: Int, seed: UInt64 = 1) throws {
        let columns = max(Int((Double(2 * agents)).squareRoot().rounded()), 1)
        let rows = max(agents / columns, 1)
        self.columns = columns
        self.rows = rows
        var generator = SplitMix64(seed: seed)
        let width = Double(columns) * Self.spacing
        let height = Double(rows) * Self.spacing
        func point(_ x: Double, _ y: Double) -> JSONValue { .array([.number(x), .number(y)]) }
        func rectangle(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double) -> JSONValue {
            .array([point(x0, y0), point(x1, y0), point(x1, y1), point(x0, y1)])
        }
        var zones: [JSONValue] = []
        var agentList: [JSONValue] = []
        for row in 0..<rows {
            for column in 0..<columns {
                let index = row * columns + column
                let x0 = Double(column) * Self.spacing
                let y0 = Double(row) * Self.spacing
                zones.append(
                    .object(
                        JSONObject([
                            ("floor", .number(1)), ("minor", .number(Double(index + 1))),
                            ("name", .string("Room \(index + 1)")),
                            ("polygon", rectangle(x0, y0, x0 + Self.spacing, y0 + Self.spacing)),
                        ])))
                let jitterX = Double.random(in: -1...1, using: &generator)
                let jitterY = Double.random(in: -1...1, using: &generator)
                agentList.append(
                    .object(
                        JSONObject([
                            ("id", .string("a\(index)")), ("floor", .number(1)),
                            ("x", .number(x0 + Self.spacing / 2 + jitterX)),
                            ("y", .number(y0 + Self.spacing / 2 + jitterY)), ("z", .number(2.5)),
                        ])))
            }
        }
        let document = JSONValue.object(
            JSONObject([
                ("description", .string("whereabouts-bench: \(columns) x \(rows) rooms of 10 m, one agent each")),
                ("site", .object(JSONObject([("uuid", .string(Self.siteUUID)), ("name", .string("Bench"))]))),
                (
                    "model",
                    .object(
                        JSONObject([
                            ("measured_power", .number(-59)), ("path_loss_exponent", .number(2)),
                            ("tag_height", .number(1.2)),
                        ]))
                ),
                (
                    "floors",
                    .array([
                        .object(
                            JSONObject([
                                ("major", .number(1)), ("name", .string("Ground")),
                                ("outline", rectangle(0, 0, width, height)),
                            ]))
                    ])
                ),
                ("zones", .array(zones)),
                ("agents", .array(agentList)),
            ]))
        text = JSONWriter(pretty: true).string(document) + "\n"
        switch FloorMap.parse(Array(text.utf8)) {
        case .success(let map): self.map = map
        case .failure(let problems):
            throw RuntimeError("the synthetic map is invalid: \(problems.problems.map(\.description))")
        }
    }
}

extension BenchMap {
    /// Each agent's readings topic, in the map's order.
    func readingTopics() throws -> [String] {
        let topics = Topics(site: map.site.uuid)
        return try map.agents.map { agent in
            guard let id = AgentID(agent.id) else { throw RuntimeError("bad agent id \(agent.id)") }
            return topics.readings(agent: id).name
        }
    }
}
