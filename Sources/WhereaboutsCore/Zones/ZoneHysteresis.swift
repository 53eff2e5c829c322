/// One tag's zone, decided with hysteresis so that a tag standing near a boundary does not flap.
///
/// From the grid filter's zone probabilities (``update(evidence:time:configuration:)``): the tag moves to another
/// zone (or to no zone) only when that is at least ``Configuration/enterProbability`` likely, and stays so for
/// ``Configuration/dwell`` seconds; until then it stays where it is, however the rest of the mass is spread.
///
/// From positions alone (``update(position:zones:time:configuration:)``, the trilateration path): a tag leaves its zone for another (or for no zone) only when its position is at least
/// ``Configuration/margin`` metres out of the zone it is in, and stays out for ``Configuration/dwell`` seconds. A tag
/// in no zone enters one once it has been inside it for the dwell time.
public struct ZoneHysteresis: Sendable, Hashable {
    /// Tuning of the hysteresis.
    public struct Configuration: Sendable, Hashable {
        /// How far past a boundary, in metres, a position must be to count toward a change.
        public var margin: Double = 0.5
        /// How long, in seconds, the change must hold before it is reported.
        public var dwell: Double = 1
        /// How likely another zone (or no zone) must be before the tag moves there …
        public var enterProbability: Double = 0.7
        /// … for this long, in seconds (the grid filter's posterior moves every update, so it needs a little longer
        /// than a position does: 1 s let a still tag 0.3 m from a boundary change zone 6 times an hour).
        public var probabilityDwell: Double = 2

        public init() {}
    }

    /// The zone the tag is in, or nil for none.
    public private(set) var current: ZoneKey?
    private var challenger: ZoneKey??
    private var challengerSince = 0.0

    public init(current: ZoneKey? = nil) {
        self.current = current
    }

    /// Takes a position on a floor; returns the change, if one is decided now.
    ///
    /// - Parameter zones: the zones of the floor the tag is on.
    public mutating func update(
        position: Point,
        zones: [Zone],
        time: Double,
        configuration: Configuration
    ) -> (from: ZoneKey?, to: ZoneKey?)? {
        let containing = zones.first { $0.polygon.contains(position) }
        let candidate = containing?.key
        guard candidate != current else {
            challenger = nil
            return nil
        }
        // How far the position is out of the current zone: it must be clearly gone from there, whatever the shape
        // of the zone it is going to (a position hugging the building's outer wall is only centimetres inside the
        // next room, yet well out of the last one). From no zone, being inside the new one is enough.
        let depth: Double
        if let current, let zone = zones.first(where: { $0.key == current }) {
            depth = -zone.polygon.signedDistance(position)
        } else if current != nil {
            // The current zone is on another floor: the floor change already decided it.
            depth = .infinity
        } else {
            depth = containing.map { $0.polygon.signedDistance(position) } ?? 0
        }
        guard depth >= (current == nil ? 0 : configuration.margin) else { return nil }
        if challenger != .some(candidate) {
            challenger = .some(candidate)
            challengerSince = time
        }
        guard time - challengerSince >= configuration.dwell else { return nil }
        let change = (from: current, to: candidate)
        current = candidate
        challenger = nil
        return change
    }

    /// Takes the posterior mass per zone of the floor the tag is on; returns the change, if one is decided now.
    mutating func update(
        evidence: ZoneEvidence,
        time: Double,
        configuration: Configuration
    ) -> (from: ZoneKey?, to: ZoneKey?)? {
        var candidate: ZoneKey?
        var best = evidence.outside
        for (zone, mass) in zip(evidence.zones, evidence.mass) where mass > best {
            candidate = zone
            best = mass
        }
        guard candidate != current, best >= configuration.enterProbability else {
            challenger = nil
            return nil
        }
        if challenger != .some(candidate) {
            challenger = .some(candidate)
            challengerSince = time
        }
        guard time - challengerSince >= configuration.probabilityDwell else { return nil }
        let change = (from: current, to: candidate)
        current = candidate
        challenger = nil
        return change
    }

    /// Leaves the current zone at once (the tag timed out or changed floor); returns the zone left.
    public mutating func leave() -> ZoneKey? {
        let left = current
        current = nil
        challenger = nil
        return left
    }
}
