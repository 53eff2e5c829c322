import Glibc
import WhereaboutsCore

/// Seeded tags on a ``BenchMap`` and what its agents hear of them, one 1 s window at a time.
///
/// A quarter of the tags walk at 1 m/s between random waypoints; the rest stand still. Each agent that hears a tag
/// in a window reports one aggregate reading, as real agents do: the mean RSSI of 8 to 10 adverts. The RSSI follows
/// the map's log-distance model (−59 dBm at 1 m, exponent 2) plus a fixed shadowing per (tag, agent) of σ 3 dB and
/// the noise of the mean; an agent hears a tag when that mean is above −85 dBm, which on this floor is 10 to 15
/// agents per tag. Tags may be pinned (the latency probes), in which case they stay where they are put and get
/// neither shadowing nor much noise.
struct SyntheticLoad {
    /// One reading an agent reports in a window.
    struct Heard {
        var tag: Int
        var rssi: Double
        var count: Int
        var variance: Double
    }

    struct Tag {
        var identity: TagIdentity
        var position: Point
        var waypoint: Point?
        var pinned = false
    }

    static let hearingThreshold = -85.0
    static let measuredPower = -59.0

    let map: FloorMap
    private(set) var tags: [Tag] = []
    private var generator: SplitMix64
    private let seed: UInt64
    private let width: Double
    private let height: Double
    private let agentPositions: [(x: Double, y: Double, dz: Double)]
    private let firstIdentity: Int

    /// Tags' identities are numbered from `firstIdentity`, so that two loads on one map can have distinct tags.
    init(map: FloorMap, width: Double, height: Double, tagCount: Int, seed: UInt64, firstIdentity: Int = 0) {
        self.map = map
        self.firstIdentity = firstIdentity
        self.width = width
        self.height = height
        self.seed = seed
        generator = SplitMix64(seed: seed)
        agentPositions = map.agents.map { ($0.position.x, $0.position.y, $0.height - map.model.tagHeight) }
        for _ in 0..<tagCount { addTag(walking: Double.random(in: 0..<1, using: &generator) < 0.25) }
    }

    /// Adds a tag; returns its index.
    @discardableResult
    mutating func addTag(walking: Bool = false, pinnedAt point: Point? = nil) -> Int {
        let index = tags.count
        let number = firstIdentity + index
        let identity = TagIdentity.iBeacon(
            uuid: map.site.uuid, major: UInt16(1000 + number / 50_000), minor: UInt16(number % 50_000))
        let position = point ?? randomPoint()
        tags.append(
            Tag(
                identity: identity, position: position, waypoint: walking ? randomPoint() : nil,
                pinned: point != nil))
        return index
    }

    /// Moves a pinned tag.
    mutating func place(_ tag: Int, at point: Point) {
        tags[tag].position = point
    }

    private mutating func randomPoint() -> Point {
        Point(
            x: Double.random(in: 0.5...(width - 0.5), using: &generator),
            y: Double.random(in: 0.5...(height - 0.5), using: &generator))
    }

    /// Advances one second and returns, per agent, what it heard in the window.
    mutating func nextWindow() -> [[Heard]] {
        for index in tags.indices where !tags[index].pinned {
            guard let waypoint = tags[index].waypoint else { continue }
            let position = tags[index].position
            let distance = position.distance(to: waypoint)
            if distance <= 1 {
                tags[index].position = waypoint
                tags[index].waypoint = randomPoint()
            } else {
                tags[index].position = position + (waypoint - position) * (1 / distance)
            }
        }
        var heard = Array(repeating: [Heard](), count: agentPositions.count)
        // Beyond this horizontal distance no agent hears a tag, even with +3σ shadowing.
        let reach = pow(10, (Self.measuredPower - Self.hearingThreshold + 9) / 20)
        let reachSquared = reach * reach
        for (tagIndex, tag) in tags.enumerated() {
            for (agentIndex, agent) in agentPositions.enumerated() {
                let dx = tag.position.x - agent.x
                let dy = tag.position.y - agent.y
                let horizontalSquared = dx * dx + dy * dy
                guard horizontalSquared < reachSquared else { continue }
                let distance = max((horizontalSquared + agent.dz * agent.dz).squareRoot(), 0.1)
                let count = 8 + Int(generator.next() % 3)
                let shadowing = tag.pinned ? 0 : 3 * linkShadowing(tag: tagIndex, agent: agentIndex)
                let noise = (tag.pinned ? 1 : 4) / Double(count).squareRoot() * generator.nextGaussian()
                let rssi = Self.measuredPower - 20 * log10(distance) + shadowing + noise
                guard rssi >= Self.hearingThreshold else { continue }
                let variance = 12 + Double(generator.next() % 80) / 10
                heard[agentIndex].append(
                    Heard(tag: tagIndex, rssi: (rssi * 10).rounded() / 10, count: count, variance: variance))
            }
        }
        return heard
    }

    /// A fixed standard normal value per (tag, agent): the shadowing of that path, the same every window.
    private func linkShadowing(tag: Int, agent: Int) -> Double {
        var link = SplitMix64(seed: seed &* 0x9E37_79B9 &+ UInt64(tag) &* 1_000_003 &+ UInt64(agent))
        return link.nextGaussian()
    }
}
