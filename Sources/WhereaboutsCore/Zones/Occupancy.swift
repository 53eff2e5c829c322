/// Who is in a zone.
public struct Occupancy: Sendable, Hashable {
    /// The zone.
    public var zone: ZoneKey
    /// Whether the count can be trusted.
    public var state: ZoneState
    /// The tags in it, sorted by identity.
    public var tags: [TagIdentity]
    /// For each of ``tags``, how likely it is in the zone as of the update that last placed it.
    public var probabilities: [Double]

    /// How many tags are in it.
    public var count: Int { tags.count }
}

/// Whether a zone's occupancy can be known right now.
public enum ZoneState: String, Sendable, Hashable {
    /// At least one agent that covers the zone is online.
    case known
    /// Every agent that covers the zone is offline or silent: the zone may or may not be empty.
    case unknown
}
