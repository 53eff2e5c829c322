public import WhereaboutsCore
public import WhereaboutsJSON

extension FloorMap {
    /// Parses and validates a map document.
    ///
    /// - Returns: the map, or every problem found, each with its JSON path. Nothing is half-loaded.
    public static func parse(_ bytes: some Collection<UInt8>) -> Result<FloorMap, MapProblems> {
        let document: JSONValue
        do {
            document = try MapDocument.parse(bytes)
        } catch {
            let location = lineAndColumn(of: error.offset, in: Array(bytes))
            return .failure(
                MapProblems(problems: [
                    MapProblem(
                        path: "$", message: "not valid JSON: \(error) (line \(location.0), column \(location.1))")
                ])
            )
        }
        return load(document)
    }

    /// Validates a parsed map document.
    public static func load(_ document: JSONValue) -> Result<FloorMap, MapProblems> {
        var reader = MapReader()
        let map = reader.readMap(document)
        if let map, reader.problems.isEmpty { return .success(map) }
        return .failure(MapProblems(problems: reader.problems))
    }
}

private func lineAndColumn(of offset: Int, in bytes: [UInt8]) -> (Int, Int) {
    var line = 1
    var column = 1
    for byte in bytes.prefix(offset) {
        if byte == 0x0A {
            line += 1
            column = 1
        } else {
            column += 1
        }
    }
    return (line, column)
}

/// Reads the map format field by field, collecting every problem rather than stopping at the first. The built
/// structure (walls and their doors, obstacles, stairs) is read in MapReader+Structure.swift.
struct MapReader {
    var problems: [MapProblem] = []

    mutating func problem(_ path: String, _ message: String) {
        problems.append(MapProblem(path: path, message: message))
    }

    // MARK: - Shapes of values

    mutating func object(_ value: JSONValue?, _ path: String, allowed: Set<String>) -> JSONObject? {
        guard let value else {
            problem(path, "is required")
            return nil
        }
        guard let object = value.object else {
            problem(path, "must be an object, not \(value.kindName)")
            return nil
        }
        for key in object.keys where !allowed.contains(key) {
            let known = allowed.sorted().joined(separator: ", ")
            problem("\(path).\(key)", "unknown key (known keys here: \(known))")
        }
        return object
    }

    mutating func array(_ value: JSONValue?, _ path: String, required: Bool = true) -> [JSONValue]? {
        guard let value else {
            if required { problem(path, "is required") }
            return nil
        }
        guard let array = value.array else {
            problem(path, "must be an array, not \(value.kindName)")
            return nil
        }
        return array
    }

    mutating func string(_ value: JSONValue?, _ path: String, required: Bool = true) -> String? {
        guard let value else {
            if required { problem(path, "is required") }
            return nil
        }
        guard let text = value.string else {
            problem(path, "must be a string, not \(value.kindName)")
            return nil
        }
        return text
    }

    mutating func name(_ value: JSONValue?, _ path: String) -> String? {
        guard let text = string(value, path) else { return nil }
        guard !text.isEmpty, text.count <= 128 else {
            problem(path, "must be 1 to 128 characters")
            return nil
        }
        return text
    }

    mutating func number(
        _ value: JSONValue?,
        _ path: String,
        in range: ClosedRange<Double>,
        required: Bool = true
    ) -> Double? {
        guard let value else {
            if required { problem(path, "is required") }
            return nil
        }
        guard case .number(let number) = value else {
            problem(path, "must be a number, not \(value.kindName)")
            return nil
        }
        guard number.isFinite else {
            problem(path, "must be a finite number")
            return nil
        }
        guard range.contains(number) else {
            problem(path, "must be between \(range.lowerBound) and \(range.upperBound), not \(number)")
            return nil
        }
        return number
    }

    mutating func identifierNumber(_ value: JSONValue?, _ path: String) -> UInt16? {
        guard let number = number(value, path, in: 0...65535) else { return nil }
        guard number.rounded() == number else {
            problem(path, "must be a whole number from 0 to 65535")
            return nil
        }
        return UInt16(number)
    }

    mutating func point(_ value: JSONValue?, _ path: String) -> Point? {
        guard let elements = array(value, path) else { return nil }
        guard elements.count == 2 else {
            problem(path, "must be a point [x, y] in metres")
            return nil
        }
        let x = number(elements[0], "\(path)[0]", in: -100_000...100_000)
        let y = number(elements[1], "\(path)[1]", in: -100_000...100_000)
        guard let x, let y else { return nil }
        return Point(x: x, y: y)
    }

    mutating func polygon(_ value: JSONValue?, _ path: String) -> Polygon? {
        guard let elements = array(value, path) else { return nil }
        var points: [Point] = []
        var complete = true
        for (index, element) in elements.enumerated() {
            if let point = point(element, "\(path)[\(index)]") { points.append(point) } else { complete = false }
        }
        guard complete else { return nil }
        guard points.count >= 3 else {
            problem(path, "a polygon needs at least 3 points, found \(points.count)")
            return nil
        }
        for index in points.indices where points[index].distance(to: points[(index + 1) % points.count]) < 1e-6 {
            problem("\(path)[\((index + 1) % points.count)]", "repeats the previous point (degenerate polygon)")
            return nil
        }
        let polygon = Polygon(points)
        let spread = points.dropFirst().max { points[0].distance(to: $0) < points[0].distance(to: $1) } ?? points[0]
        if points.allSatisfy({ abs((spread - points[0]).cross($0 - points[0])) < 1e-9 }) {
            problem(path, "degenerate polygon: all its points lie on one line")
            return nil
        }
        guard !polygon.isSelfIntersecting else {
            problem(path, "polygon edges cross each other (self-intersecting)")
            return nil
        }
        guard polygon.area >= 0.01 else {
            problem(path, "degenerate polygon: its area is \(polygon.area) m²")
            return nil
        }
        return polygon
    }

    // MARK: - The document

    mutating func readMap(_ document: JSONValue) -> FloorMap? {
        let rootKeys: Set = [
            "site", "model", "floors", "zones", "agents", "tags", "walls", "stairs", "obstacles", "description",
        ]
        guard let root = object(document, "$", allowed: rootKeys) else { return nil }
        if let description = root["description"] { _ = string(description, "$.description") }
        let site = readSite(root["site"])
        let model = readModel(root["model"])
        let floors = readFloors(root["floors"])
        let floorsByMajor = Dictionary(floors.map { ($0.floor.major, $0.floor) }, uniquingKeysWith: { a, _ in a })
        let zones = readZones(root["zones"], floors: floorsByMajor)
        let agents = readAgents(root["agents"], floors: floorsByMajor)
        let tags = readTags(root["tags"])
        let walls = readWalls(root["walls"], floors: floorsByMajor)
        let stairs = readStairs(root["stairs"], floors: floorsByMajor)
        let obstacles = readObstacles(root["obstacles"], floors: floorsByMajor)
        guard let site, let model else { return nil }
        return FloorMap(
            site: site,
            floors: floors.map(\.floor),
            zones: zones,
            agents: agents,
            knownTags: tags,
            walls: walls,
            stairs: stairs,
            obstacles: obstacles,
            model: model
        )
    }

    mutating func readSite(_ value: JSONValue?) -> Site? {
        guard let object = object(value, "$.site", allowed: ["uuid", "name"]) else { return nil }
        let name = name(object["name"], "$.site.name")
        var uuid: BeaconUUID?
        if let text = string(object["uuid"], "$.site.uuid") {
            uuid = BeaconUUID(text)
            if uuid == nil {
                problem("$.site.uuid", "not a UUID of the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx: \"\(text)\"")
            }
        }
        guard let uuid, let name else { return nil }
        return Site(uuid: uuid, name: name)
    }

    mutating func readModel(_ value: JSONValue?) -> RadioModel? {
        var model = RadioModel()
        guard let value else { return model }
        let keys: Set = [
            "measured_power", "path_loss_exponent", "tag_height", "reading_max_age", "tag_timeout", "agent_timeout",
            "coverage_radius", "floor_loss", "cell_size", "accuracy_scale",
        ]
        guard let object = object(value, "$.model", allowed: keys) else { return nil }
        let before = problems.count
        if let power = number(object["measured_power"], "$.model.measured_power", in: -127...20, required: false) {
            model.measuredPower = power
        }
        if let exponent = number(
            object["path_loss_exponent"],
            "$.model.path_loss_exponent",
            in: 1...6,
            required: false
        ) {
            model.pathLossExponent = exponent
        }
        if let height = number(object["tag_height"], "$.model.tag_height", in: 0...10, required: false) {
            model.tagHeight = height
        }
        if let loss = number(object["floor_loss"], "$.model.floor_loss", in: 0...60, required: false) {
            model.floorLoss = loss
        }
        if let age = number(object["reading_max_age"], "$.model.reading_max_age", in: 0.5...600, required: false) {
            model.readingMaxAge = age
        }
        if let timeout = number(object["tag_timeout"], "$.model.tag_timeout", in: 1...86_400, required: false) {
            model.tagTimeout = timeout
        }
        if let timeout = number(object["agent_timeout"], "$.model.agent_timeout", in: 1...86_400, required: false) {
            model.agentTimeout = timeout
        }
        if let radius = number(object["coverage_radius"], "$.model.coverage_radius", in: 0.5...100, required: false) {
            model.coverageRadius = radius
        }
        if let side = number(object["cell_size"], "$.model.cell_size", in: 0.05...5, required: false) {
            model.cellSize = side
        }
        if let scale = number(object["accuracy_scale"], "$.model.accuracy_scale", in: 0.25...4, required: false) {
            model.accuracyScale = scale
        }
        return problems.count == before ? model : nil
    }

    mutating func readFloors(_ value: JSONValue?) -> [(floor: Floor, path: String)] {
        guard let elements = array(value, "$.floors") else { return [] }
        if elements.isEmpty { problem("$.floors", "a map needs at least one floor") }
        var floors: [(floor: Floor, path: String)] = []
        var seen: [UInt16: String] = [:]
        for (index, element) in elements.enumerated() {
            let path = "$.floors[\(index)]"
            guard let object = object(element, path, allowed: ["major", "name", "height", "outline", "underlay"])
            else { continue }
            let major = identifierNumber(object["major"], "\(path).major")
            let name = name(object["name"], "\(path).name")
            let height = number(object["height"], "\(path).height", in: -1000...1000, required: false) ?? 0
            let outline = polygon(object["outline"], "\(path).outline")
            // The editor's picture under the plan: checked here, kept out of the engine's Floor (FloorUnderlay).
            if let underlay = object["underlay"] { _ = readUnderlay(underlay, "\(path).underlay") }
            if let major {
                if let first = seen[major] {
                    problem("\(path).major", "duplicate major \(major) (also at \(first))")
                    continue
                }
                seen[major] = path
            }
            guard let major, let name, let outline else { continue }
            floors.append((Floor(major: major, name: name, outline: outline, height: height), path))
        }
        return floors
    }

    mutating func floorReference(_ value: JSONValue?, _ path: String, floors: [UInt16: Floor]) -> Floor? {
        guard let major = identifierNumber(value, path) else { return nil }
        guard let floor = floors[major] else {
            problem(path, "no floor has major \(major)")
            return nil
        }
        return floor
    }

    mutating func readZones(_ value: JSONValue?, floors: [UInt16: Floor]) -> [Zone] {
        guard let elements = array(value, "$.zones", required: false) else { return [] }
        var zones: [(zone: Zone, path: String)] = []
        var seen: [ZoneKey: String] = [:]
        for (index, element) in elements.enumerated() {
            let path = "$.zones[\(index)]"
            guard let object = object(element, path, allowed: ["floor", "minor", "name", "polygon"]) else { continue }
            let floor = floorReference(object["floor"], "\(path).floor", floors: floors)
            let minor = identifierNumber(object["minor"], "\(path).minor")
            let name = name(object["name"], "\(path).name")
            let polygon = polygon(object["polygon"], "\(path).polygon")
            guard let floor, let minor, let name, let polygon else { continue }
            let zone = Zone(floor: floor.major, minor: minor, name: name, polygon: polygon)
            if let first = seen[zone.key] {
                problem("\(path).minor", "duplicate minor \(minor) on floor \(floor.major) (also at \(first))")
                continue
            }
            seen[zone.key] = path
            if !floor.outline.encloses(polygon) {
                problem("\(path).polygon", "zone \"\(name)\" leaves the outline of floor \(floor.major)")
            }
            for other in zones where other.zone.floor == zone.floor && other.zone.polygon.overlaps(polygon) {
                problem("\(path).polygon", "zone \"\(name)\" overlaps zone \"\(other.zone.name)\" (\(other.path))")
            }
            zones.append((zone, path))
        }
        return zones.map(\.zone)
    }

    /// An agent's radio map: a raster of residuals (dB) and their standard deviations, as `calibrate` writes it.
    mutating func radioSurface(_ value: JSONValue, _ path: String) -> RadioSurface? {
        let keys: Set = [
            "origin", "cell_size", "columns", "rows", "mean", "sd", "prior_sd", "length_scale", "noise_sd",
        ]
        guard let object = object(value, path, allowed: keys) else { return nil }
        let origin = point(object["origin"], "\(path).origin")
        let cellSize = number(object["cell_size"], "\(path).cell_size", in: 0.1...5)
        let columns = number(object["columns"], "\(path).columns", in: 1...4000)
        let rows = number(object["rows"], "\(path).rows", in: 1...4000)
        let prior = number(object["prior_sd"], "\(path).prior_sd", in: 0.1...30)
        let lengthScale = number(object["length_scale"], "\(path).length_scale", in: 0.01...1000, required: false)
        let noise = number(object["noise_sd"], "\(path).noise_sd", in: 0...100, required: false)
        for (key, field) in [("columns", columns), ("rows", rows)] where field.map({ $0.rounded() != $0 }) ?? false {
            problem("\(path).\(key)", "must be a whole number")
        }
        guard let origin, let cellSize, let columns, let rows, let prior, columns.rounded() == columns,
            rows.rounded() == rows
        else { return nil }
        let count = Int(columns) * Int(rows)
        guard count <= 4_000_000 else {
            problem(path, "a radio map holds at most 4,000,000 cells, not \(count)")
            return nil
        }
        func values(_ key: String, in range: ClosedRange<Double>) -> [Double]? {
            guard let elements = array(object[key], "\(path).\(key)") else { return nil }
            guard elements.count == count else {
                problem("\(path).\(key)", "must hold columns × rows = \(count) numbers, not \(elements.count)")
                return nil
            }
            var result: [Double] = []
            result.reserveCapacity(count)
            for (index, element) in elements.enumerated() {
                guard case .number(let number) = element, number.isFinite, range.contains(number) else {
                    problem(
                        "\(path).\(key)[\(index)]",
                        "must be a number between \(range.lowerBound) and \(range.upperBound)")
                    return nil
                }
                result.append(number)
            }
            return result
        }
        guard let mean = values("mean", in: -60...60), let deviation = values("sd", in: 0.01...60) else { return nil }
        var surface = RadioSurface(
            origin: origin, cellSize: cellSize, columns: Int(columns), rows: Int(rows), mean: mean,
            deviation: deviation, priorDeviation: prior)
        surface.lengthScale = lengthScale
        surface.noiseDeviation = noise
        return surface
    }

    mutating func readAgents(_ value: JSONValue?, floors: [UInt16: Floor]) -> [Agent] {
        guard let elements = array(value, "$.agents") else { return [] }
        var agents: [Agent] = []
        var seen: [String: String] = [:]
        let keys: Set = ["id", "floor", "x", "y", "z", "rssi_offset", "path_loss_exponent", "radio_map"]
        for (index, element) in elements.enumerated() {
            let path = "$.agents[\(index)]"
            guard let object = object(element, path, allowed: keys) else { continue }
            var id = string(object["id"], "\(path).id")
            if let text = id, !AgentIdentifier.isValid(text) {
                problem("\(path).id", "agent ids are 1 to 64 of A-Z a-z 0-9 _ -, not \"\(text)\"")
                id = nil
            }
            if let text = id {
                if let first = seen[text] {
                    problem("\(path).id", "duplicate agent id \"\(text)\" (also at \(first))")
                    id = nil
                } else {
                    seen[text] = path
                }
            }
            let floor = floorReference(object["floor"], "\(path).floor", floors: floors)
            let x = number(object["x"], "\(path).x", in: -100_000...100_000)
            let y = number(object["y"], "\(path).y", in: -100_000...100_000)
            let z = number(object["z"], "\(path).z", in: 0...50)
            let offset = number(object["rssi_offset"], "\(path).rssi_offset", in: -40...40, required: false) ?? 0
            let exponent = number(
                object["path_loss_exponent"],
                "\(path).path_loss_exponent",
                in: 1...6,
                required: false
            )
            let surface = object["radio_map"].flatMap { radioSurface($0, "\(path).radio_map") }
            guard let id, let floor, let x, let y, let z else { continue }
            let position = Point(x: x, y: y)
            if !floor.outline.contains(position) {
                problem(path, "agent \"\(id)\" at \(position) is outside the outline of floor \(floor.major)")
            }
            var agent = Agent(
                id: id,
                floor: floor.major,
                position: position,
                height: z,
                rssiOffset: offset,
                pathLossExponent: exponent
            )
            agent.radioSurface = surface
            agents.append(agent)
        }
        return agents
    }

    mutating func readTags(_ value: JSONValue?) -> [KnownTag] {
        guard let elements = array(value, "$.tags", required: false) else { return [] }
        var tags: [KnownTag] = []
        var seen: [TagIdentity: String] = [:]
        for (index, element) in elements.enumerated() {
            let path = "$.tags[\(index)]"
            guard let object = object(element, path, allowed: ["id", "name", "measured_power", "measured_power_sigma"])
            else { continue }
            var identity: TagIdentity?
            if let text = string(object["id"], "\(path).id") {
                identity = TagIdentity(text)
                if identity == nil {
                    problem(
                        "\(path).id",
                        "not a tag identity (ibeacon-<uuid>-<major>-<minor>, altbeacon-…, eddystone-…, mac-…): \"\(text)\""
                    )
                }
            }
            if let tag = identity {
                if let first = seen[tag] {
                    problem("\(path).id", "duplicate tag \(tag) (also at \(first))")
                    identity = nil
                } else {
                    seen[tag] = path
                }
            }
            let name = name(object["name"], "\(path).name")
            let power = number(object["measured_power"], "\(path).measured_power", in: -127...20, required: false)
            let sigma = number(
                object["measured_power_sigma"], "\(path).measured_power_sigma", in: 0.1...30, required: false)
            if sigma != nil, object["measured_power"] == nil {
                problem("\(path).measured_power_sigma", "says how sure measured_power is, and the tag has none")
            }
            guard let identity, let name else { continue }
            tags.append(KnownTag(identity: identity, name: name, measuredPower: power, measuredPowerSigma: sigma))
        }
        return tags
    }
}
