public import WhereaboutsCore

/// Why an agent (or tag) keeps its values instead of taking fitted ones.
public enum CalibrationRefusal: Sendable, Hashable, CustomStringConvertible {
    /// Nothing of it was heard.
    case notHeard
    /// Fewer samples than the fit needs.
    case tooFewSamples(Int, needed: Int)
    /// Its samples span too narrow a range of distances to tell its exponent from its offset.
    case narrowDistanceSpread(Double, needed: Double)

    public var description: String {
        switch self {
        case .notHeard:
            "nothing heard"
        case .tooFewSamples(let count, let needed):
            "only \(count) samples (needs \(needed))"
        case .narrowDistanceSpread(let spread, let needed):
            "its distances span only \(spread.rounded(toDecimals: 2)) m (needs \(needed.rounded(toDecimals: 2)) m)"
        }
    }
}

/// What the fit did for one agent.
public struct AgentCalibration: Sendable, Hashable {
    /// The agent's index in the map.
    public var agentIndex: Int
    /// The agent's id.
    public var id: String
    /// Samples of it the fit used.
    public var samples: Int
    /// The nearest and farthest distance among its samples, metres.
    public var distances: ClosedRange<Double>?
    /// Why it kept its values; nil when it was fitted.
    public var refusal: CalibrationRefusal?
    /// Its constants before (the map's).
    public var before: AgentConstants
    /// Its constants after: fitted, or the map's when refused.
    public var after: AgentConstants
    /// RMS of its RSSI residuals with the map's constants, dB.
    public var residualBefore: Double?
    /// RMS of its RSSI residuals with the fitted constants, dB.
    public var residualAfter: Double?

    /// Whether the agent was fitted.
    public var isFitted: Bool { refusal == nil }
}

/// What the fit did for one tag (or agent beacon): its measured power at 1 m.
public struct TransmitterCalibration: Sendable, Hashable {
    /// The transmitter.
    public var identity: TagIdentity
    /// Samples of it the fit used.
    public var samples: Int
    /// Why it kept its power; nil when it was fitted.
    public var refusal: CalibrationRefusal?
    /// The power ranging used before: the map's, else the advertised one, else the map's default.
    public var before: Double
    /// The power after.
    public var after: Double
    /// The power it advertised, if it did.
    public var advertised: Double?
    /// The posterior standard deviation of the fitted power, dB (nil when it was not fitted): how sure the fit is
    /// of it, priors included.
    public var deviation: Double?

    /// Whether the power was fitted.
    public var isFitted: Bool { refusal == nil }
}

/// The outcome of one fit: every agent and transmitter, fitted or kept with the reason.
public struct CalibrationResult: Sendable, Hashable {
    /// Every agent of the map, in map order.
    public var agents: [AgentCalibration]
    /// Every transmitter that was heard, sorted by identity.
    public var transmitters: [TransmitterCalibration]
    /// Per agent, in map order, the factor the survey's coverage put on its priors' deviations (1: the settings'
    /// own; smaller: pulled harder toward the defaults).
    public var agentPriorScales: [Double] = []
    /// Samples used.
    public var samples: Int
    /// Robust spread of the standardised residuals after the fit (about 1 when the noise model was right).
    public var scale: Double

    /// Whether anything was fitted at all.
    public var fittedAnything: Bool { agents.contains(where: \.isFitted) || transmitters.contains(where: \.isFitted) }

    /// The fitted constants by agent id (fitted agents only).
    public var fittedAgents: [String: AgentConstants] {
        Dictionary(agents.filter(\.isFitted).map { ($0.id, $0.after) }, uniquingKeysWith: { first, _ in first })
    }

    /// The fitted powers by transmitter (fitted ones only).
    public var fittedPowers: [TagIdentity: Double] {
        Dictionary(
            transmitters.filter(\.isFitted).map { ($0.identity, $0.after) }, uniquingKeysWith: { first, _ in first })
    }
}

/// Summary of positioning errors, metres.
public struct ErrorSummary: Sendable, Hashable {
    /// How many positions were scored.
    public var count: Int
    /// The median error.
    public var median: Double
    /// The 90th percentile.
    public var p90: Double

    /// Summarises errors; nil when there are none.
    public init?(_ errors: [Double]) {
        guard let middle = WhereaboutsCalibration.median(errors), let p90 = percentile(errors, 0.9) else {
            return nil
        }
        count = errors.count
        median = middle
        self.p90 = p90
    }

    /// Summarises two sets of errors as one distribution in which the first set weighs `share` and the second
    /// `1 − share` (each error of a set equally); nil when both are empty.
    public init?(blending first: [Double], share: Double, with second: [Double]) {
        let share = first.isEmpty ? 0 : second.isEmpty ? 1 : min(max(share, 0), 1)
        let weighted =
            (first.map { ($0, share / Double(first.count)) } + second.map { ($0, (1 - share) / Double(second.count)) })
            .sorted { $0.0 < $1.0 }
        guard !weighted.isEmpty else { return nil }
        func quantile(_ fraction: Double) -> Double {
            var total = 0.0
            for (value, weight) in weighted {
                total += weight
                if total >= fraction - 1e-12 { return value }
            }
            return weighted[weighted.count - 1].0
        }
        count = weighted.count
        median = quantile(0.5)
        p90 = quantile(0.9)
    }
}
