public import WhereaboutsCore
public import WhereaboutsWire

/// What to simulate.
public struct SimulationConfiguration: Sendable, Hashable {
    /// How many tags walk the map. The map's known tags come first, then made-up ones on the site UUID.
    public var tagCount: Int = 10
    /// How long, in seconds.
    public var duration: Double = 600
    /// Unix time at which the simulation starts.
    public var startTime: Double = 1_767_225_600
    /// The agents' batching window, in seconds. Windows are the agent's: aligned to multiples of the length in Unix
    /// time, so a start time that is not such a multiple makes the first window short.
    public var window: Double = 1
    /// The radio channel.
    public var channel = ChannelConfiguration()
    /// How people walk.
    public var walker = WalkerConfiguration()
    /// Whether every agent also advertises its ``AgentBeacon`` from its antenna, heard by the other agents
    /// through the same channel (walls, slabs, shadowing, fading, their offsets), for automatic calibration.
    public var agentBeacons = false
    /// Seconds between an agent's beacon adverts.
    public var agentBeaconInterval: Double = 1
    /// Whether each window also carries every advert each agent heard, raw, for feeding real agent pipelines
    /// (`whereabouts sim --broker`).
    public var keepsAdverts = false
    /// Tags that stand where they start until ``Simulator/steer(_:to:floor:)`` sends them somewhere (a survey's tag,
    /// walked to the points an operator or a test names), after the ``tagCount`` walking ones. They draw from
    /// generators of their own, so the walking tags walk and are heard the same with or without them.
    public var steeredTags: [TagIdentity] = []

    public init() {}
}

/// Why a simulation cannot start.
public enum SimulationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A setting is out of range; the associated text names it.
    case invalidSetting(String)

    public var description: String {
        switch self {
        case .invalidSetting(let text): "invalid simulation setting: \(text)"
        }
    }
}

/// One agent's batch for one window: what a simulated agent would publish.
public struct SimulatedBatch: Sendable, Equatable {
    /// The agent.
    public var agent: AgentID
    /// Its index in the map.
    public var agentIndex: Int
    /// The window's end (Unix seconds); every reading carries it.
    public var windowEnd: Double
    /// One reading per tag heard in the window; empty when none was heard (the batch is still a heartbeat).
    public var readings: [ReadingBatch.Reading]

    /// Makes a batch.
    public init(agent: AgentID, agentIndex: Int, windowEnd: Double, readings: [ReadingBatch.Reading]) {
        self.agent = agent
        self.agentIndex = agentIndex
        self.windowEnd = windowEnd
        self.readings = readings
    }

    /// The batch's readings as lines of a readings recording.
    public var recordedReadings: [RecordedReading] { readings.map { RecordedReading($0, agent: agent) } }
}

/// Everything one window of simulated time produced.
public struct SimulatedWindow: Sendable {
    /// The window's end (Unix seconds).
    public var end: Double
    /// The batches of the agents' windows that closed by the window's end, in map order: one per agent when the
    /// start time is a multiple of the window length.
    public var batches: [SimulatedBatch]
    /// Where each tag really was at the window's end.
    public var truth: [TruthRecord]
    /// Per agent, in map order, the adverts it heard in the window, in time order; empty unless
    /// ``SimulationConfiguration/keepsAdverts``.
    public var adverts: [[SimulatedAdvert]]
}

/// One advert as an agent's controller reported it.
public struct SimulatedAdvert: Sendable, Hashable {
    /// Who sent it.
    public var tag: TagIdentity
    /// Its RSSI, whole dBm.
    public var rssi: Int
    /// The transmitter's calibrated power at 1 m, if the advert carries one.
    public var power: Int?
    /// When it was heard (Unix seconds).
    public var time: Double
}

/// Simulates tags walking a floor map and the agents hearing them, window by window.
///
/// Pure and seeded: the same map, configuration and seed give the same windows, on any machine with the same
/// floating-point behaviour. Each tag's walk has its own generator, so that adding tags or changing the radio
/// does not change where the other tags go.
///
/// ```swift
/// var simulator = try Simulator(map: map, configuration: configuration, seed: 7)
/// while let window = simulator.nextWindow() {
///     for batch in window.batches { publish(batch) }
/// }
/// ```
public struct Simulator: Sendable {
    private struct SimulatedTag: Sendable {
        var identity: TagIdentity
        var advertisedPower: Int
        var truePower: Double
        var walker: TagWalker
        var nextAdvert: Double
        var lastMove: Double
        var links: [LinkState]
    }

    /// The map.
    public let map: FloorMap
    /// The configuration.
    public let configuration: SimulationConfiguration
    private let area: WalkArea
    private let geometry: PathGeometry
    /// Per agent, the shadowing of the place (empty when ``ChannelConfiguration/placeShadowingSigma`` is 0).
    private let places: [PlaceShadowing]
    private let agentIDs: [AgentID]
    private var tags: [SimulatedTag] = []
    private var receivers: [SimulatedReceiver] = []
    private var channelGenerator: SplitMix64
    private var beacons: [SimulatedAgentBeacon] = []
    private var beaconGenerator: SplitMix64
    private var steeredGenerator = SplitMix64(seed: 0)
    private var windowIndex = 0
    private let windowCount: Int

    /// Sets up the tags and links.
    ///
    /// - Throws: ``SimulationError/invalidSetting(_:)`` for a setting out of range.
    public init(map: FloorMap, configuration: SimulationConfiguration, seed: UInt64) throws(SimulationError) {
        try Self.validate(configuration, map: map)
        self.map = map
        self.configuration = configuration
        area = WalkArea(map: map)
        geometry = PathGeometry(map: map, floorLoss: configuration.channel.floorLoss)
        let channel = configuration.channel
        places =
            channel.placeShadowingSigma > 0
            ? map.agents.map {
                PlaceShadowing(
                    site: map.site.uuid, agent: $0.id, sigma: channel.placeShadowingSigma,
                    distance: channel.shadowingDistance)
            } : []
        var ids: [AgentID] = []
        for agent in map.agents {
            guard let id = AgentID(agent.id) else { throw .invalidSetting("agent id \(agent.id)") }
            ids.append(id)
        }
        agentIDs = ids
        receivers = ids.map {
            SimulatedReceiver(
                agent: $0, windowLength: configuration.window, start: configuration.startTime,
                keepsAdverts: configuration.keepsAdverts)
        }
        windowCount = Int((configuration.duration / configuration.window).rounded(.up))
        var setup = SplitMix64(seed: seed)
        channelGenerator = SplitMix64(seed: setup.next())
        beaconGenerator = SplitMix64(seed: 0)
        for index in 0..<configuration.tagCount {
            let known = index < map.knownTags.count ? map.knownTags[index] : nil
            let identity =
                known?.identity ?? .iBeacon(uuid: map.site.uuid, major: 1000, minor: UInt16(index + 1))
            let advertised = Int((known?.measuredPower ?? map.model.measuredPower).rounded())
            let walkerSeed = setup.next()
            let walker = TagWalker(area: area, configuration: configuration.walker, seed: walkerSeed)
            let truePower = Double(advertised) + channel.measuredPowerSpread * setup.nextGaussian()
            let phase = Double.random(in: 0..<channel.advertInterval, using: &setup)
            var links: [LinkState] = []
            for _ in map.agents {
                links.append(
                    LinkState(
                        position: walker.position,
                        time: configuration.startTime,
                        sigma: channel.shadowingSigma,
                        using: &setup
                    )
                )
            }
            tags.append(
                SimulatedTag(
                    identity: identity,
                    advertisedPower: advertised,
                    truePower: truePower,
                    walker: walker,
                    nextAdvert: configuration.startTime + phase,
                    lastMove: configuration.startTime,
                    links: links
                )
            )
        }
        // Drawn after the tags' setup, from a generator of their own, so that tags hear the same with or without
        // agents' beacons.
        if configuration.agentBeacons {
            beaconGenerator = SplitMix64(seed: setup.next())
            beacons = SimulatedAgentBeacon.make(
                map: map, configuration: configuration, using: &beaconGenerator)
        }
        try addSteeredTags(seed: setup.next())
    }

    /// The steered tags, after the walking ones, from a generator of their own.
    private mutating func addSteeredTags(seed: UInt64) throws(SimulationError) {
        let steered = configuration.steeredTags
        guard Set(steered).count == steered.count, Set(steered).isDisjoint(with: tags.map(\.identity)) else {
            throw .invalidSetting("a steered tag is named twice, or is also a walking tag")
        }
        var generator = SplitMix64(seed: seed)
        let channel = configuration.channel
        for identity in steered {
            let advertised = Int((map.knownTag(identity)?.measuredPower ?? map.model.measuredPower).rounded())
            let walker = TagWalker(standingIn: area, configuration: configuration.walker, seed: generator.next())
            let truePower = Double(advertised) + channel.measuredPowerSpread * generator.nextGaussian()
            let phase = Double.random(in: 0..<channel.advertInterval, using: &generator)
            let links = map.agents.map { _ in
                LinkState(
                    position: walker.position, time: configuration.startTime, sigma: channel.shadowingSigma,
                    using: &generator)
            }
            tags.append(
                SimulatedTag(
                    identity: identity, advertisedPower: advertised, truePower: truePower, walker: walker,
                    nextAdvert: configuration.startTime + phase, lastMove: configuration.startTime, links: links))
        }
        steeredGenerator = SplitMix64(seed: generator.next())
    }

    /// Sends a steered tag (``SimulationConfiguration/steeredTags``) from where it is to `point` on `floor`, at a
    /// walking speed and around walls, to stand there until steered again. False when the tag is not a steered one,
    /// the floor is not on the map, or no stairs lead there.
    public mutating func steer(_ tag: TagIdentity, to point: Point, floor: UInt16) -> Bool {
        guard point.x.isFinite, point.y.isFinite,
            let index = tags.indices.first(where: { $0 >= configuration.tagCount && tags[$0].identity == tag })
        else { return false }
        return tags[index].walker.steer(to: point, floor: floor, area: area, configuration: configuration.walker)
    }

    private static func validate(_ configuration: SimulationConfiguration, map: FloorMap) throws(SimulationError) {
        let channel = configuration.channel
        let walker = configuration.walker
        guard (0...60_000).contains(configuration.tagCount) else { throw .invalidSetting("tags must be 0…60000") }
        guard configuration.duration > 0, configuration.duration <= 30 * 86_400 else {
            throw .invalidSetting("duration must be more than 0 and at most 30 days")
        }
        guard configuration.startTime.isFinite else { throw .invalidSetting("start time must be finite") }
        guard configuration.window >= 0.05, configuration.window <= 60 else {
            throw .invalidSetting("window must be 0.05…60 s")
        }
        guard (0...30).contains(channel.shadowingSigma) else { throw .invalidSetting("sigma must be 0…30 dB") }
        guard channel.shadowingDistance > 0, channel.shadowingTime > 0 else {
            throw .invalidSetting("shadowing distance and time must be positive")
        }
        guard channel.ricianK >= 0, channel.ricianK.isFinite else { throw .invalidSetting("Rician K must be ≥ 0") }
        guard channel.floorLoss >= 0, channel.floorLoss <= 100 else { throw .invalidSetting("floor loss 0…100 dB") }
        guard channel.sensitivity.isFinite else { throw .invalidSetting("sensitivity must be finite") }
        guard channel.advertInterval >= 0.02, channel.advertInterval <= 10 else {
            throw .invalidSetting("advert interval must be 0.02…10 s")
        }
        guard (0..<1).contains(channel.advertLoss) else { throw .invalidSetting("advert loss must be 0 ≤ p < 1") }
        guard (0...30).contains(channel.placeShadowingSigma) else {
            throw .invalidSetting("place sigma must be 0…30 dB")
        }
        guard (0...20).contains(channel.measuredPowerSpread) else {
            throw .invalidSetting("measured power spread must be 0…20 dB")
        }
        guard walker.speed.lowerBound > 0, walker.speed.upperBound <= 10 else {
            throw .invalidSetting("walking speed must be within 0…10 m/s")
        }
        guard walker.pause.lowerBound >= 0, walker.pause.upperBound <= 86_400 else {
            throw .invalidSetting("pauses must be 0…86400 s")
        }
        guard walker.stairsTime >= 0, walker.stairsTime <= 600 else { throw .invalidSetting("stairs time 0…600 s") }
        guard (0...1).contains(walker.floorChangeShare), (0...1).contains(walker.anywhereShare) else {
            throw .invalidSetting("shares must be 0…1")
        }
        guard walker.zoneInset >= 0 else { throw .invalidSetting("zone inset must be ≥ 0") }
        guard configuration.agentBeaconInterval >= 0.02, configuration.agentBeaconInterval <= 10 else {
            throw .invalidSetting("agent beacon interval must be 0.02…10 s")
        }
    }

    /// The simulated tags, in the order their truth is written.
    public var tagIdentities: [TagIdentity] { tags.map(\.identity) }

    /// Simulates the next window, or returns nil when the duration is over.
    public mutating func nextWindow() -> SimulatedWindow? {
        guard windowIndex < windowCount else { return nil }
        windowIndex += 1
        let end = configuration.startTime + Double(windowIndex) * configuration.window
        let channel = configuration.channel
        for tagIndex in tags.indices {
            // Steered tags draw from their own generator (``SimulationConfiguration/steeredTags``).
            let walking = tagIndex < configuration.tagCount
            var generator = walking ? channelGenerator : steeredGenerator
            while tags[tagIndex].nextAdvert < end {
                let time = tags[tagIndex].nextAdvert
                let elapsed = time - tags[tagIndex].lastMove
                tags[tagIndex].walker.advance(by: elapsed, area: area, configuration: configuration.walker)
                tags[tagIndex].lastMove = time
                advertise(tagIndex: tagIndex, time: time, channel: channel, using: &generator)
                // BLE adds 0–10 ms of random delay to every advertising interval.
                tags[tagIndex].nextAdvert =
                    time + channel.advertInterval
                    + Double.random(in: 0..<0.01, using: &generator)
            }
            if walking { channelGenerator = generator } else { steeredGenerator = generator }
            let elapsed = end - tags[tagIndex].lastMove
            tags[tagIndex].walker.advance(by: elapsed, area: area, configuration: configuration.walker)
            tags[tagIndex].lastMove = end
        }
        if !beacons.isEmpty {
            SimulatedAgentBeacon.advertise(
                &beacons, until: end, interval: configuration.agentBeaconInterval, geometry: geometry,
                channel: channel, receivers: &receivers, using: &beaconGenerator)
        }
        var batches: [SimulatedBatch] = []
        batches.reserveCapacity(map.agents.count)
        for agentIndex in map.agents.indices {
            for batch in receivers[agentIndex].batches(until: end) {
                batches.append(
                    SimulatedBatch(
                        agent: agentIDs[agentIndex], agentIndex: agentIndex, windowEnd: batch.windowEnd,
                        readings: batch.readings))
            }
        }
        let truth = tags.map { tag in
            TruthRecord(
                time: end,
                tag: tag.identity,
                x: tag.walker.position.x.rounded(toDecimals: 3),
                y: tag.walker.position.y.rounded(toDecimals: 3),
                floor: tag.walker.floor
            )
        }
        let adverts = configuration.keepsAdverts ? receivers.indices.map { receivers[$0].takeAdverts() } : []
        return SimulatedWindow(end: end, batches: batches, truth: truth, adverts: adverts)
    }

    /// One advert from one tag: each agent hears it or not, at its own RSSI.
    private mutating func advertise(
        tagIndex: Int, time: Double, channel: ChannelConfiguration, using generator: inout SplitMix64
    ) {
        let position = tags[tagIndex].walker.position
        let floor = tags[tagIndex].walker.floor
        let power = tags[tagIndex].truePower
        for agentIndex in map.agents.indices {
            let agent = map.agents[agentIndex]
            tags[tagIndex].links[agentIndex].advance(
                to: position,
                time: time,
                configuration: channel,
                using: &generator
            )
            // Draw every random number whether or not the advert is heard, so one link never shifts another.
            let fading = ricianFadingDB(k: channel.ricianK, using: &generator)
            let missed = Double.random(in: 0..<1, using: &generator) < channel.advertLoss
            var mean = geometry.meanRSSI(power: power, position: position, floor: floor, agent: agent)
            if !places.isEmpty { mean += places[agentIndex].value(at: position) }
            let received = mean + tags[tagIndex].links[agentIndex].shadowing + fading
            guard !missed, received >= channel.sensitivity else { continue }
            // Controllers report whole dBm; the map's offset corrects this receiver, so the raw value lacks it.
            let raw = (received - agent.rssiOffset).rounded()
            receivers[agentIndex].hear(
                tag: tags[tagIndex].identity,
                rssi: Int(min(max(raw, -127), 20)),
                power: tags[tagIndex].advertisedPower,
                at: time
            )
        }
    }
}
