public import WhereaboutsCore
public import WhereaboutsJSON

/// A map file as a JSON document: read with the loader's limits, edited, and written back as text that loads.
///
/// ``apply(agents:powers:to:)`` writes fitted constants in, keeping everything else of the user's file as it was.
/// Agents get `rssi_offset` and `path_loss_exponent` (replaced where present, added after their other members
/// where not); tags get `measured_power`, and a tag the map does not list yet is appended to `tags` (created
/// when missing) with its identity as its name. Values are rounded to 0.01 dB, 0.001 and 0.1 dBm. A tag given a
/// deviation of its power gets it as `measured_power_sigma` (0.1 dB, within the loader's 0.1–30 dB). Agents given
/// a radio map get it as `radio_map` (docs/map.md). An accuracy scale goes into `model.accuracy_scale` (0.01, the
/// `model` object created when missing).
public enum MapDocument {
    /// The document with the constants written in. Agents and tags the document does not have, and members that
    /// are not objects, are left alone.
    public static func apply(
        agents: [String: AgentConstants],
        powers: [TagIdentity: Double],
        powerDeviations: [TagIdentity: Double] = [:],
        radioMaps: [String: RadioSurface] = [:],
        accuracyScale: Double? = nil,
        to document: JSONValue
    ) -> JSONValue {
        guard var root = document.object else { return document }
        if let accuracyScale, root["model"] == nil || root["model"]?.object != nil {
            var model = root["model"]?.object ?? JSONObject()
            model["accuracy_scale"] = .number(accuracyScale.rounded(toDecimals: 2))
            root["model"] = .object(model)
        }
        if !agents.isEmpty || !radioMaps.isEmpty, let elements = root["agents"]?.array {
            root["agents"] = .array(
                elements.map { element in
                    guard var agent = element.object, let id = agent["id"]?.string else { return element }
                    if let constants = agents[id] {
                        agent["rssi_offset"] = .number(constants.rssiOffset.rounded(toDecimals: 2))
                        agent["path_loss_exponent"] = .number(constants.pathLossExponent.rounded(toDecimals: 3))
                    }
                    if let surface = radioMaps[id] { agent["radio_map"] = json(surface) }
                    return .object(agent)
                })
        }
        if !powers.isEmpty {
            var elements = root["tags"]?.array ?? []
            var pending = powers
            for (position, element) in elements.enumerated() {
                guard var tag = element.object, let text = tag["id"]?.string, let identity = TagIdentity(text),
                    let power = pending.removeValue(forKey: identity)
                else { continue }
                tag["measured_power"] = .number(power.rounded(toDecimals: 1))
                if let deviation = powerDeviations[identity] { tag["measured_power_sigma"] = sigma(deviation) }
                elements[position] = .object(tag)
            }
            for (identity, power) in pending.sorted(by: { $0.key < $1.key }) {
                var members: [(String, JSONValue)] = [
                    ("id", .string(identity.description)), ("name", .string(identity.description)),
                    ("measured_power", .number(power.rounded(toDecimals: 1))),
                ]
                if let deviation = powerDeviations[identity] {
                    members.append(("measured_power_sigma", sigma(deviation)))
                }
                elements.append(.object(JSONObject(members)))
            }
            if root["tags"] == nil || root["tags"]?.array != nil { root["tags"] = .array(elements) }
        }
        return .object(root)
    }

    /// A power's deviation as the map file holds it: 0.1 dB, within the loader's 0.1–30 dB.
    static func sigma(_ deviation: Double) -> JSONValue {
        .number(min(max(deviation.isFinite ? deviation : 30, 0.1), 30).rounded(toDecimals: 1))
    }

    /// A radio surface as the map file holds it: residuals to 0.1 dB, deviations to 0.01 dB.
    static func json(_ surface: RadioSurface) -> JSONValue {
        var members: [(String, JSONValue)] = [
            (
                "origin",
                .array([
                    .number(surface.origin.x.rounded(toDecimals: 3)), .number(surface.origin.y.rounded(toDecimals: 3)),
                ])
            ),
            ("cell_size", .number(surface.cellSize)),
            ("columns", .number(Double(surface.columns))),
            ("rows", .number(Double(surface.rows))),
            ("prior_sd", .number(surface.priorDeviation.rounded(toDecimals: 2))),
        ]
        if let scale = surface.lengthScale { members.append(("length_scale", .number(scale.rounded(toDecimals: 2)))) }
        if let noise = surface.noiseDeviation { members.append(("noise_sd", .number(noise.rounded(toDecimals: 2)))) }
        members.append(("mean", .array(surface.mean.map { .number($0.rounded(toDecimals: 1)) })))
        members.append(("sd", .array(surface.deviation.map { .number(max($0, 0.01).rounded(toDecimals: 2)) })))
        return .object(JSONObject(members))
    }

    /// The parser for map files: the map loader and the editor read with the same size and depth limits.
    static let parser = JSONParser(maximumBytes: 64 << 20, maximumDepth: 32, keepsOverflowingNumbers: true)

    /// Parses a map file's bytes as the map loader does (same size and depth limits).
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        try parser.parse(bytes)
    }

    /// The document as the file's new text (pretty, with a final newline), after checking that it loads.
    ///
    /// - Throws: the problems when it does not load; nothing should be written then.
    public static func text(_ document: JSONValue) throws(MapProblems) -> String {
        let text = JSONWriter(pretty: true).string(document) + "\n"
        if case .failure(let problems) = FloorMap.parse(Array(text.utf8)) { throw problems }
        return text
    }
}
