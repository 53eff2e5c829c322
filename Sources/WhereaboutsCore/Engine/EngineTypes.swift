/// One RSSI reading from an agent: a single advert, or the aggregate of a window of adverts.
public struct Reading: Sendable, Hashable {
    /// The tag heard.
    public var tag: TagIdentity
    /// When it was heard (Unix seconds; for aggregates, the window's end).
    public var time: Double
    /// RSSI in dBm (for aggregates, the mean).
    public var rssi: Double
    /// How many adverts the reading stands for (1 for a single advert).
    public var count: Int
    /// Variance of the adverts' RSSI in dB², when the agent computed it.
    public var variance: Double?
    /// The measured power at 1 m the tag advertised, in dBm.
    public var measuredPower: Double?

    public init(
        tag: TagIdentity,
        time: Double,
        rssi: Double,
        count: Int = 1,
        variance: Double? = nil,
        measuredPower: Double? = nil
    ) {
        self.tag = tag
        self.time = time
        self.rssi = rssi
        self.count = count
        self.variance = variance
        self.measuredPower = measuredPower
    }
}

/// Why the engine did not take a reading.
public enum ReadingRejection: String, Sendable, Hashable, CaseIterable {
    /// No agent with that index or id is in the map.
    case unknownAgent = "unknown_agent"
    /// The tag is neither selected by the identity constraints nor named by the map.
    case untrackedTag = "untracked_tag"
    /// The reading is older than the reading age limit.
    case stale
    /// A number in the reading is out of range or not finite.
    case invalidValue = "invalid_value"
    /// The "tag" is another agent's beacon: not a tag to locate, but a reading for calibration.
    case agentBeacon = "agent_beacon"
}

/// How far one agent seems to be from a tag, in CoreLocation's ranging terms.
public struct AgentRange: Sendable, Hashable {
    /// The agent's index in the map (its id is the map's to give: a range carries no string, so that sorting and
    /// copying the ranges of every estimate touch no reference counts).
    public var agentIndex: Int
    /// Estimated 3-D distance to the antenna, in metres.
    public var distance: Double
    /// 1-sigma error of `distance`, in metres (CLBeacon's `accuracy`).
    public var accuracy: Double
    /// The proximity band.
    public var proximity: Proximity
    /// The smoothed RSSI, in dBm, before the agent's offset.
    public var rssi: Double
}

/// The engine's estimate of where a tag is.
public struct TagEstimate: Sendable, Hashable {
    /// The tag.
    public var tag: TagIdentity
    /// The display name from the map, if it names the tag.
    public var name: String?
    /// The floor's major.
    public var floor: UInt16
    /// The smoothed position.
    public var position: Point
    /// The radius around `position`, in metres, that holds the true position about 68 % of the time, fitted on
    /// recorded and simulated walks: the grid filter's posterior spread with a model error that grows with the
    /// distance to the agents (``GridFilter/Configuration/accuracyPerSpread``,
    /// ``GridFilter/Configuration/modelErrorPerMetre``), or the track's RMS error times
    /// ``LocatorEngine/Configuration/trilaterationAccuracyPerRMS``.
    public var accuracy: Double
    /// The zone the tag is in after hysteresis, or nil.
    public var zone: ZoneKey?
    /// The agents that hear it, nearest first.
    public var ranges: [AgentRange]
    /// How the latest fix was made.
    public var quality: Fix.Quality
    /// When the estimate was made (seconds).
    public var time: Double
    /// The posterior mass of each zone of the floor, when the grid filter made the estimate (the engine makes it
    /// from ``position`` and ``accuracy`` otherwise).
    var zoneEvidence: ZoneEvidence? = nil
    /// Whether another floor's agents heard the tag louder than its own floor's, by the switch margin, though not
    /// yet for long enough to move it there: it may be on the stairs, and its zone on this floor is held.
    var floorContested = false
    /// The RMS distance of the true position from `position` that the estimate's own model claims (the grid
    /// posterior's spread, widened by the readings' misfit, or the track's RMS error): what the stairs reach and a
    /// trilateration estimate's zone evidence take, so that the published ``accuracy`` feeds no decision.
    var spread = 0.0
    /// The probability that the tag is in `zone` (in no zone, when `zone` is nil); the zone decision sets it.
    public var zoneProbability: Double? = nil
    /// The zones of the floor the tag may be in, most likely first: each with its probability, those of at least
    /// ``ZoneEvidence/reportedProbability``; the zone decision sets them.
    public var zoneProbabilities: [ZoneProbability] = []
}

/// What an engine update produced.
public struct EngineUpdate: Sendable {
    /// New estimates for the tags that were heard since the last update.
    public var estimates: [TagEstimate] = []
    /// Enter and exit events, exits before enters, in time order.
    public var events: [ZoneTransition] = []
    /// The zones whose occupancy or state changed.
    public var occupancyChanges: [Occupancy] = []
    /// Tags that timed out, or were evicted (``LocatorEngine/Configuration/maximumTags``), and have no position now.
    public var lostTags: [TagIdentity] = []
}

/// Where the grid filter thinks a tag may be: its posterior over the cells of its floor (``LocatorEngine/posterior(of:)``).
public struct TagPosterior: Sendable, Hashable {
    /// One cell with some probability.
    public struct Cell: Sendable, Hashable {
        /// The cell's centre on the floor, metres.
        public var centre: Point
        /// The posterior mass in the cell; the cells' masses sum to 1.
        public var probability: Double

        public init(centre: Point, probability: Double) {
            self.centre = centre
            self.probability = probability
        }
    }

    /// The floor's major.
    public var floor: UInt16
    /// The side of a cell, metres.
    public var cellSize: Double
    /// The cells with any probability, row by row from the south-west.
    public var cells: [Cell]

    public init(floor: UInt16, cellSize: Double, cells: [Cell]) {
        self.floor = floor
        self.cellSize = cellSize
        self.cells = cells
    }
}
