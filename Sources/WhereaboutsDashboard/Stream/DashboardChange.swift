public import WhereaboutsJSON

/// One change for the pages: what changed, as the page's JSON, numbered in order.
public struct DashboardChange: Sendable, Equatable {
    /// What changed.
    public enum Kind: Sendable, Equatable {
        /// A tag appeared or moved.
        case tag(JSONValue)
        /// A tag was lost (its retained position was cleared).
        case tagRemoved(id: String)
        /// A zone's occupancy.
        case zone(JSONValue)
        /// An enter or exit.
        case event(JSONValue)
        /// The locator's status or metrics.
        case locator(JSONValue)
        /// An agent went online or offline.
        case agent(id: String, online: Bool)
    }

    /// The change's number; a page ignores changes not newer than its snapshot.
    public var sequence: UInt64
    /// What changed.
    public var kind: Kind

    /// The Server-Sent Event carrying this change: named by its kind, with the sequence number as its id.
    public var serverSentEvent: ServerSentEvent {
        let name: String
        var members: [(key: String, value: JSONValue)] = [("seq", .number(Double(sequence)))]
        switch kind {
        case .tag(let value):
            name = "tag"
            members.append(("tag", value))
        case .tagRemoved(let id):
            name = "tag-removed"
            members.append(("id", .string(id)))
        case .zone(let value):
            name = "zone"
            members.append(("zone", value))
        case .event(let value):
            name = "event"
            members.append(("event", value))
        case .locator(let value):
            name = "locator"
            members.append(("locator", value))
        case .agent(let id, let online):
            name = "agent"
            members += [("id", .string(id)), ("online", .bool(online))]
        }
        return ServerSentEvent(
            name: name, id: String(sequence), data: JSONWriter().string(.object(JSONObject(members))))
    }
}
