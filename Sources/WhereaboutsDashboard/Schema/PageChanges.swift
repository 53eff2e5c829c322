// The changes a page receives after its snapshot, one event each, every one numbered by `seq` so that a page
// ignores what its snapshot already holds.

/// A tag appeared or moved.
public struct TagChange: PageEvent, Equatable {
    /// The change's number.
    public var sequence: UInt64
    public var tag: TagView

    public static let eventName = "tag"
    public static var fields: [PageField<Self>] { [.init("seq", \.sequence), .init("tag", \.tag)] }
}

/// A tag was lost (its retained position was cleared).
public struct TagRemoval: PageEvent, Equatable {
    /// The change's number.
    public var sequence: UInt64
    /// The tag's identity.
    public var id: String

    public static let eventName = "tag-removed"
    public static var fields: [PageField<Self>] { [.init("seq", \.sequence), .init("id", \.id)] }
}

/// A zone's occupancy changed.
public struct ZoneChange: PageEvent, Equatable {
    /// The change's number.
    public var sequence: UInt64
    public var zone: ZoneView

    public static let eventName = "zone"
    public static var fields: [PageField<Self>] { [.init("seq", \.sequence), .init("zone", \.zone)] }
}

/// A tag entered or left a zone.
public struct EventChange: PageEvent, Equatable {
    /// The change's number.
    public var sequence: UInt64
    public var event: EventView

    public static let eventName = "event"
    public static var fields: [PageField<Self>] { [.init("seq", \.sequence), .init("event", \.event)] }
}

/// The locator's status or figures changed.
public struct LocatorChange: PageEvent, Equatable {
    /// The change's number.
    public var sequence: UInt64
    public var locator: LocatorView

    public static let eventName = "locator"
    public static var fields: [PageField<Self>] { [.init("seq", \.sequence), .init("locator", \.locator)] }
}

/// An agent went online or offline.
public struct AgentChange: PageEvent, Equatable {
    /// The change's number.
    public var sequence: UInt64
    /// The agent's id on the map.
    public var id: String
    public var online: Bool
    /// When the dashboard received this status (its clock).
    public var since: Double

    public static let eventName = "agent"
    public static var fields: [PageField<Self>] {
        [.init("seq", \.sequence), .init("id", \.id), .init("online", \.online), .init("since", \.since)]
    }
}

/// Whether the picture is current changed: the broker was lost or regained, the locator went or came back, the
/// simulation ended.
public struct SourceChange: PageEvent, Equatable {
    /// The change's number.
    public var sequence: UInt64
    public var source: SourceView

    public static let eventName = "source"
    public static var fields: [PageField<Self>] { [.init("seq", \.sequence), .init("source", \.source)] }
}
