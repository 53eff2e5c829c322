import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsMapFile

/// The repository's root, found from this file's path, so tests read the shipped maps and nothing outside.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

func loadShippedMap(_ name: String) throws -> FloorMap {
    let data = try #require(
        FileManager.default.contents(atPath: repositoryRoot.appendingPathComponent("maps/\(name)").path))
    return try FloorMap.parse(Array(data)).get()
}

/// The demo office's site UUID.
let demoSite: BeaconUUID = {
    guard let uuid = BeaconUUID("f7826da6-4fa2-4e98-8024-bc5b71e0893e") else { fatalError("bad literal UUID") }
    return uuid
}()

/// A tag identity on the demo office's site (major 100, as in the map's known tags).
func demoTag(_ minor: UInt16) -> TagIdentity {
    .iBeacon(uuid: demoSite, major: 100, minor: minor)
}

/// Generates the readings each agent of a map would report for a tag at a place: the log-distance model with the
/// map's constants, the loss of the map's walls on the path, Gaussian noise in dB, and a slab loss for agents on
/// other floors.
struct ReadingGenerator {
    var map: FloorMap
    var noiseDB: Double = 4
    var slabLoss: Double = 15
    var floorHeight: Double = 3.5
    var sensitivity: Double = -100

    func readings(
        tag: TagIdentity,
        at position: Point,
        floor: UInt16,
        time: Double,
        using generator: inout SplitMix64
    ) -> [(agentIndex: Int, reading: Reading)] {
        var result: [(Int, Reading)] = []
        for (index, agent) in map.agents.enumerated() {
            let floorGap = Double(Int(agent.floor) - Int(floor))
            let dz = agent.height - map.model.tagHeight + floorGap * floorHeight
            let horizontal = agent.position.distance(to: position)
            let distance = (horizontal * horizontal + dz * dz).squareRoot()
            let model = PathLossModel(measuredPower: map.model.measuredPower, exponent: map.model.pathLossExponent)
            let path = Segment(agent.position, position)
            let walls = map.walls.filter { $0.floor == floor && $0.segment.properlyIntersects(path) }.map(\.loss)
            let rssi =
                model.expectedRSSI(atDistance: distance) - walls.reduce(0, +) - abs(floorGap) * slabLoss
                + noiseDB * generator.nextGaussian()
            guard rssi >= sensitivity else { continue }
            result.append((index, Reading(tag: tag, time: time, rssi: rssi.rounded())))
        }
        return result
    }
}

/// Feeds an engine `seconds` of readings of a tag standing at `position` on floor 1 of the demo office, one reading per
/// agent per second from 1,000,000 s, updating once a second; returns the last estimate of the run.
func lastEstimateStandingStill(
    _ engine: inout LocatorEngine, tag: TagIdentity, at position: Point, seconds: Int, seed: UInt64
) -> TagEstimate? {
    let generator = ReadingGenerator(map: engine.map)
    var random = SplitMix64(seed: seed)
    var last: TagEstimate?
    for second in 0..<seconds {
        let now = 1_000_000 + Double(second)
        for (agentIndex, reading) in generator.readings(tag: tag, at: position, floor: 1, time: now, using: &random) {
            engine.ingest(reading, agentIndex: agentIndex, now: now)
        }
        last = engine.update(now: now).estimates.first ?? last
    }
    return last
}

/// Two rooms of 10 × 10 m side by side on one floor (zones West and East, split at x = 10), three agents in each
/// (two by the outer wall, one 2 m from the middle), with `extras` appended to the map's members (walls, obstacles),
/// each a `"key": value` JSON text.
func twoRoomsMap(_ extras: String...) throws -> FloorMap {
    let members = extras.map { ",\n  " + $0 }.joined()
    let text = """
        {
          "site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Two rooms"},
          "model": {"measured_power": -59, "path_loss_exponent": 2.0},
          "floors": [{"major": 1, "name": "Ground", "height": 0, "outline": [[0,0],[20,0],[20,10],[0,10]]}],
          "zones": [
            {"floor": 1, "minor": 1, "name": "West", "polygon": [[0,0],[10,0],[10,10],[0,10]]},
            {"floor": 1, "minor": 2, "name": "East", "polygon": [[10,0],[20,0],[20,10],[10,10]]}
          ],
          "agents": [
            {"id": "w1", "floor": 1, "x": 2, "y": 2, "z": 2.4}, {"id": "w2", "floor": 1, "x": 2, "y": 8, "z": 2.4},
            {"id": "w3", "floor": 1, "x": 8, "y": 5, "z": 2.4}, {"id": "e3", "floor": 1, "x": 12, "y": 5, "z": 2.4},
            {"id": "e1", "floor": 1, "x": 18, "y": 2, "z": 2.4}, {"id": "e2", "floor": 1, "x": 18, "y": 8, "z": 2.4}
          ]\(members)
        }
        """
    return try FloorMap.parse(Array(text.utf8)).get()
}
