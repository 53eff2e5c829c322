import WhereaboutsCore

/// An agent's own beacon in the simulation: its ``AgentBeacon`` identity advertised from its antenna, and the
/// random state of its links to every other agent.
struct SimulatedAgentBeacon: Sendable {
    var agentIndex: Int
    var identity: TagIdentity
    var advertisedPower: Int
    var truePower: Double
    var nextAdvert: Double
    /// One link per agent of the map (its own unused), so that link `i` is heard by agent `i`.
    var links: [LinkState]

    /// One beacon per agent: the map's default power advertised, the true power spread around it like a tag's.
    static func make(
        map: FloorMap,
        configuration: SimulationConfiguration,
        using generator: inout SplitMix64
    ) -> [SimulatedAgentBeacon] {
        let channel = configuration.channel
        let advertised = Int(map.model.measuredPower.rounded())
        return map.agents.indices.map { index in
            let agent = map.agents[index]
            let truePower = Double(advertised) + channel.measuredPowerSpread * generator.nextGaussian()
            let phase = Double.random(in: 0..<configuration.agentBeaconInterval, using: &generator)
            let links = map.agents.map { _ in
                LinkState(
                    position: agent.position, time: configuration.startTime, sigma: channel.shadowingSigma,
                    using: &generator)
            }
            return SimulatedAgentBeacon(
                agentIndex: index,
                identity: AgentBeacon.identity(site: map.site.uuid, floor: agent.floor, agentID: agent.id),
                advertisedPower: advertised,
                truePower: truePower,
                nextAdvert: configuration.startTime + phase,
                links: links
            )
        }
    }

    /// Every beacon's adverts before `end`, heard by every other agent's receiver.
    static func advertise(
        _ beacons: inout [SimulatedAgentBeacon],
        until end: Double,
        interval: Double,
        geometry: PathGeometry,
        channel: ChannelConfiguration,
        receivers: inout [SimulatedReceiver],
        using generator: inout SplitMix64
    ) {
        let agents = geometry.map.agents
        for beaconIndex in beacons.indices {
            while beacons[beaconIndex].nextAdvert < end {
                let time = beacons[beaconIndex].nextAdvert
                let transmitter = agents[beacons[beaconIndex].agentIndex]
                for receiverIndex in agents.indices where receiverIndex != beacons[beaconIndex].agentIndex {
                    let receiver = agents[receiverIndex]
                    // A still link: its shadowing changes with time only (people, doors).
                    beacons[beaconIndex].links[receiverIndex].advance(
                        to: transmitter.position, time: time, configuration: channel, using: &generator)
                    // Every random number is drawn whether or not the advert is heard, as for tags.
                    let fading = ricianFadingDB(k: channel.ricianK, using: &generator)
                    let missed = Double.random(in: 0..<1, using: &generator) < channel.advertLoss
                    let mean = geometry.meanRSSI(
                        power: beacons[beaconIndex].truePower, position: transmitter.position,
                        floor: transmitter.floor, agent: receiver, height: transmitter.height)
                    let received = mean + beacons[beaconIndex].links[receiverIndex].shadowing + fading
                    guard !missed, received >= channel.sensitivity else { continue }
                    let raw = (received - receiver.rssiOffset).rounded()
                    receivers[receiverIndex].hear(
                        tag: beacons[beaconIndex].identity, rssi: Int(min(max(raw, -127), 20)),
                        power: beacons[beaconIndex].advertisedPower, at: time)
                }
                beacons[beaconIndex].nextAdvert = time + interval + Double.random(in: 0..<0.01, using: &generator)
            }
        }
    }
}
