public import WhereaboutsCalibration
public import WhereaboutsCore
import WhereaboutsJSON
public import WhereaboutsSession
public import WhereaboutsWire

/// Which radio constants the locator ranges with.
public enum CalibrationMode: String, Sendable, Hashable, CaseIterable {
    /// The map's per-agent constants are ignored: every agent ranges with offset 0 and the map's default exponent.
    case off
    /// The map's constants as they are (written by `whereabouts calibrate`, or by hand). The default.
    case guided
    /// The map's constants to start with; then every agent's constants fitted periodically from the agents
    /// hearing each other's beacons, applied where they predict held-out links better.
    case auto
}

/// The locator's calibration: which constants are in force, where they came from, and, in `auto` mode, the
/// periodic fit from the agents' beacons (``AgentLinkCalibrator``).
///
/// A fitted agent's constants replace those in force only when, on links left out of the fit, they predict the
/// RSSI better by ``Configuration/improvementMargin`` dB (RMS), or by ``Configuration/guidedMargin`` dB when the
/// values in force came from the map's per-agent constants (a guided calibration is trusted until the automatic
/// one clearly beats it). Every change is logged, and the constants in force are published, retained, on
/// `Topics.calibration`.
public struct LocatorCalibration: Sendable {
    /// Settings.
    public struct Configuration: Sendable, Hashable {
        /// Which constants to range with.
        public var mode: CalibrationMode = .guided
        /// Seconds between automatic fits (the first comes one interval after start).
        public var interval: Double = 600
        /// Held-out RMS improvement (dB) needed to replace constants from the map's per-agent values. Links
        /// between agents only span the distances between antennas, where an offset and an exponent trade off
        /// against each other; a walk with tags constrains both where tags are, so its values win unless the
        /// links clearly disagree (an agent replaced, moved or turned).
        public var guidedMargin: Double = 1.0
        /// Held-out RMS improvement (dB) needed to replace defaults or earlier automatic constants.
        public var improvementMargin: Double = 0.1
        /// The automatic fit's settings.
        public var calibrator = AgentLinkCalibrator.Configuration()

        public init() {}
    }

    /// Where an agent's constants in force came from.
    public enum Source: String, Sendable, Hashable {
        /// The map's per-agent values (a guided calibration, or set by hand).
        case guided
        /// The automatic calibration.
        case auto
        /// The map's defaults: offset 0 and the default exponent.
        case map
    }

    /// An agent's constants in force and their history.
    public struct AgentState: Sendable, Hashable {
        /// Where they came from.
        public var source: Source
        /// When the automatic calibration fitted them (Unix seconds), if it did.
        public var fitted: Double?
        /// Held-out RSSI residual RMS (dB) of the constants they replaced …
        public var residualBefore: Double?
        /// … and of these.
        public var residualAfter: Double?
    }

    /// The settings.
    public let configuration: Configuration
    /// Per agent, in map order.
    public private(set) var agents: [AgentState]
    private var calibrator: AgentLinkCalibrator
    private var nextRun: Double?
    private var loggedRefusals: [CalibrationRefusal?]

    /// Sets up calibration for a map.
    public init(map: FloorMap, configuration: Configuration = Configuration()) {
        self.configuration = configuration
        calibrator = AgentLinkCalibrator(map: map, configuration: configuration.calibrator)
        agents = map.agents.map { agent in
            let own = agent.rssiOffset != 0 || agent.pathLossExponent != nil
            return AgentState(source: own && configuration.mode != .off ? .guided : .map)
        }
        loggedRefusals = Array(repeating: nil, count: map.agents.count)
    }

    /// Puts the mode's starting constants in force: in `off` mode, every agent's defaults.
    public func prepare(_ engine: inout LocatorEngine) {
        guard configuration.mode == .off else { return }
        for index in engine.map.agents.indices {
            engine.setAgentConstants(index, rssiOffset: 0, pathLossExponent: nil)
        }
    }

    /// Takes a reading the engine refused as another agent's beacon (`ReadingRejection.agentBeacon`).
    public mutating func take(_ reading: Reading, receiver: Int, engine: LocatorEngine) {
        guard configuration.mode == .auto, let transmitter = engine.agentIndex(ofBeacon: reading.tag) else { return }
        calibrator.take(
            receiver: receiver, transmitter: transmitter, rssi: reading.rssi, count: reading.count,
            advertisedPower: reading.measuredPower, time: reading.time)
    }

    /// Runs the automatic fit when it is due and applies what improves; returns the logs and the publication.
    public mutating func tick(
        now: Double, engine: inout LocatorEngine, topics: Topics
    ) -> [ServiceAction<LocatorEffect>] {
        guard configuration.mode == .auto, now.isFinite else { return [] }
        guard let due = nextRun else {
            nextRun = now + configuration.interval
            return []
        }
        guard now >= due else { return [] }
        nextRun = now + configuration.interval
        let map = engine.map
        let inForce = map.agents.map { AgentConstants($0, in: map) }
        let fit = calibrator.fit(inForce: inForce, now: now)
        var actions: [ServiceAction<LocatorEffect>] = []
        var changed = false
        for agent in fit.result.agents {
            let index = agent.agentIndex
            if let refusal = agent.refusal {
                if loggedRefusals[index] != refusal {
                    loggedRefusals[index] = refusal
                    actions.append(
                        .log(
                            .info, "calibration: agent \(agent.id) keeps its constants: \(refusal) from agents' beacons"
                        ))
                }
                continue
            }
            loggedRefusals[index] = nil
            guard let before = fit.heldOutBefore[index], let after = fit.heldOutAfter[index] else { continue }
            let margin = agents[index].source == .guided ? configuration.guidedMargin : configuration.improvementMargin
            guard after <= before - margin else { continue }
            engine.setAgentConstants(
                index, rssiOffset: agent.after.rssiOffset, pathLossExponent: agent.after.pathLossExponent)
            agents[index] = AgentState(source: .auto, fitted: now, residualBefore: before, residualAfter: after)
            changed = true
            actions.append(
                .log(
                    .info,
                    "calibration: agent \(agent.id) offset \(text(agent.before.rssiOffset)) -> "
                        + "\(text(agent.after.rssiOffset)) dB, exponent \(text(agent.before.pathLossExponent, 3)) -> "
                        + "\(text(agent.after.pathLossExponent, 3)) (automatic, \(agent.samples) links; held-out "
                        + "residual \(text(before)) -> \(text(after)) dB)"))
        }
        if changed {
            actions.append(.publish(publication(engine: engine, topics: topics, now: now)))
        }
        return actions
    }

    /// The retained message on `Topics.calibration`: the mode, and per agent the constants in force, their
    /// source, when they were fitted, and the held-out residuals before and after.
    public func publication(engine: LocatorEngine, topics: Topics, now: Double) -> Publication {
        let map = engine.map
        func optional(_ value: Double?, _ decimals: Int = 2) -> JSONValue {
            value.map { .number(rounded($0, decimals)) } ?? .null
        }
        let entries: [JSONValue] = map.agents.indices.map { index in
            let agent = map.agents[index]
            let state = agents.indices.contains(index) ? agents[index] : AgentState(source: .map)
            return .object(
                JSONObject([
                    ("agent", .string(agent.id)),
                    ("rssi_offset", .number(rounded(agent.rssiOffset, 2))),
                    ("path_loss_exponent", .number(rounded(agent.pathLossExponent ?? map.model.pathLossExponent, 3))),
                    ("source", .string(state.source.rawValue)),
                    ("fitted", optional(state.fitted, 3)),
                    ("residual_before", optional(state.residualBefore)),
                    ("residual_after", optional(state.residualAfter)),
                ]))
        }
        let payload = JSONValue.object(
            JSONObject([
                ("mode", .string(configuration.mode.rawValue)), ("updated", .number(rounded(now, 3))),
                ("agents", .array(entries)),
            ]))
        return Publication(
            topic: topics.calibration, payload: JSONWriter().string(payload), qos: .atLeastOnce, retain: true)
    }
}

private func rounded(_ value: Double, _ decimals: Int) -> Double {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    return (value * scale).rounded() / scale
}

private func text(_ value: Double, _ decimals: Int = 2) -> String {
    String(rounded(value, decimals))
}
