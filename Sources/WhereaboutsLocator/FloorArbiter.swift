import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

/// Which locator speaks for what on a site split by floor (``FloorShare``): this locator's share, what it makes of
/// the retained tag state another locator (or an earlier run) left, and the contests over a tag two locators both
/// publish.
///
/// Two locators briefly disagree on a tag's floor while it changes floors; each may then write over the other's
/// retained position and zone summary. The one that holds the tag on one of its own floors says its own again at
/// the next tick (``contest(_:)``), at most ``repliesPerMinute`` times a minute per tag, so that two locators whose
/// histories stay apart do not answer each other at every tick for as long as the tag stays.
/// For the whole site (no share) it owns and hears every floor, and no contest arises.
struct FloorArbiter: Sendable {
    /// How many times a minute a locator says its own again of a tag another keeps writing over.
    static let repliesPerMinute = 10

    /// What a split locator makes of a retained position or zone summary of a tag that another locator (or an
    /// earlier run) published.
    enum Verdict: Sendable, Equatable {
        /// This locator publishes the tag now: another wrote over it, and this one says its own again
        /// (``contestedTags``).
        case contested
        /// An earlier run's, on one of this locator's floors (or, for a lost tag, the site owner's): this one's to
        /// clear unless the tag is heard again in time.
        case leftover
        /// Not this locator's to answer or to clean up; with `forget`, the tag is on another share's floor, whose
        /// locator speaks for it: any leftover this one meant to clear is forgotten.
        case others(forget: Bool)
    }

    /// The floors this locator owns and hears; nil for the whole site.
    private(set) var share: FloorShare?
    /// Tags this locator publishes whose retained position or zone summary another locator wrote over since the
    /// last tick.
    private var contested: Set<TagIdentity> = []
    /// Per contested tag, since when its replies are counted and how many there were.
    private var replies: [TagIdentity: (since: Double, count: Int)] = [:]
    /// When a tag's replies were last cut short, for the log (once a minute).
    private var lastWarning = -Double.infinity

    init(share: FloorShare?) {
        self.share = share
    }

    /// Whether this locator publishes the outputs of a floor: its zones' occupancy and events, and the tags on it.
    func owns(floor major: UInt16) -> Bool { share.owns(floor: major) }

    /// Whether this locator publishes the site-wide outputs.
    var ownsSite: Bool { share.ownsSite }

    /// Whether this locator hears the agents of a floor.
    func hears(floor major: UInt16) -> Bool { share.hears(floor: major) }

    /// Takes the share a new map gives (the same floors: a change takes a restart); contests start over.
    mutating func replaceShare(_ newShare: FloorShare?) {
        share = newShare
        contested.removeAll()
    }

    // MARK: - Retained state of others

    /// What to make of a retained position or summary of `tag` on `floor` (nil: the tag was lost, or the payload
    /// said nothing); `published`: this locator publishes the tag now.
    ///
    /// - A tag this locator publishes now: another locator, still deciding the tag on its own floor, wrote over us;
    ///   we say ours again at the next tick (at most once a tick, and only while we own the tag, so the exchange
    ///   ends as soon as both decide the same floor).
    /// - A tag on a floor of another share: that locator speaks for it; forget any leftover we meant to clear.
    /// - A tag on one of our floors: an earlier run's, ours to clear if we do not hear the tag again.
    /// - No floor (a lost tag), or a floor the map does not have: the site's owner cleans it up.
    mutating func verdict(on tag: TagIdentity, floor: UInt16?, published: Bool, map: FloorMap) -> Verdict {
        if published {
            contested.insert(tag)
            return .contested
        }
        guard let floor, map.floor(major: floor) != nil else { return ownsSite ? .leftover : .others(forget: false) }
        return owns(floor: floor) ? .leftover : .others(forget: true)
    }

    // MARK: - Contests

    /// Keeps among the contested tags those whose replies this minute are still under ``repliesPerMinute``, and
    /// counts them; says once a minute which tag another locator keeps claiming.
    mutating func answerContests(now: Double) -> [Action] {
        // Nothing at the ticks without a contest; the minutes that ended are dropped when one comes.
        guard !contested.isEmpty else { return [] }
        replies = replies.filter { now - $0.value.since < 60 }
        var refused: [TagIdentity] = []
        for tag in contested {
            var count = replies[tag] ?? (now, 0)
            guard count.count < Self.repliesPerMinute else {
                refused.append(tag)
                continue
            }
            count.count += 1
            replies[tag] = count
        }
        contested.subtract(refused)
        guard let first = refused.min(), now - lastWarning >= 60 else { return [] }
        lastWarning = now
        let others = refused.count > 1 ? " and \(refused.count - 1) more" : ""
        return [
            .log(
                .warning,
                "another locator keeps publishing tag \(first)\(others) on a floor of its own while this one holds "
                    + "it on one of its floors: their histories differ, or one does not hear the other's floor; "
                    + "each says its own at most \(Self.repliesPerMinute) times a minute")
        ]
    }

    /// The tags to say again this tick, sorted (after ``answerContests(now:)``).
    var contestedTags: [TagIdentity] { contested.sorted() }

    /// The tick said them: the contests of the next tick start empty.
    mutating func contestsAnswered() {
        contested.removeAll()
    }

    // MARK: - Topics

    /// The subscriptions to the readings and statuses of the agents this locator hears: every agent's for the whole
    /// site; one topic per agent heard for a share.
    func agentSubscriptions(map: FloorMap, topics: Topics) -> [Subscription] {
        guard let share else {
            return [
                Subscription(filter: topics.allReadings, qos: .atLeastOnce),
                Subscription(filter: topics.allAgentStatuses, qos: .atLeastOnce),
                Subscription(filter: topics.allGATTResults, qos: .atLeastOnce),
            ]
        }
        var list: [Subscription] = []
        for agent in map.agents where share.hears(floor: agent.floor) {
            guard let id = AgentID(agent.id) else { continue }
            list.append(Subscription(filter: TopicFilter(exactly: topics.readings(agent: id)), qos: .atLeastOnce))
            list.append(Subscription(filter: TopicFilter(exactly: topics.agentStatus(agent: id)), qos: .atLeastOnce))
            list.append(Subscription(filter: TopicFilter(exactly: topics.gattResults(agent: id)), qos: .atLeastOnce))
        }
        return list
    }
}
