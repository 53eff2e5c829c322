/// A site's floor map: floors, zones, scanner agents and known tags, following the iBeacon hierarchy.
///
/// The proximity UUID names the site, the major a floor, the minor a zone on that floor. Every length is in
/// metres in the map's frame; every power in dBm; every duration in seconds.
///
/// A `FloorMap` only exists validated: make one with `FloorMap.load(_:)` or `FloorMap.parse(_:)` from
/// `WhereaboutsMapFile`, which report every problem with its JSON path instead. Its initializers are `package`
/// so that the map file reader, and nothing outside this package, builds one.
public struct FloorMap: Sendable {
    /// The site: its proximity UUID and name.
    public var site: Site
    /// The floors, sorted by major.
    public var floors: [Floor] {
        didSet { floorIndexByMajor = Self.index(floors.map(\.major)) }
    }
    /// The zones, sorted by floor major then minor.
    public var zones: [Zone]
    /// The scanner agents, in map order.
    public var agents: [Agent] {
        didSet { agentIndexByID = Self.index(agents.map(\.id)) }
    }
    /// Tags the map names, with optional overrides.
    public var knownTags: [KnownTag] {
        didSet { knownTagIndex = Self.index(knownTags.map(\.identity)) }
    }
    /// Walls that attenuate the signal (used by the simulator's channel and drawn by the renderer).
    public var walls: [Wall]
    /// Stairs (or lifts) joining floors, where people change floor: the locator's floor choice and the simulator's
    /// tags use them; optional.
    public var stairs: [Stairs]
    /// Areas nobody stands in (desk blocks, shafts), per floor.
    public var obstacles: [Obstacle]
    /// The radio model and timing defaults.
    public var model: RadioModel

    private var agentIndexByID: [String: Int]
    private var floorIndexByMajor: [UInt16: Int]
    private var knownTagIndex: [TagIdentity: Int]

    package init(
        site: Site,
        floors: [Floor],
        zones: [Zone],
        agents: [Agent],
        knownTags: [KnownTag],
        walls: [Wall],
        stairs: [Stairs] = [],
        obstacles: [Obstacle] = [],
        model: RadioModel
    ) {
        self.obstacles = obstacles
        self.site = site
        self.floors = floors.sorted { $0.major < $1.major }
        self.zones = zones.sorted { ($0.floor, $0.minor) < ($1.floor, $1.minor) }
        self.agents = agents
        self.knownTags = knownTags
        self.walls = walls
        self.stairs = stairs
        self.model = model
        agentIndexByID = Self.index(agents.map(\.id))
        floorIndexByMajor = Self.index(self.floors.map(\.major))
        knownTagIndex = Self.index(knownTags.map(\.identity))
    }

    /// Where each key first appears. Rebuilt whenever its array is changed, so that an edited map (calibration's
    /// constants, a test's agent removed) never looks an entry up at an index it no longer has.
    private static func index<Key: Hashable>(_ keys: [Key]) -> [Key: Int] {
        Dictionary(keys.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The index in ``agents`` of the agent with this id.
    public func agentIndex(of id: String) -> Int? { agentIndexByID[id] }

    /// The floor with this major.
    public func floor(major: UInt16) -> Floor? { floorIndexByMajor[major].map { floors[$0] } }

    /// The map's entry for a tag, if it names it.
    public func knownTag(_ identity: TagIdentity) -> KnownTag? { knownTagIndex[identity].map { knownTags[$0] } }

    /// The zones on a floor.
    public func zones(onFloor major: UInt16) -> [Zone] { zones.filter { $0.floor == major } }

    /// The constraint that selects the site's tags by default: the site UUID.
    public var defaultConstraint: BeaconIdentityConstraint { BeaconIdentityConstraint(uuid: site.uuid) }
}

/// The site a map describes.
public struct Site: Sendable, Hashable {
    /// The iBeacon proximity UUID that names the site.
    public var uuid: BeaconUUID
    /// A name for people.
    public var name: String

    package init(uuid: BeaconUUID, name: String) {
        self.uuid = uuid
        self.name = name
    }
}

/// One floor of the building.
public struct Floor: Sendable, Hashable {
    /// The iBeacon major that names this floor.
    public var major: UInt16
    /// A name for people.
    public var name: String
    /// The floor's outline; positions on this floor are kept inside it.
    public var outline: Polygon
    /// Height of this floor above the ground floor, in metres.
    public var height: Double

    package init(major: UInt16, name: String, outline: Polygon, height: Double) {
        self.major = major
        self.name = name
        self.outline = outline
        self.height = height
    }
}

/// A zone: an area of a floor whose occupancy is published.
public struct Zone: Sendable, Hashable {
    /// The major of the floor the zone is on.
    public var floor: UInt16
    /// The iBeacon minor that names this zone on its floor.
    public var minor: UInt16
    /// A name for people.
    public var name: String
    /// The zone's area, inside its floor's outline.
    public var polygon: Polygon

    package init(floor: UInt16, minor: UInt16, name: String, polygon: Polygon) {
        self.floor = floor
        self.minor = minor
        self.name = name
        self.polygon = polygon
    }

    /// The zone's key: floor major and minor.
    public var key: ZoneKey { ZoneKey(floor: floor, minor: minor) }
}

/// The identity of a zone: its floor's major and its minor.
public struct ZoneKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var floor: UInt16
    public var minor: UInt16

    public init(floor: UInt16, minor: UInt16) {
        self.floor = floor
        self.minor = minor
    }

    public static func < (lhs: ZoneKey, rhs: ZoneKey) -> Bool { (lhs.floor, lhs.minor) < (rhs.floor, rhs.minor) }

    public var description: String { "\(floor)/\(minor)" }
}

/// A scanner agent: a board with a Bluetooth controller at a fixed place.
public struct Agent: Sendable, Hashable {
    /// The agent's id, `[A-Za-z0-9_-]{1,64}`; also its broker account name.
    public var id: String
    /// The major of the floor it is on.
    public var floor: UInt16
    /// Where it stands on the plan.
    public var position: Point
    /// Antenna height above its floor, in metres.
    public var height: Double
    /// Decibels added to this agent's raw RSSI before ranging (a receiver that reads 3 dB low gets +3).
    public var rssiOffset: Double
    /// This agent's path-loss exponent, or nil for the map's default.
    public var pathLossExponent: Double?
    /// What a survey learned of this agent beyond the path-loss model (the radio map), or nil.
    public var radioSurface: RadioSurface? = nil

    package init(
        id: String,
        floor: UInt16,
        position: Point,
        height: Double,
        rssiOffset: Double,
        pathLossExponent: Double?
    ) {
        self.id = id
        self.floor = floor
        self.position = position
        self.height = height
        self.rssiOffset = rssiOffset
        self.pathLossExponent = pathLossExponent
    }
}

/// A tag the map names: a display name and, optionally, its measured power at 1 m.
public struct KnownTag: Sendable, Hashable {
    /// The tag's identity.
    public var identity: TagIdentity
    /// A name for people ("Alice's badge").
    public var name: String
    /// RSSI at 1 m in dBm, overriding what the tag advertises.
    public var measuredPower: Double?
    /// How sure that power is, 1σ in dB (calibration writes the spread it fitted); nil when the map does not say.
    /// Only with ``measuredPower``.
    public var measuredPowerSigma: Double?

    package init(identity: TagIdentity, name: String, measuredPower: Double?, measuredPowerSigma: Double? = nil) {
        self.identity = identity
        self.name = name
        self.measuredPower = measuredPower
        self.measuredPowerSigma = measuredPowerSigma
    }
}

/// A wall segment and the loss it adds to a signal crossing it.
public struct Wall: Sendable, Hashable {
    /// The major of the floor it is on.
    public var floor: UInt16
    /// Where it runs.
    public var segment: Segment
    /// Attenuation in dB for a signal that crosses it.
    public var loss: Double
    /// Whether people cannot walk through it (a wall of a room), other than through its ``doors``.
    public var blocksWalking: Bool
    /// The gaps in a wall that blocks walking, where people pass.
    public var doors: [Door]

    package init(floor: UInt16, segment: Segment, loss: Double, blocksWalking: Bool = false, doors: [Door] = []) {
        self.floor = floor
        self.segment = segment
        self.loss = loss
        self.blocksWalking = blocksWalking
        self.doors = doors
    }

    /// The stretches of the wall that people cannot walk through: the wall less its doors; none when it does not
    /// block walking.
    public var barriers: [Segment] {
        guard blocksWalking else { return [] }
        let length = segment.start.distance(to: segment.end)
        guard length > 0 else { return [] }
        let direction = (segment.end - segment.start) * (1 / length)
        // Each door as an interval of distance along the wall, clipped to it, in order.
        let gaps = doors.map { door -> (Double, Double) in
            let along = (door.centre - segment.start).dot(direction)
            return (max(along - door.width / 2, 0), min(along + door.width / 2, length))
        }.sorted { $0.0 < $1.0 }
        var pieces: [Segment] = []
        var from = 0.0
        for (gapStart, gapEnd) in gaps {
            if gapStart > from + 1e-6 {
                pieces.append(Segment(segment.start + direction * from, segment.start + direction * gapStart))
            }
            from = max(from, gapEnd)
        }
        if length > from + 1e-6 { pieces.append(Segment(segment.start + direction * from, segment.end)) }
        return pieces
    }
}

/// A doorway: a gap in a wall that blocks walking.
public struct Door: Sendable, Hashable {
    /// Its centre, on the wall.
    public var centre: Point
    /// Its width, in metres.
    public var width: Double

    package init(centre: Point, width: Double) {
        self.centre = centre
        self.width = width
    }
}

/// An area of a floor where nobody stands: a block of desks, a shaft, a pillar.
public struct Obstacle: Sendable, Hashable {
    /// The major of the floor it is on.
    public var floor: UInt16
    /// Its area, inside its floor's outline.
    public var polygon: Polygon

    package init(floor: UInt16, polygon: Polygon) {
        self.floor = floor
        self.polygon = polygon
    }
}

/// A staircase or lift: a place on the plan where people go from one floor to another.
public struct Stairs: Sendable, Hashable {
    /// The majors of the floors it joins: at least two, distinct, in map order.
    public var floors: [UInt16]
    /// Where it is on the plan (the same place on each of its floors).
    public var position: Point

    public init(floors: [UInt16], position: Point) {
        self.floors = floors
        self.position = position
    }
}

/// The radio model and the timing defaults of a site.
public struct RadioModel: Sendable, Hashable {
    /// RSSI at 1 m in dBm when neither the tag nor the map says otherwise.
    public var measuredPower: Double = -59
    /// Log-distance path-loss exponent when the agent has none of its own.
    public var pathLossExponent: Double = 2.0
    /// Height at which tags are carried, above their floor, in metres.
    public var tagHeight: Double = 1.2
    /// What a floor slab takes off a reading, in dB, between a tag on one floor and an agent on the next: the grid
    /// filter weighs the next floors' agents with it, so that which floor explains the readings better is part of
    /// the estimate.
    public var floorLoss: Double = 15
    /// A reading older than this (seconds) no longer counts toward a position.
    public var readingMaxAge: Double = 10
    /// A tag not heard for this long (seconds) leaves its zone.
    public var tagTimeout: Double = 30
    /// An agent not heard from for this long (seconds) counts as offline for zone coverage.
    public var agentTimeout: Double = 30
    /// An agent covers a zone when it stands within this distance (metres) of the zone on the same floor.
    public var coverageRadius: Double = 8
    /// The grid tracker's cell side in metres, when the map sets it (`model.cell_size`); nil lets the tracker
    /// choose from the floor's free space.
    public var cellSize: Double?
    /// What the grid tracker's published accuracy is multiplied by (`model.accuracy_scale`, 1 unless the map says):
    /// `whereabouts calibrate` measures on its survey how often the truth falls within the accuracy the tracker
    /// claims, and writes the factor that makes it the 68 % radius there (docs/calibration.md, "The accuracy it
    /// claims"). It changes what is published, never the estimate.
    public var accuracyScale: Double = 1

    public init() {}
}
