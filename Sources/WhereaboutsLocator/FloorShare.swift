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
/// A tag's floor is decided from the strongest agents of each floor, with hysteresis, so a locator that heard only
/// its own floors' agents would put a tag that is upstairs, but heard through the slab, on its own floor, and publish
/// it twice. A share therefore also hears the agents of ``margin`` floors above and below its own (by height). One
/// floor is not enough: a locator that cannot hear the floor above its neighbour loses track of a tag that went up
/// there, and when the tag comes back its floor decision runs out of step with the neighbour's by several updates
/// (measured in docs/scale.md). With two, neighbouring shares decide the floors at their boundary from the same
/// readings as one locator of the whole site, unless agents three floors away hear the tag, and so hand a tag over
/// at the same update.
public struct FloorShare: Sendable, Hashable {
    /// The floors (majors) this locator owns, sorted.
    public let floors: [UInt16]
    /// The floors whose agents it hears: its own and ``margin`` floors above and below them, sorted.
    public let heardFloors: [UInt16]
    /// How many floors above and below its own it hears.
    public let margin: Int
    /// The margin unless told otherwise: two floors.
    public static let defaultMargin = 2
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

    /// The share of `map` made of `floors` (majors; duplicates are ignored), hearing `margin` floors around them.
    public init(map: FloorMap, floors: [UInt16], margin: Int = defaultMargin) throws(Problem) {
        guard !floors.isEmpty else { throw .empty }
        for major in floors where map.floor(major: major) == nil { throw .unknownFloor(major) }
        self.init(lenient: map, floors: floors, margin: margin)
    }

    /// The share of `map` made of those of `floors` the map has (possibly none: then it owns and hears nothing).
    init(lenient map: FloorMap, floors: [UInt16], margin: Int) {
        self.margin = max(margin, 0)
        let owned = Set(floors.filter { map.floor(major: $0) != nil })
        self.owned = owned
        self.floors = owned.sorted()
        // Floors in the order they are stacked; an owned floor's neighbours are the floors just below and above.
        let stacked = map.floors.sorted { ($0.height, $0.major) < ($1.height, $1.major) }.map(\.major)
        var heard = owned
        for (index, major) in stacked.enumerated() where owned.contains(major) {
            let reach = max(index - self.margin, 0)...min(index + self.margin, stacked.count - 1)
            for neighbour in reach { heard.insert(stacked[neighbour]) }
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

extension FloorShare? {
    /// Whether the locator with this share (nil: the whole site's) publishes the outputs of a floor.
    func owns(floor major: UInt16) -> Bool { self?.owns(floor: major) ?? true }

    /// Whether it publishes the site-wide outputs.
    var ownsSite: Bool { self?.ownsSite ?? true }

    /// Whether it hears the agents of a floor.
    func hears(floor major: UInt16) -> Bool { self?.hears(floor: major) ?? true }

    /// Its `online`/`offline` topic: `…/locator/status`, or the share's own for a share that does not own the site,
    /// so that one locator's last will never says another is offline.
    func statusTopic(_ topics: Topics) -> Topic {
        guard let share = self, !share.ownsSite else { return topics.locatorStatus }
        return topics.locatorStatus(shareOf: share.floors)
    }

    /// Where its metrics go: `…/locator/metrics`, or the share's own, like ``statusTopic(_:)``.
    func metricsTopic(_ topics: Topics) -> Topic {
        guard let share = self, !share.ownsSite else { return topics.locatorMetrics }
        return topics.locatorMetrics(shareOf: share.floors)
    }
}
