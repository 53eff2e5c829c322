import WhereaboutsCore

/// How the simulated radio behaves between tags and agents.
///
/// Defaults follow BLE tags indoors: 10 adverts a second, about 30 % of them missed by any one scanner, a
/// sensitivity floor of −100 dBm, 5 dB of shadowing that changes over metres and minutes, and Rician fast
/// fading of a few dB per advert.
public struct ChannelConfiguration: Sendable, Hashable {
    /// Standard deviation of the shadowing in dB (slow fading: furniture, bodies, the room's shape).
    public var shadowingSigma: Double = 5
    /// Distance in metres over which a link's shadowing decorrelates (Gudmundson's model).
    public var shadowingDistance: Double = 3
    /// Time in seconds over which a still tag's shadowing decorrelates (people and doors moving).
    public var shadowingTime: Double = 120
    /// Rician K factor of the fast fading (linear; larger means a stronger direct path and less fading).
    public var ricianK: Double = 4
    /// Loss in dB for each floor slab between tag and agent.
    public var floorLoss: Double = 15
    /// The weakest advert a scanner reports, in dBm.
    public var sensitivity: Double = -100
    /// Time between a tag's adverts, in seconds.
    public var advertInterval: Double = 0.1
    /// Share of adverts a scanner misses even above its sensitivity (channel hopping, collisions).
    public var advertLoss: Double = 0.3
    /// Standard deviation in dB of a tag's true power at 1 m around the power it advertises.
    public var measuredPowerSpread: Double = 1
    /// Standard deviation of a second shadowing, in dB, that is a property of the place (furniture, the room's
    /// shape): per agent, the same at a spot whenever a tag stands there, in every run on the same map, and smooth
    /// over ``shadowingDistance`` (``PlaceShadowing``). What a survey's radio map can learn; 0 (the default) leaves
    /// the channel as it was.
    public var placeShadowingSigma: Double = 0

    public init() {}
}

/// The mean received power between a place on a floor and an agent: log-distance path loss with the map's
/// constants, the walls the straight path crosses, and the floor slabs between.
///
/// Shadowing and fading, which are random, are added by ``LinkState``.
struct PathGeometry: Sendable {
    let map: FloorMap
    let floorHeights: [UInt16: Double]
    let floorOrder: [UInt16: Int]
    let wallsByFloor: [UInt16: [Wall]]
    let floorLoss: Double

    init(map: FloorMap, floorLoss: Double) {
        self.map = map
        floorHeights = Dictionary(map.floors.map { ($0.major, $0.height) }, uniquingKeysWith: { a, _ in a })
        floorOrder = Dictionary(map.floors.enumerated().map { ($1.major, $0) }, uniquingKeysWith: { a, _ in a })
        wallsByFloor = Dictionary(grouping: map.walls, by: \.floor)
        self.floorLoss = floorLoss
    }

    /// The mean RSSI in dBm, before the agent's offset, that `agent` receives from a tag whose power at 1 m is
    /// `power`, at `position` on floor `floor`, `height` metres above it (the map's tag height when nil; another
    /// agent's antenna height for agents' beacons).
    func meanRSSI(power: Double, position: Point, floor: UInt16, agent: Agent, height: Double? = nil) -> Double {
        let dx = position.x - agent.position.x
        let dy = position.y - agent.position.y
        let tagZ = (floorHeights[floor] ?? 0) + (height ?? map.model.tagHeight)
        let agentZ = (floorHeights[agent.floor] ?? 0) + agent.height
        let dz = tagZ - agentZ
        let distance = max((dx * dx + dy * dy + dz * dz).squareRoot(), 0.1)
        let exponent = agent.pathLossExponent ?? map.model.pathLossExponent
        var rssi = power - 10 * exponent * logarithm10(distance)
        let path = Segment(position, agent.position)
        for wall in wallsByFloor[floor] ?? [] where wall.segment.properlyIntersects(path) { rssi -= wall.loss }
        if agent.floor != floor {
            for wall in wallsByFloor[agent.floor] ?? [] where wall.segment.properlyIntersects(path) {
                rssi -= wall.loss
            }
            let slabs = abs((floorOrder[agent.floor] ?? 0) - (floorOrder[floor] ?? 0))
            rssi -= floorLoss * Double(slabs)
        }
        return rssi
    }
}

/// The random part of one (agent, tag) link: shadowing that is correlated in space and time.
struct LinkState: Sendable {
    private(set) var shadowing: Double
    private var lastPosition: Point
    private var lastTime: Double

    init(position: Point, time: Double, sigma: Double, using generator: inout some RandomNumberGenerator) {
        shadowing = sigma * generator.nextGaussian()
        lastPosition = position
        lastTime = time
    }

    /// Moves the shadowing on to a new place and time: a Gauss–Markov step whose correlation falls with the
    /// distance moved and the time passed, so its spread stays `sigma`.
    mutating func advance(
        to position: Point,
        time: Double,
        configuration: ChannelConfiguration,
        using generator: inout some RandomNumberGenerator
    ) {
        let moved = position.distance(to: lastPosition)
        let elapsed = max(time - lastTime, 0)
        let correlation = exponential(
            -moved / configuration.shadowingDistance - elapsed / configuration.shadowingTime)
        let innovation = (1 - correlation * correlation).squareRoot() * configuration.shadowingSigma
        shadowing = correlation * shadowing + innovation * generator.nextGaussian()
        lastPosition = position
        lastTime = time
    }
}

/// One advert's fast fading in dB: the power of a Rician channel with unit mean power.
func ricianFadingDB(k: Double, using generator: inout some RandomNumberGenerator) -> Double {
    let direct = (k / (k + 1)).squareRoot()
    let scatter = (1 / (2 * (k + 1))).squareRoot()
    let inPhase = direct + scatter * generator.nextGaussian()
    let quadrature = scatter * generator.nextGaussian()
    return 10 * logarithm10(max(inPhase * inPhase + quadrature * quadrature, 1e-6))
}

/// Shadowing that belongs to the place: a smooth random field over the floor per agent, made of `count` random
/// cosines (random Fourier features of a Gaussian correlation with length `distance`), seeded by the site and the
/// agent's id alone, so that two simulations of the same map (a survey and a later walk) share it.
struct PlaceShadowing: Sendable {
    private let waves: [(x: Double, y: Double, phase: Double)]
    private let amplitude: Double

    init(site: BeaconUUID, agent: String, sigma: Double, distance: Double, count: Int = 64) {
        // FNV-1a over the site and the agent: the field is the building's, not the run's.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (site.description + "/" + agent).utf8 { hash = (hash ^ UInt64(byte)) &* 0x0100_0000_01b3 }
        var generator = SplitMix64(seed: hash)
        let length = max(distance, 0.1)
        waves = (0..<max(count, 1)).map { _ in
            (
                generator.nextGaussian() / length, generator.nextGaussian() / length,
                Double.random(in: 0..<(2 * Double.pi), using: &generator)
            )
        }
        amplitude = sigma * (2 / Double(waves.count)).squareRoot()
    }

    /// The field at a place, dB.
    func value(at point: Point) -> Double {
        var sum = 0.0
        for wave in waves { sum += cosine(wave.x * point.x + wave.y * point.y + wave.phase) }
        return amplitude * sum
    }
}
