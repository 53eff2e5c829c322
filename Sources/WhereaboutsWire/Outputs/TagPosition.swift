public import WhereaboutsCore
public import WhereaboutsJSON

/// Where one tag is: the retained payload of `…/tags/<tag>/position`.
///
/// ```json
/// {"tag":"ibeacon-…-1-7","name":"Keys","x":3.2,"y":4.5,"floor":1,"zone":7,"zone_name":"Kitchen","p":0.82,
///  "zones":[{"zone":7,"p":0.82},{"zone":8,"p":0.15}],
///  "accuracy":1.5,"nearest":{"agent":"hall-1","proximity":"near","distance":2.1},"updated":1764475201}
/// ```
///
/// Metres on the floor map's frame, written to the millimetre (`updated` to the millisecond): finer digits say
/// nothing about a position known to a metre, and cost bytes on every message. `zone` and `zone_name` are null
/// outside every zone, `nearest` is null
/// when no agent hears the tag. `p` is the probability that the tag is in `zone` (in no zone, when `zone` is null);
/// `zones` lists the zones of the floor the tag may be in (each at least 1 % likely), most likely first. Both come
/// from the grid filter's posterior, or with trilateration from a Gaussian of the accuracy around the position.
/// Older payloads without them decode with `p` nil and `zones` empty.
public struct TagPosition: JSONPayload, Equatable {
    /// The agent that hears the tag best.
    public struct NearestAgent: Sendable, Equatable {
        /// CoreLocation's coarse distance classes.
        public enum Proximity: String, Sendable, Hashable, CaseIterable {
            /// Within about half a metre.
            case immediate
            /// Within a few metres.
            case near
            /// Farther.
            case far
            /// Not ranged.
            case unknown
        }

        /// The agent.
        public var agent: AgentID
        /// Its coarse distance class.
        public var proximity: Proximity
        /// The estimated distance in metres.
        public var distance: Double

        /// Makes a nearest-agent entry.
        public init(agent: AgentID, proximity: Proximity, distance: Double) {
            self.agent = agent
            self.proximity = proximity
            self.distance = distance
        }
    }

    /// The tag.
    public var tag: TagIdentity
    /// Its name from the map, if any.
    public var name: String?
    /// East coordinate, metres.
    public var x: Double
    /// North coordinate, metres.
    public var y: Double
    /// The floor (major).
    public var floor: UInt16
    /// The zone (minor) the tag is in, if any.
    public var zone: UInt16?
    /// That zone's name, if any.
    public var zoneName: String?
    /// The probability that the tag is in `zone` (or in no zone, when `zone` is nil), when the locator knows it.
    public var probability: Double?
    /// The zones the tag may be in, most likely first (empty when the locator did not say).
    public var zones: [ZoneShare]
    /// The estimated error radius, metres.
    public var accuracy: Double
    /// The agent hearing the tag best, if any.
    public var nearest: NearestAgent?
    /// When the locator computed this (Unix seconds).
    public var updated: Double

    /// Makes a position payload.
    public init(
        tag: TagIdentity, name: String?, x: Double, y: Double, floor: UInt16, zone: UInt16?, zoneName: String?,
        accuracy: Double, nearest: NearestAgent?, updated: Double, probability: Double? = nil, zones: [ZoneShare] = []
    ) {
        self.probability = probability
        self.zones = zones
        self.tag = tag
        self.name = name
        self.x = x
        self.y = y
        self.floor = floor
        self.zone = zone
        self.zoneName = zoneName
        self.accuracy = accuracy
        self.nearest = nearest
        self.updated = updated
    }

    public var json: JSONValue { JSONTreeMembers.object { members(&$0) } }

    /// The same text as ``JSONWriter`` makes of ``json``, written without the tree: the locator writes one for every
    /// tag that moves.
    public var payload: String { JSONTextMembers.object { members(&$0) } }

    /// The members, once for both ``json`` and ``payload``.
    private func members(_ members: inout some JSONMembers) {
        members.add("tag", tag.description)
        members.add("name", name)
        members.add("x", x.rounded(toDecimals: 3))
        members.add("y", y.rounded(toDecimals: 3))
        members.add("floor", floor)
        members.add("zone", zone)
        members.add("zone_name", zoneName)
        if let probability { members.add("p", probability.rounded(toDecimals: 3)) }
        if !zones.isEmpty {
            members.add("zones", objects: zones) { members, share in share.members(&members) }
        }
        members.add("accuracy", accuracy.rounded(toDecimals: 3))
        if let nearest {
            members.add("nearest") { members in
                members.add("agent", nearest.agent.rawValue)
                members.add("proximity", nearest.proximity.rawValue)
                members.add("distance", nearest.distance.rounded(toDecimals: 3))
            }
        } else {
            members.add("nearest", nil as Double?)
        }
        members.add("updated", updated.rounded(toDecimals: 3))
    }

    public init(json: JSONValue) throws(PayloadError) {
        let reader = try FieldReader(json: json)
        self = try decodingMembers { () throws(FieldProblem) -> TagPosition in
            guard let tag = TagIdentity(wire: try reader.string("tag")) else { throw .invalid("tag") }
            var nearest: NearestAgent?
            if reader.optionalValue("nearest") != nil {
                let entry = try reader.nested("nearest")
                guard let agent = AgentID(try entry.string("agent")) else { throw .invalid("agent") }
                guard let proximity = NearestAgent.Proximity(rawValue: try entry.string("proximity")) else {
                    throw .invalid("proximity")
                }
                nearest = NearestAgent(agent: agent, proximity: proximity, distance: try entry.number("distance"))
            }
            return TagPosition(
                tag: tag, name: try reader.optionalString("name"), x: try reader.number("x"),
                y: try reader.number("y"), floor: try reader.uint16("floor"), zone: try reader.optionalUInt16("zone"),
                zoneName: try reader.optionalString("zone_name"), accuracy: try reader.number("accuracy"),
                nearest: nearest, updated: try reader.number("updated"),
                probability: try reader.optionalNumber("p"), zones: try ZoneShare.list(reader, key: "zones"))
        }
    }
}
