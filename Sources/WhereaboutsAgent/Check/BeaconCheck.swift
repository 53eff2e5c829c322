public import WhereaboutsAdvertising
public import WhereaboutsCore

/// The decision behind `whereabouts-agent --check`: raw HCI events go through the agent's own decoding and filter;
/// the check notes each tag the agent would publish when first heard, counts every other advert and why it would
/// not be published, and says when it has heard enough.
///
/// A beacon here is a tag, not an advert: a tag sends several adverts a second, so counting adverts would end the
/// check after half a second of one tag. Values in, values out: the shell supplies the events and the time since the
/// scan started.
public struct BeaconCheck: Sendable {
    /// A tag the agent would publish, as first heard, with what was heard of it since.
    public struct Heard: Sendable, Hashable {
        /// The first sighting: the tag, its RSSI and measured power, the address it came from.
        public var first: BeaconSighting
        /// Seconds from the start of the scan to the first advert.
        public var after: Double
        /// Adverts heard from it.
        public var adverts: Int
        /// The weakest and strongest RSSI heard, dBm.
        public var rssiRange: ClosedRange<Int>
    }

    /// How many tags end the check early.
    public let count: Int
    /// What the agent publishes.
    public var filter: SightingFilter { decoder.filter }
    /// The tags the agent would publish, in the order first heard.
    public private(set) var heard: [Heard] = []
    /// Adverts that carried a tag the agent would publish.
    public private(set) var publishedAdverts = 0
    /// Adverts that carried none, and the reasons (reports the parser refused, beacons outside the filter, adverts
    /// that are no beacon, signals below the floor).
    public private(set) var otherAdverts = 0
    /// Why the other adverts and the malformed events were not published.
    public var reasons: DropCounters {
        var all = parseCounters
        all.add(decoder.counters)
        return all
    }
    /// Beacons heard whose identity the filter leaves out, with their advert counts (at most ``foreignLimit`` tags).
    public private(set) var foreign: [TagIdentity: Int] = [:]
    /// How many distinct beacons outside the filter are counted by name.
    public static let foreignLimit = 64

    private var decoder: SightingDecoder
    /// Names the beacons the filter leaves out.
    private var surveyor = SightingDecoder(filter: SightingFilter(constraints: [], selectsAllBeacons: true))
    private var parseCounters = DropCounters()
    private var index: [TagIdentity: Int] = [:]

    /// A check that listens for `count` tags that `filter` selects.
    public init(filter: SightingFilter, count: Int) {
        decoder = SightingDecoder(filter: filter)
        self.count = max(1, count)
    }

    /// Whether enough tags were heard to stop early.
    public var isComplete: Bool { heard.count >= count }
    /// Whether the check passed: at least one tag the agent would publish was heard.
    public var passed: Bool { !heard.isEmpty }

    /// Takes one raw event heard `elapsed` seconds after the scan started; returns the tags it names for the first
    /// time, in order.
    public mutating func ingest(_ event: ArraySlice<UInt8>, framing: HCIFraming, elapsed: Double) -> [Heard] {
        let before = Self.refusedReports(parseCounters)
        let reports = decoder.parser.reports(in: event, framing: framing, counters: &parseCounters)
        otherAdverts += Self.refusedReports(parseCounters) - before
        var new: [Heard] = []
        for report in reports {
            let sightings = decoder.sightings(in: report, time: elapsed)
            guard !sightings.isEmpty else {
                otherAdverts += 1
                // Beacons of other identities; a selected one too weak for the floor is counted, not named.
                for sighting in surveyor.sightings(in: report)
                where !filter.selects(sighting.tag)
                    && (foreign[sighting.tag] != nil || foreign.count < Self.foreignLimit)
                {
                    foreign[sighting.tag, default: 0] += 1
                }
                continue
            }
            publishedAdverts += 1
            for sighting in sightings {
                if let position = index[sighting.tag] {
                    heard[position].adverts += 1
                    let range = heard[position].rssiRange
                    heard[position].rssiRange =
                        min(range.lowerBound, sighting.rssi)...max(range.upperBound, sighting.rssi)
                } else {
                    index[sighting.tag] = heard.count
                    let first = Heard(
                        first: sighting, after: elapsed, adverts: 1, rssiRange: sighting.rssi...sighting.rssi)
                    heard.append(first)
                    new.append(first)
                }
            }
        }
        return new
    }

    /// Reports the parser refused one by one (no RSSI, an implausible one, incomplete data): adverts all the same.
    private static func refusedReports(_ counters: DropCounters) -> Int {
        counters[.rssiUnavailable] + counters[.rssiImplausible] + counters[.incompleteData]
    }
}
