public import WhereaboutsCore

/// A transmitter as the fit sees it: the power ranging uses for it now, and what its power is pulled toward.
public struct TransmitterPrior: Sendable, Hashable {
    /// The transmitter.
    public var identity: TagIdentity
    /// The power ranging uses now: the map's, else the advertised one, else the map's default.
    public var inForce: Double
    /// The power it advertised, if it did.
    public var advertised: Double?
    /// The prior standard deviation of its power around `inForce`, dB.
    public var sigma: Double

    public init(identity: TagIdentity, inForce: Double, advertised: Double?, sigma: Double) {
        self.identity = identity
        self.inForce = inForce
        self.advertised = advertised
        self.sigma = sigma
    }

    /// The prior of a tag's power from the map and its adverts: the map's power or the advertised one with a
    /// narrow prior; the map's default with a wide one.
    public init(identity: TagIdentity, advertised: Double?, map: FloorMap, settings: CalibrationSettings) {
        let named = map.knownTag(identity)?.measuredPower
        let known = named ?? advertised
        self.init(
            identity: identity,
            inForce: known ?? map.model.measuredPower,
            advertised: advertised,
            sigma: known == nil ? settings.unknownPowerPriorSigma : settings.knownPowerPriorSigma
        )
    }
}

/// Fits agents' constants (and, optionally, transmitters' powers) from observations, with the refusals, priors
/// and bounds of ``CalibrationSettings``. Shared by the guided and the automatic calibration.
struct ConstantsFitter: Sendable {
    var map: FloorMap
    var settings: CalibrationSettings
    /// The constants in force per agent, in map order: the "before", and what a refused agent keeps.
    var inForce: [AgentConstants]
    var transmitters: [TransmitterPrior]
    /// Whether transmitters' powers are fitted (guided) or held at their values in force (automatic).
    var fitsPowers: Bool
    /// An agent with fewer observations than this keeps its values.
    var minimumSamples: Int
    /// Per agent, in map order, the factor on its offset's and exponent's prior deviations (1: the settings'
    /// own; smaller: pulled harder toward the defaults). Missing entries count as 1.
    var agentPriorScales: [Double] = []
    /// Per transmitter, the factor on its power's prior deviation. Missing entries count as 1.
    var powerPriorScales: [Double] = []

    /// Fits the observations naming an agent of the map and a known transmitter; the rest are ignored.
    func fit(_ observations: [PathLossObservation]) -> CalibrationResult {
        let usable = observations.filter {
            map.agents.indices.contains($0.receiver) && transmitters.indices.contains($0.transmitter)
        }
        let coverage = Coverage(usable, agentCount: map.agents.count, transmitterCount: transmitters.count)
        let refusals = agentRefusals(coverage)
        let transmitterRefusals = transmitterRefusals(coverage)
        let solution = regression(refusals: refusals, transmitterRefusals: transmitterRefusals).solve(usable)
        let residuals = self.residuals(usable, solution: solution)
        let agents = map.agents.indices.map { index in
            AgentCalibration(
                agentIndex: index,
                id: map.agents[index].id,
                samples: coverage.counts[index],
                distances: coverage.counts[index] > 0 ? coverage.nearest[index]...coverage.farthest[index] : nil,
                refusal: refusals[index],
                before: inForce[index],
                after: refusals[index] == nil
                    ? AgentConstants(rssiOffset: solution.offsets[index], pathLossExponent: solution.exponents[index])
                    : inForce[index],
                residualBefore: rootMeanSquare(residuals.before[index]),
                residualAfter: rootMeanSquare(residuals.after[index])
            )
        }
        return CalibrationResult(
            agents: agents,
            transmitters: transmitterCalibrations(coverage, refusals: transmitterRefusals, solution: solution),
            agentPriorScales: map.agents.indices.map { agentPriorScale($0) },
            samples: usable.count,
            scale: solution.scale
        )
    }

    /// How much of each agent and transmitter the observations cover: their counts, and each agent's distances.
    private struct Coverage {
        var counts: [Int]
        var nearest: [Double]
        var farthest: [Double]
        var transmitterCounts: [Int]

        init(_ observations: [PathLossObservation], agentCount: Int, transmitterCount: Int) {
            counts = [Int](repeating: 0, count: agentCount)
            nearest = [Double](repeating: .infinity, count: agentCount)
            farthest = [Double](repeating: -.infinity, count: agentCount)
            transmitterCounts = [Int](repeating: 0, count: transmitterCount)
            for observation in observations {
                counts[observation.receiver] += 1
                nearest[observation.receiver] = min(nearest[observation.receiver], observation.distance)
                farthest[observation.receiver] = max(farthest[observation.receiver], observation.distance)
                transmitterCounts[observation.transmitter] += 1
            }
        }
    }

    /// Why each agent keeps its values (nil: it is fitted): unheard, too few samples, or too narrow a spread.
    private func agentRefusals(_ coverage: Coverage) -> [CalibrationRefusal?] {
        map.agents.indices.map { index in
            if coverage.counts[index] == 0 { return .notHeard }
            if coverage.counts[index] < minimumSamples {
                return .tooFewSamples(coverage.counts[index], needed: minimumSamples)
            }
            let spread = coverage.farthest[index] - coverage.nearest[index]
            if spread < settings.minimumDistanceSpread {
                return .narrowDistanceSpread(spread, needed: settings.minimumDistanceSpread)
            }
            return nil
        }
    }

    /// Why each transmitter's power is held (nil: it may be fitted): unheard, or too few samples.
    private func transmitterRefusals(_ coverage: Coverage) -> [CalibrationRefusal?] {
        transmitters.indices.map { index in
            if coverage.transmitterCounts[index] == 0 { return .notHeard }
            if coverage.transmitterCounts[index] < settings.minimumSamples {
                return .tooFewSamples(coverage.transmitterCounts[index], needed: settings.minimumSamples)
            }
            return nil
        }
    }

    /// The regression's priors: a refused agent, and a held or refused power, is fixed at its value in force; the
    /// rest are pulled toward the defaults within the settings' bounds.
    private func regression(
        refusals: [CalibrationRefusal?], transmitterRefusals: [CalibrationRefusal?]
    ) -> PathLossRegression {
        var regression = PathLossRegression(powers: [], offsets: [], exponents: [])
        regression.huberThreshold = settings.huberThreshold
        for (index, transmitter) in transmitters.enumerated() {
            let fixed = !fitsPowers || transmitterRefusals[index] != nil
            regression.powers.append(
                ParameterPrior(
                    mean: transmitter.inForce,
                    sigma: transmitter.sigma * (powerPriorScales.indices.contains(index) ? powerPriorScales[index] : 1),
                    bounds: fixed ? transmitter.inForce...transmitter.inForce : settings.powerBounds,
                    fixed: fixed
                ))
        }
        for index in map.agents.indices {
            let current = inForce[index]
            if refusals[index] != nil {
                regression.offsets.append(
                    ParameterPrior(
                        mean: current.rssiOffset, sigma: 1, bounds: current.rssiOffset...current.rssiOffset,
                        fixed: true))
                regression.exponents.append(
                    ParameterPrior(
                        mean: current.pathLossExponent, sigma: 1,
                        bounds: current.pathLossExponent...current.pathLossExponent, fixed: true))
            } else {
                let scale = agentPriorScale(index)
                regression.offsets.append(
                    ParameterPrior(mean: 0, sigma: settings.offsetPriorSigma * scale, bounds: settings.offsetBounds))
                regression.exponents.append(
                    ParameterPrior(
                        mean: map.model.pathLossExponent, sigma: settings.exponentPriorSigma * scale,
                        bounds: settings.exponentBounds))
            }
        }
        return regression
    }

    private func agentPriorScale(_ index: Int) -> Double {
        agentPriorScales.indices.contains(index) ? agentPriorScales[index] : 1
    }

    /// Each agent's RSSI residuals, in observation order, with the constants in force and with the solution's.
    private func residuals(
        _ observations: [PathLossObservation], solution: PathLossRegression.Solution
    ) -> (before: [[Double]], after: [[Double]]) {
        var before = [[Double]](repeating: [], count: map.agents.count)
        var after = [[Double]](repeating: [], count: map.agents.count)
        for observation in observations {
            let agent = observation.receiver
            let old = inForce[agent]
            let expectedBefore = expectedRawRSSI(
                power: transmitters[observation.transmitter].inForce, offset: old.rssiOffset,
                exponent: old.pathLossExponent, distance: observation.distance)
            let expectedAfter = expectedRawRSSI(
                power: solution.powers[observation.transmitter], offset: solution.offsets[agent],
                exponent: solution.exponents[agent], distance: observation.distance)
            before[agent].append(observation.rssi - expectedBefore)
            after[agent].append(observation.rssi - expectedAfter)
        }
        return (before, after)
    }

    /// The heard transmitters' powers, sorted by identity. Held powers (the automatic calibration's) are inputs,
    /// not results: only fitted ones are reported.
    private func transmitterCalibrations(
        _ coverage: Coverage, refusals: [CalibrationRefusal?], solution: PathLossRegression.Solution
    ) -> [TransmitterCalibration] {
        let reported = fitsPowers ? transmitters.indices.filter { coverage.transmitterCounts[$0] > 0 } : []
        let fittedTransmitters = reported.map { index in
            let refusal = refusals[index]
            return TransmitterCalibration(
                identity: transmitters[index].identity,
                samples: coverage.transmitterCounts[index],
                refusal: refusal,
                before: transmitters[index].inForce,
                after: refusal == nil ? solution.powers[index] : transmitters[index].inForce,
                advertised: transmitters[index].advertised,
                deviation: refusal == nil ? solution.powerDeviations[index] : nil
            )
        }
        return fittedTransmitters.sorted { $0.identity < $1.identity }
    }
}
