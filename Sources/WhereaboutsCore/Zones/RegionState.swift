/// A tag's state for one zone, as CoreLocation's didDetermineState gives it.
public enum RegionState: String, Sendable, Hashable {
    case inside
    case outside
    case unknown
}
