import WhereaboutsCore
import WhereaboutsJSON

/// The parts of the map that stand in the building: walls (what they cost the radio, whether they block walking,
/// their doors), obstacles inside a floor's outline, and the stairs that join floors.
extension MapReader {
    mutating func readWalls(_ value: JSONValue?, floors: [UInt16: Floor]) -> [Wall] {
        guard let elements = array(value, "$.walls", required: false) else { return [] }
        var walls: [Wall] = []
        for (index, element) in elements.enumerated() {
            let path = "$.walls[\(index)]"
            guard
                let object = object(
                    element, path, allowed: ["floor", "from", "to", "loss", "blocks_walking", "doors"])
            else { continue }
            let floor = floorReference(object["floor"], "\(path).floor", floors: floors)
            let from = point(object["from"], "\(path).from")
            let to = point(object["to"], "\(path).to")
            let loss = number(object["loss"], "\(path).loss", in: 0...60)
            var blocksWalking = false
            if let flag = object["blocks_walking"] {
                guard case .bool(let value) = flag else {
                    problem("\(path).blocks_walking", "must be true or false, not \(flag.kindName)")
                    continue
                }
                blocksWalking = value
            }
            guard let floor, let from, let to, let loss else { continue }
            guard from.distance(to: to) > 1e-3 else {
                problem(path, "a wall needs two distinct ends")
                continue
            }
            let segment = Segment(from, to)
            guard let doors = readDoors(object["doors"], "\(path).doors", wall: segment, blocksWalking: blocksWalking)
            else { continue }
            walls.append(
                Wall(floor: floor.major, segment: segment, loss: loss, blocksWalking: blocksWalking, doors: doors))
        }
        return walls
    }

    /// A wall's doors: each `{"at": [x, y], "width": w}` centred on the wall, wholly on it, not overlapping
    /// another; nil when any is wrong.
    mutating func readDoors(_ value: JSONValue?, _ path: String, wall: Segment, blocksWalking: Bool) -> [Door]? {
        guard let elements = array(value, path, required: false) else { return value == nil ? [] : nil }
        guard blocksWalking || elements.isEmpty else {
            problem(path, "only a wall that blocks walking (\"blocks_walking\": true) has doors")
            return nil
        }
        let length = wall.start.distance(to: wall.end)
        var doors: [Door] = []
        var spans: [(Double, Double, Int)] = []
        var complete = true
        for (index, element) in elements.enumerated() {
            let doorPath = "\(path)[\(index)]"
            guard let object = object(element, doorPath, allowed: ["at", "width"]) else {
                complete = false
                continue
            }
            let centre = point(object["at"], "\(doorPath).at")
            let width = number(object["width"], "\(doorPath).width", in: 0.3...20)
            guard let centre, let width else {
                complete = false
                continue
            }
            let offWall = wall.closestPoint(to: centre).distance(to: centre)
            guard offWall <= 0.05 else {
                problem("\(doorPath).at", "a door must be on its wall; \(centre) is \(offWall) m off it")
                complete = false
                continue
            }
            let along = centre.distance(to: wall.start)
            guard along - width / 2 >= -1e-9, along + width / 2 <= length + 1e-9 else {
                problem(doorPath, "the door (\(width) m wide at \(centre)) runs past the end of its wall")
                complete = false
                continue
            }
            if let other = spans.first(where: { $0.0 < along + width / 2 && along - width / 2 < $0.1 }) {
                problem(doorPath, "overlaps door \(other.2) of the same wall")
                complete = false
                continue
            }
            spans.append((along - width / 2, along + width / 2, index))
            doors.append(Door(centre: centre, width: width))
        }
        return complete ? doors : nil
    }

    mutating func readObstacles(_ value: JSONValue?, floors: [UInt16: Floor]) -> [Obstacle] {
        guard let elements = array(value, "$.obstacles", required: false) else { return [] }
        var obstacles: [Obstacle] = []
        for (index, element) in elements.enumerated() {
            let path = "$.obstacles[\(index)]"
            guard let object = object(element, path, allowed: ["floor", "polygon", "name"]) else { continue }
            if let name = object["name"] { _ = self.name(name, "\(path).name") }
            let floor = floorReference(object["floor"], "\(path).floor", floors: floors)
            let polygon = polygon(object["polygon"], "\(path).polygon")
            guard let floor, let polygon else { continue }
            guard floor.outline.encloses(polygon) else {
                problem("\(path).polygon", "an obstacle must lie inside the outline of floor \(floor.major)")
                continue
            }
            obstacles.append(Obstacle(floor: floor.major, polygon: polygon))
        }
        return obstacles
    }

    mutating func readStairs(_ value: JSONValue?, floors: [UInt16: Floor]) -> [Stairs] {
        guard let elements = array(value, "$.stairs", required: false) else { return [] }
        var stairs: [Stairs] = []
        for (index, element) in elements.enumerated() {
            let path = "$.stairs[\(index)]"
            guard let object = object(element, path, allowed: ["floors", "x", "y"]) else { continue }
            let x = number(object["x"], "\(path).x", in: -100_000...100_000)
            let y = number(object["y"], "\(path).y", in: -100_000...100_000)
            var joined: [Floor] = []
            var complete = true
            if let references = array(object["floors"], "\(path).floors") {
                for (position, reference) in references.enumerated() {
                    let floorPath = "\(path).floors[\(position)]"
                    guard let floor = floorReference(reference, floorPath, floors: floors) else {
                        complete = false
                        continue
                    }
                    if joined.contains(where: { $0.major == floor.major }) {
                        problem(floorPath, "floor \(floor.major) is listed twice")
                        complete = false
                        continue
                    }
                    joined.append(floor)
                }
                if complete, joined.count < 2 {
                    problem("\(path).floors", "stairs join at least two floors, found \(joined.count)")
                    complete = false
                }
            } else {
                complete = false
            }
            guard complete, let x, let y else { continue }
            let position = Point(x: x, y: y)
            var inside = true
            for floor in joined where !floor.outline.contains(position) {
                problem(path, "stairs at \(position) are outside the outline of floor \(floor.major)")
                inside = false
            }
            guard inside else { continue }
            stairs.append(Stairs(floors: joined.map(\.major), position: position))
        }
        return stairs
    }
}
