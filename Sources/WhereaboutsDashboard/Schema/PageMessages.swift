/// The whole picture for a page that connects: site, locator, agents, every zone, every tag, recent events. Sent as
/// the `snapshot` event and served as `/snapshot.json`.
public struct DashboardSnapshot: PageEvent, Equatable {
    /// The number of the last change it includes.
    public var sequence: UInt64
    /// The site's name.
    public var site: String
    /// The locator's status and figures.
    public var locator: LocatorView
    /// Each agent on the map: online, offline, or null when it has not said.
    public var agents: PageMap<Bool?>
    /// Every zone on the map, in the map's order.
    public var zones: [ZoneView]
    /// Every tag shown, by identity.
    public var tags: [TagView]
    /// The recent events, oldest first.
    public var events: [EventView]
    /// When each agent on the map took its status (the dashboard's clock), null when unknown.
    public var agentsSince: PageMap<Double?>
    /// Whether the picture is current, and the dashboard's clock.
    public var source: SourceView

    public static let eventName = "snapshot"
    public static var fields: [PageField<Self>] {
        [
            .init("seq", \.sequence), .init("site", \.site), .init("locator", \.locator), .init("agents", \.agents),
            .init("zones", \.zones), .init("tags", \.tags), .init("events", \.events),
            .init("agents_since", \.agentsSince), .init("source", \.source),
        ]
    }
}

/// Whether what the page shows is current (``DashboardSource``), sent in the snapshot and whenever it changes.
public struct SourceView: PageMessage, Equatable {
    /// ``DashboardSource/name``: `live`, `broker-connecting`, `broker-lost`, `simulation-ended`, `locator-gone`
    /// or `locator-unknown`.
    public var state: String
    /// When the source was lost (Unix seconds, the dashboard's clock), null when unknown or live.
    public var since: Double?
    /// What the page's banner says.
    public var sentence: String
    /// The dashboard's clock when this was sent, so that the page counts ages on the dashboard's clock.
    public var now: Double

    public static var fields: [PageField<Self>] {
        [.init("state", \.state), .init("since", \.since), .init("sentence", \.sentence), .init("now", \.now)]
    }
}

/// How likely a tag is to be in one zone of its floor.
public struct ZoneShareView: PageMessage, Equatable {
    /// The zone's name on the map.
    public var name: String
    /// The probability, 0 to 1.
    public var p: Double

    public static var fields: [PageField<Self>] { [.init("name", \.name), .init("p", \.p)] }
}

/// A tag in a zone, as the zone's row lists it.
public struct ZoneMemberView: PageMessage, Equatable {
    /// The tag's name.
    public var label: String
    /// The probability that it is in the zone, null when the locator does not say.
    public var p: Double?

    public static var fields: [PageField<Self>] { [.init("label", \.label), .init("p", \.p)] }
}

/// A tag as the page draws it: metres on its floor, the accuracy circle's radius, the zone it is in.
public struct TagView: PageMessage, Equatable {
    /// The tag's identity (`ibeacon-…`).
    public var id: String
    /// The name shown beside the dot.
    public var label: String
    /// The floor's major.
    public var floor: UInt16
    /// Metres on the plan.
    public var x: Double
    public var y: Double
    /// The accuracy circle's radius, metres, never negative.
    public var accuracy: Double
    /// The zone's name, or null outside every zone.
    public var zone: String?
    /// The zone's `<floor>-<zone>`, or null outside every zone: a tag in a zone whose agents are silent is stale.
    public var zoneKey: String?
    /// The probability that the tag is in `zone` (or in none), null when the locator does not say.
    public var p: Double?
    /// The zones of its floor it may be in, most likely first.
    public var zones: [ZoneShareView]
    /// When the dashboard received this position (Unix seconds, the dashboard's clock).
    public var seen: Double

    public static var fields: [PageField<Self>] {
        [
            .init("id", \.id), .init("label", \.label), .init("floor", \.floor), .init("x", \.x), .init("y", \.y),
            .init("accuracy", \.accuracy), .init("zone", \.zone), .init("zone_key", \.zoneKey), .init("p", \.p),
            .init("zones", \.zones), .init("seen", \.seen),
        ]
    }
}

/// A zone's occupancy as the page shows it.
public struct ZoneView: PageMessage, Equatable {
    /// `<floor>-<zone>`, as the page's `data-zone` attributes.
    public var key: String
    /// The floor's major and the zone's minor.
    public var floor: UInt16
    public var zone: UInt16
    /// The zone's name on the map.
    public var name: String
    /// `known`, `unknown` (its agents are silent) or `pending` (not yet published).
    public var state: String
    /// The tags in it; null while pending.
    public var count: Int?
    /// The tags in it, with the probability that each is.
    public var members: [ZoneMemberView]
    /// When the dashboard received its occupancy (Unix seconds, the dashboard's clock); null while pending.
    public var seen: Double?
    /// When it became `unknown`, as far as the dashboard saw; null unless unknown.
    public var unknownSince: Double?

    public static var fields: [PageField<Self>] {
        [
            .init("key", \.key), .init("floor", \.floor), .init("zone", \.zone), .init("name", \.name),
            .init("state", \.state), .init("count", \.count), .init("members", \.members), .init("seen", \.seen),
            .init("unknown_since", \.unknownSince),
        ]
    }
}

/// An enter or exit, at the time the dashboard received it.
public struct EventView: PageMessage, Equatable {
    /// Unix seconds, the dashboard's clock.
    public var time: Double
    /// The tag's identity.
    public var tag: String
    /// The tag's name.
    public var label: String
    /// The zone's name on the map.
    public var zone: String
    /// `<floor>-<zone>`.
    public var key: String
    /// `enter` or `exit`.
    public var kind: String

    public static var fields: [PageField<Self>] {
        [
            .init("time", \.time), .init("tag", \.tag), .init("label", \.label), .init("zone", \.zone),
            .init("key", \.key), .init("kind", \.kind),
        ]
    }
}

/// The locator as the page's header shows it.
public struct LocatorView: PageMessage, Equatable {
    /// `online`, `offline` or `unknown`.
    public var status: String
    /// Its figures, null until the first metrics arrive.
    public var metrics: LocatorFigures?
    /// When it took its status (the dashboard's clock), null before it said.
    public var since: Double?
    /// When its last metrics arrived (the dashboard's clock), null before the first.
    public var seen: Double?

    public static var fields: [PageField<Self>] {
        [.init("status", \.status), .init("metrics", \.metrics), .init("since", \.since), .init("seen", \.seen)]
    }
}

/// The locator's last metrics, with the readings rate the dashboard works out between two of them.
public struct LocatorFigures: PageMessage, Equatable {
    /// Readings accepted per second of the dashboard's clock, to a tenth; null until two metrics have arrived.
    public var readingsPerSecond: Double?
    public var readingsAccepted: Int
    /// Readings rejected, every reason together.
    public var readingsRejected: Int
    public var tagsTracked: Int
    public var agentsOnline: Int
    /// The agents on the map.
    public var agentsTotal: Int
    /// Milliseconds; null when the locator has no figure yet.
    public var latencyP50: Double?
    public var latencyP99: Double?
    public var inputLagP50: Double?

    public static var fields: [PageField<Self>] {
        [
            .init("readings_per_s", \.readingsPerSecond), .init("readings_accepted", \.readingsAccepted),
            .init("readings_rejected", \.readingsRejected), .init("tags_tracked", \.tagsTracked),
            .init("agents_online", \.agentsOnline), .init("agents_total", \.agentsTotal),
            .init("latency_p50_ms", \.latencyP50), .init("latency_p99_ms", \.latencyP99),
            .init("input_lag_p50_ms", \.inputLagP50),
        ]
    }
}
