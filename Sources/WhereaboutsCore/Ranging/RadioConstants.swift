/// The radio constants in force for each agent of a map: its RSSI offset and path-loss exponent.
///
/// They start as the map gives them and change when calibration sets them; the map itself never changes. A floor
/// counts as calibrated while every agent on it has its own exponent.
public struct RadioConstants: Sendable, Hashable {
    /// Per agent, in map order: decibels added to its raw RSSI before ranging.
    public private(set) var rssiOffsets: [Double]
    /// Per agent, in map order: its own path-loss exponent, or nil for the map's default.
    public private(set) var pathLossExponents: [Double?]
    /// The map's default path-loss exponent.
    public let defaultPathLossExponent: Double
    private let agentFloors: [UInt16]
    private let floors: [UInt16]
    private var calibratedFloors: Set<UInt16>
    // False until something is set: until then the map's own agents are the constants in force.
    private var differsFromMap = false

    /// The constants the map gives its agents.
    public init(map: FloorMap) {
        rssiOffsets = map.agents.map(\.rssiOffset)
        pathLossExponents = map.agents.map(\.pathLossExponent)
        defaultPathLossExponent = map.model.pathLossExponent
        agentFloors = map.agents.map(\.floor)
        floors = map.floors.map(\.major)
        calibratedFloors = Self.calibratedFloors(floors, agentFloors: agentFloors, exponents: pathLossExponents)
    }

    /// The exponent an agent ranges with: its own, or the map's default.
    public func pathLossExponent(ofAgent agentIndex: Int) -> Double {
        pathLossExponents[agentIndex] ?? defaultPathLossExponent
    }

    /// Whether every agent on the floor has its own path-loss exponent (and there is at least one).
    public func isCalibrated(floor major: UInt16) -> Bool { calibratedFloors.contains(major) }

    /// Replaces an agent's constants (calibration). Out-of-range indices and values that are not finite, or an
    /// exponent that is not positive, leave everything as it was.
    public mutating func set(_ agentIndex: Int, rssiOffset: Double, pathLossExponent: Double?) {
        guard rssiOffsets.indices.contains(agentIndex), rssiOffset.isFinite,
            pathLossExponent.map({ $0.isFinite && $0 > 0 }) ?? true
        else { return }
        rssiOffsets[agentIndex] = rssiOffset
        pathLossExponents[agentIndex] = pathLossExponent
        differsFromMap = true
        calibratedFloors = Self.calibratedFloors(floors, agentFloors: agentFloors, exponents: pathLossExponents)
    }

    /// The map with these constants written into its agents (for callers that publish or save them).
    public func applied(to map: FloorMap) -> FloorMap {
        guard differsFromMap else { return map }
        // Edited apart and set once: the map rebuilds its agent index on every change to its agents.
        var agents = map.agents
        for index in agents.indices where rssiOffsets.indices.contains(index) {
            agents[index].rssiOffset = rssiOffsets[index]
            agents[index].pathLossExponent = pathLossExponents[index]
        }
        var result = map
        result.agents = agents
        return result
    }

    private static func calibratedFloors(
        _ floors: [UInt16],
        agentFloors: [UInt16],
        exponents: [Double?]
    ) -> Set<UInt16> {
        Set(
            floors.filter { major in
                let agents = agentFloors.indices.filter { agentFloors[$0] == major }
                return !agents.isEmpty && agents.allSatisfy { exponents[$0] != nil }
            })
    }
}
