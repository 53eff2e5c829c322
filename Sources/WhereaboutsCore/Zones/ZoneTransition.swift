/// A tag entering or leaving a zone (CoreLocation's didEnterRegion / didExitRegion).
public struct ZoneTransition: Sendable, Hashable {
    /// Enter or exit.
    public enum Kind: String, Sendable, Hashable {
        case enter
        case exit
    }

    /// When it was decided (seconds).
    public var time: Double
    /// The tag.
    public var tag: TagIdentity
    /// The zone.
    public var zone: ZoneKey
    /// Enter or exit.
    public var kind: Kind
}
