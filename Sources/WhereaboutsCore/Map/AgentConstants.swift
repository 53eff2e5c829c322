/// An agent's radio constants: what ranging adds to its raw RSSI, and its path-loss exponent.
///
/// Calibration fits them and the map file holds them (`rssi_offset`, `path_loss_exponent`), so they live beside
/// ``Agent``, below both.
public struct AgentConstants: Sendable, Hashable {
    /// Decibels added to the agent's raw RSSI.
    public var rssiOffset: Double
    /// The path-loss exponent.
    public var pathLossExponent: Double

    public init(rssiOffset: Double, pathLossExponent: Double) {
        self.rssiOffset = rssiOffset
        self.pathLossExponent = pathLossExponent
    }

    /// The constants an agent of `map` has: its own, or the map's default exponent.
    public init(_ agent: Agent, in map: FloorMap) {
        self.init(rssiOffset: agent.rssiOffset, pathLossExponent: agent.pathLossExponent ?? map.model.pathLossExponent)
    }
}
