import WhereaboutsCore
import WhereaboutsJSON

/// How likely a tag is to be in one zone of its floor: an element of a position's `zones`, `{"zone":3,"p":0.82}`.
public struct ZoneShare: Sendable, Equatable {
    /// The zone (minor) on the tag's floor.
    public var zone: UInt16
    /// The probability that the tag is in it, 0 to 1.
    public var probability: Double

    /// Makes a zone share.
    public init(zone: UInt16, probability: Double) {
        self.zone = zone
        self.probability = probability
    }

    /// `{"zone":…,"p":…}`, the probability to three decimals.
    var json: JSONValue { JSONTreeMembers.object { members(&$0) } }

    /// The members, for ``json`` and for a payload written as text.
    func members(_ members: inout some JSONMembers) {
        members.add("zone", zone)
        members.add("p", probability.rounded(toDecimals: 3))
    }

    /// Reads the `zones` member of a payload: absent or null is none (payloads from before it existed).
    static func list(_ reader: FieldReader, key: String) throws(FieldProblem) -> [ZoneShare] {
        guard reader.optionalValue(key) != nil else { return [] }
        var shares: [ZoneShare] = []
        for element in try reader.array(key) {
            guard let object = element.object else { throw .wrongType(key) }
            let entry = FieldReader(object)
            let probability = try entry.number("p")
            guard probability >= 0, probability <= 1 else { throw .invalid("p") }
            shares.append(ZoneShare(zone: try entry.uint16("zone"), probability: probability))
        }
        return shares
    }
}
