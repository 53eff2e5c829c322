public import WhereaboutsCore
public import WhereaboutsJSON

/// Who is in one zone: the retained payload of `…/floors/<major>/zones/<minor>/occupancy`.
///
/// ```json
/// {"site":"e2c56db5-…","floor":1,"zone":7,"name":"Kitchen","state":"known","count":1,
///  "tags":[{"id":"ibeacon-…-1-7","name":"Keys","p":0.82}],"updated":1764475201}
/// ```
///
/// A member's `p` is the probability that it is in the zone, as of this payload (it is published again when the
/// members or the state change, not every time a probability moves); absent when the locator positions by
/// trilateration.
///
/// `state` is `unknown` when the agents covering the zone are offline: dashboards must not read that as empty.
public struct ZoneOccupancy: JSONPayload, Equatable {
    /// Whether the locator can see the zone.
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// The count is current.
        case known
        /// The zone's agents are silent; the count is not to be trusted.
        case unknown
    }

    /// One tag in the zone.
    public struct Member: Sendable, Equatable {
        /// The tag.
        public var id: TagIdentity
        /// Its name from the map, if it has one.
        public var name: String?
        /// The probability that it is in the zone, when the locator knows it.
        public var probability: Double?

        /// Makes a member.
        public init(id: TagIdentity, name: String?, probability: Double? = nil) {
            self.id = id
            self.name = name
            self.probability = probability
        }
    }

    /// The site (proximity UUID).
    public var site: BeaconUUID
    /// The floor (major).
    public var floor: UInt16
    /// The zone (minor).
    public var zone: UInt16
    /// The zone's name from the map.
    public var name: String
    /// Whether the count is current.
    public var state: State
    /// How many tags are in the zone.
    public var count: Int
    /// The tags in the zone, in the order given.
    public var tags: [Member]
    /// When the locator computed this (Unix seconds).
    public var updated: Double

    /// Makes an occupancy payload.
    public init(
        site: BeaconUUID, floor: UInt16, zone: UInt16, name: String, state: State, count: Int, tags: [Member],
        updated: Double
    ) {
        self.site = site
        self.floor = floor
        self.zone = zone
        self.name = name
        self.state = state
        self.count = count
        self.tags = tags
        self.updated = updated
    }

    public var json: JSONValue {
        .object(
            JSONObject([
                ("site", .string(site.description)), ("floor", .number(Double(floor))),
                ("zone", .number(Double(zone))), ("name", .string(name)), ("state", .string(state.rawValue)),
                ("count", .number(Double(count))),
                (
                    "tags",
                    .array(
                        tags.map { member in
                            var fields: [(key: String, value: JSONValue)] = [
                                ("id", .string(member.id.description)), ("name", .optionalString(member.name)),
                            ]
                            if let probability = member.probability {
                                fields.append(("p", .number(probability.rounded(toDecimals: 3))))
                            }
                            return .object(JSONObject(fields))
                        })
                ),
                ("updated", .number(updated)),
            ]))
    }

    public init(json: JSONValue) throws(PayloadError) {
        let reader = try FieldReader(json: json)
        self = try decodingMembers { () throws(FieldProblem) -> ZoneOccupancy in
            guard let site = BeaconUUID(try reader.string("site")) else { throw .invalid("site") }
            guard let state = State(rawValue: try reader.string("state")) else { throw .invalid("state") }
            var tags: [Member] = []
            for element in try reader.array("tags") {
                guard let object = element.object else { throw .wrongType("tags") }
                let member = FieldReader(object)
                guard let id = TagIdentity(wire: try member.string("id")) else { throw .invalid("id") }
                tags.append(
                    Member(
                        id: id, name: try member.optionalString("name"), probability: try member.optionalNumber("p")))
            }
            return ZoneOccupancy(
                site: site, floor: try reader.uint16("floor"), zone: try reader.uint16("zone"),
                name: try reader.string("name"), state: state, count: try reader.integer("count", in: 0...Int.max),
                tags: tags, updated: try reader.number("updated"))
        }
    }
}
