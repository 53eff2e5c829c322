public import WhereaboutsCore

/// Automatic calibration: fits each agent's RSSI offset and path-loss exponent from the agents hearing each
/// other's ``AgentBeacon`` at distances the map gives (3-D: floor heights and antenna heights).
///
/// For a link from transmitter `a` to receiver `b`: `RSSI_raw = P_a − o_b − 10 n_b log10(d_ab)`, with `P_a` the
/// power `a` advertises (else the map's power for its beacon, else the map's default) held fixed, so each
/// receiver's offset and exponent are fitted from the links it hears, robustly, bounded and regularised toward the
/// defaults (``CalibrationSettings``). Only links within one floor count (slabs add losses the model lacks).
///
/// Each link keeps a running mean of its RSSI that forgets over ``Configuration/memory`` seconds, so memory is
/// bounded by the number of agent pairs. ``fit(inForce:now:)`` also validates by leaving links out: the links are
/// dealt into folds; each fold is predicted by constants fitted on the others, and by the constants in force.
public struct AgentLinkCalibrator: Sendable {
    /// Settings of the automatic fit.
    public struct Configuration: Sendable, Hashable {
        /// Bounds and priors (its `minimumSamples` is not used here: see ``minimumLinks``).
        public var settings = CalibrationSettings()
        /// A link counts once it holds this many adverts.
        public var minimumAdverts = 30.0
        /// A receiver needs this many links on its floor to be fitted.
        public var minimumLinks = 3
        /// Seconds over which a link's old readings fade (the time constant of its running mean).
        public var memory = 6.0 * 3600
        /// Error of the model per link, dB: a still link's shadowing does not average away.
        public var linkSigma = 4.0
        /// How many folds the links are dealt into for validation (each holds out about 1/folds of them).
        public var folds = 5

        public init() {}
    }

    /// What one fit found.
    public struct Fit: Sendable, Hashable {
        /// Every agent: fitted constants, or the ones in force with the reason.
        public var result: CalibrationResult
        /// Per agent, in map order: RMS of its held-out links' residuals with the constants in force, dB.
        public var heldOutBefore: [Double?]
        /// … and with constants fitted without those links.
        public var heldOutAfter: [Double?]
        /// Links used.
        public var links: Int
    }

    /// The map.
    public let map: FloorMap
    /// The settings.
    public let configuration: Configuration
    private let floorHeights: [UInt16: Double]
    private var links: [LinkKey: LinkStatistics] = [:]
    private var advertisedPower: [Double?]

    /// Makes a calibrator for a map's agents.
    public init(map: FloorMap, configuration: Configuration = Configuration()) {
        self.map = map
        self.configuration = configuration
        floorHeights = Dictionary(map.floors.map { ($0.major, $0.height) }, uniquingKeysWith: { a, _ in a })
        advertisedPower = Array(repeating: nil, count: map.agents.count)
    }

    /// How many links have readings.
    public var linkCount: Int { links.count }

    /// Takes one reading of agent `transmitter`'s beacon heard by agent `receiver`.
    ///
    /// - Returns: whether it was taken: both agents exist, differ and share a floor, and the values are sane.
    @discardableResult
    public mutating func take(
        receiver: Int,
        transmitter: Int,
        rssi: Double,
        count: Int = 1,
        advertisedPower power: Double? = nil,
        time: Double
    ) -> Bool {
        guard map.agents.indices.contains(receiver), map.agents.indices.contains(transmitter),
            receiver != transmitter, map.agents[receiver].floor == map.agents[transmitter].floor,
            rssi.isFinite, rssi >= -127, rssi <= 20, count >= 1, time.isFinite
        else { return false }
        if let power, power.isFinite, power >= -127, power <= 20 { advertisedPower[transmitter] = power }
        let key = LinkKey(transmitter: transmitter, receiver: receiver)
        links[key, default: LinkStatistics(time: time)].add(
            rssi: rssi, adverts: Double(min(count, 10_000)), time: time, memory: configuration.memory)
        return true
    }

    /// The 3-D distance between two agents' antennas.
    public func distance(from transmitter: Int, to receiver: Int) -> Double {
        let a = map.agents[transmitter]
        let b = map.agents[receiver]
        let dx = a.position.x - b.position.x
        let dy = a.position.y - b.position.y
        let dz = ((floorHeights[a.floor] ?? 0) + a.height) - ((floorHeights[b.floor] ?? 0) + b.height)
        return max((dx * dx + dy * dy + dz * dz).squareRoot(), 0.1)
    }

    /// The transmit power of each agent's beacon, in map order: advertised, else the map's for the beacon's
    /// identity, else the map's default.
    public var transmitPowers: [Double] {
        map.agents.indices.map { index in
            let agent = map.agents[index]
            let identity = AgentBeacon.identity(site: map.site.uuid, floor: agent.floor, agentID: agent.id)
            return map.knownTag(identity)?.measuredPower ?? advertisedPower[index] ?? map.model.measuredPower
        }
    }

    /// Fits every agent from the links heard so far, and validates by leaving links out.
    ///
    /// - Parameters:
    ///   - inForce: the constants ranging uses now, per agent in map order (what a refused agent keeps, and
    ///     what the fit is compared with).
    ///   - now: the time the links' running means are aged to.
    public func fit(inForce: [AgentConstants], now: Double) -> Fit {
        let powers = transmitPowers
        let transmitters = map.agents.indices.map { index in
            let agent = map.agents[index]
            return TransmitterPrior(
                identity: AgentBeacon.identity(site: map.site.uuid, floor: agent.floor, agentID: agent.id),
                inForce: powers[index], advertised: advertisedPower[index],
                sigma: configuration.settings.knownPowerPriorSigma)
        }
        let observations: [PathLossObservation] = links.keys.sorted().compactMap { key in
            guard let statistics = links[key] else { return nil }
            let adverts = statistics.adverts(at: now, memory: configuration.memory)
            guard adverts >= configuration.minimumAdverts else { return nil }
            return PathLossObservation(
                transmitter: key.transmitter,
                receiver: key.receiver,
                distance: distance(from: key.transmitter, to: key.receiver),
                rssi: statistics.mean,
                variance: configuration.linkSigma * configuration.linkSigma + statistics.spread / adverts,
                time: statistics.lastTime
            )
        }
        let constants = inForce.count == map.agents.count ? inForce : map.agents.map { AgentConstants($0, in: map) }
        let fitter = ConstantsFitter(
            map: map, settings: configuration.settings, inForce: constants, transmitters: transmitters,
            fitsPowers: false, minimumSamples: configuration.minimumLinks)
        let result = fitter.fit(observations)

        // Leave links out: deal them into folds in a fixed shuffled order, so every run splits them alike. A fold
        // fits whatever links its receivers keep (the priors hold the rest), so that a receiver with few links is
        // judged on fitted predictions, not on the constants in force.
        var foldFitter = fitter
        foldFitter.minimumSamples = 1
        foldFitter.settings.minimumDistanceSpread = 0
        var order = Array(observations.indices)
        var generator = SplitMix64(seed: 0x5EED)
        order.shuffle(using: &generator)
        let folds = max(2, configuration.folds)
        var before = [[Double]](repeating: [], count: map.agents.count)
        var after = [[Double]](repeating: [], count: map.agents.count)
        for fold in 0..<folds {
            let heldOut = Set(order.enumerated().filter { $0.offset % folds == fold }.map(\.element))
            guard !heldOut.isEmpty else { continue }
            let training = observations.indices.filter { !heldOut.contains($0) }.map { observations[$0] }
            let foldResult = foldFitter.fit(training)
            for index in heldOut.sorted() {
                let link = observations[index]
                let old = constants[link.receiver]
                let new = foldResult.agents[link.receiver].after
                let power = powers[link.transmitter]
                before[link.receiver].append(
                    link.rssi
                        - expectedRawRSSI(
                            power: power, offset: old.rssiOffset, exponent: old.pathLossExponent,
                            distance: link.distance))
                after[link.receiver].append(
                    link.rssi
                        - expectedRawRSSI(
                            power: power, offset: new.rssiOffset, exponent: new.pathLossExponent,
                            distance: link.distance))
            }
        }
        return Fit(
            result: result,
            heldOutBefore: before.map(rootMeanSquare),
            heldOutAfter: after.map(rootMeanSquare),
            links: observations.count
        )
    }
}

private struct LinkKey: Hashable, Comparable {
    var transmitter: Int
    var receiver: Int

    static func < (lhs: LinkKey, rhs: LinkKey) -> Bool {
        (lhs.receiver, lhs.transmitter) < (rhs.receiver, rhs.transmitter)
    }
}

/// A link's running statistics: sums over adverts that fade with time.
private struct LinkStatistics: Sendable {
    var weight = 0.0
    var sum = 0.0
    var squares = 0.0
    var lastTime: Double

    init(time: Double) {
        lastTime = time
    }

    mutating func add(rssi: Double, adverts: Double, time: Double, memory: Double) {
        if time > lastTime {
            let keep = fade(over: time - lastTime, memory: memory)
            weight *= keep
            sum *= keep
            squares *= keep
            lastTime = time
        }
        weight += adverts
        sum += adverts * rssi
        squares += adverts * rssi * rssi
    }

    var mean: Double { weight > 0 ? sum / weight : 0 }

    /// The adverts' spread around the mean, dB² (at least 1).
    var spread: Double { weight > 0 ? max(squares / weight - mean * mean, 1) : 1 }

    /// How many adverts the link holds as of `now`.
    func adverts(at now: Double, memory: Double) -> Double {
        weight * fade(over: max(now - lastTime, 0), memory: memory)
    }

    private func fade(over seconds: Double, memory: Double) -> Double {
        guard memory > 0, memory.isFinite, seconds.isFinite else { return 1 }
        return exponential(-seconds / memory)
    }
}
