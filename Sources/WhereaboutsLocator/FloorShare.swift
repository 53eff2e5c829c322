public import WhereaboutsCore
import WhereaboutsWire

/// The floors one locator owns when a site is split between several locators (`--floors 1,2`), and what it must
/// hear to decide them.
///
/// Every output has exactly one owner, so that two locators never publish different values on one retained topic:
/// - a zone's occupancy and its enter/exit events belong to the locator that owns the zone's floor;
/// - a tag's position, zone summary and location belong to the locator that owns the floor the tag is on now, and
///   change hands with the tag (the one it leaves stops publishing without clearing; the one it reaches publishes);
/// - the site-wide outputs (the classic locator status and metrics topics, calibration, and the Home Assistant
///   configs of the site and of the tags) belong to the share that holds the map's lowest floor, the
///   ``ownsSite`` share. Other shares announce themselves on `…/locator/floors-<a>-<b>/status`.
///
/// A tag's floor is decided from the strongest agents of each floor, so a locator that heard only its own floors'
/// agents would put a tag that is upstairs, but heard through the slab, on its own floor, and publish it twice. A
/// share therefore also hears the agents of the floors next to its own (by height), its *margin*: a tag on one of
/// its floors is then decided from the same evidence as one locator of the whole site would have, unless a floor two
/// slabs away hears it better than every nearer one. Two neighbouring shares hear each other's boundary floors, make
/// the same floor decision from the same readings, and so hand a tag over within one update.
public struct FloorShare: Sendable, Hashable {
    /// The floors (majors) this locator owns, sorted.
    public let floors: [UInt16]
    /// The floors whose agents it hears: its own and the floors next to them, sorted.
    public let heardFloors: [UInt16]
    /// Whether it owns the site-wide outputs: it holds the map's lowest floor.
    public let ownsSite: Bool
    /// `floors-1-2`: the share's name in its status and metrics topics (digits and dashes only).
    public let name: String

    private let owned: Set<UInt16>
    private let heard: Set<UInt16>

    /// Why a share cannot be made for a map.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// No floor was given.
        case empty
        /// The map has no floor with this major.
        case unknownFloor(UInt16)

        public var description: String {
            switch self {
            case .empty: "--floors names no floor"
            case .unknownFloor(let major): "--floors names floor \(major), which the map does not have"
            }
        }
    }

    /// The share of `map` made of `floors` (majors; duplicates are ignored).
    public init(map: FloorMap, floors: [UInt16]) throws(Problem) {
        guard !floors.isEmpty else { throw .empty }
        for major in floors where map.floor(major: major) == nil { throw .unknownFloor(major) }
        self.init(lenient: map, floors: floors)
    }

    /// The share of `map` made of those of `floors` the map has (possibly none: then it owns and hears nothing).
    init(lenient map: FloorMap, floors: [UInt16]) {
        let owned = Set(floors.filter { map.floor(major: $0) != nil })
        self.owned = owned
        self.floors = owned.sorted()
        // Floors in the order they are stacked; the neighbours of an owned floor are the floors just below and above.
        let stacked = map.floors.sorted { ($0.height, $0.major) < ($1.height, $1.major) }.map(\.major)
        var heard = owned
        for (index, major) in stacked.enumerated() where owned.contains(major) {
            if index > 0 { heard.insert(stacked[index - 1]) }
            if index + 1 < stacked.count { heard.insert(stacked[index + 1]) }
        }
        self.heard = heard
        heardFloors = heard.sorted()
        ownsSite = map.floors.first.map { owned.contains($0.major) } ?? false  // floors are sorted by major
        name = Topics.shareName(floors: self.floors)
    }

    /// Whether this share owns the outputs of a floor.
    public func owns(floor major: UInt16) -> Bool { owned.contains(major) }

    /// Whether this share hears the agents of a floor.
    public func hears(floor major: UInt16) -> Bool { heard.contains(major) }
}
