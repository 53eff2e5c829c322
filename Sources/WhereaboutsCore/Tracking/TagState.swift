/// What the tracker keeps per tag.
///
/// The fields every reading touches come first, so that a reading of one of 10,000 tags mostly costs the state's
/// first cache lines (see ``LinkDirectory``).
struct TagState: Sendable {
    /// The fast and slow filters of one agent's readings of the tag, and the grid filter's sums of them since the
    /// tag's last update, in 64 bytes.
    ///
    /// Both filters take the same readings, so they always have the same time, kept once; with the agent's index in
    /// 32 bits and the outlier runs in 16, the filters take 48 bytes where two ``RSSIFilter``s and an index were 72.
    /// Every reading updates its link, which at 10,000 tags is not in the cache; the sums, in an array of their own
    /// before, cost a second miss.
    struct Link: Sendable {
        // Zero only until the initialiser stores the filters (`store`, which updates use too).
        private var fastRSSI = 0.0
        private var fastVariance = 0.0
        private var slowRSSI = 0.0
        private var slowVariance = 0.0
        /// When both filters last took a reading.
        private var time = 0.0
        private let agent: Int32
        // Saturated at ±32,767: a run only matters up to `outlierRunToFollow` (3 by default).
        private var fastOutlierRun: Int16 = 0
        private var slowOutlierRun: Int16 = 0
        /// The grid filter's: the RSSI × advert count and the adverts of the agent's readings since the tag's last
        /// update. Here, not in an array of their own, because a reading writes its link anyway: at 10,000 tags
        /// that array's first load was three quarters of the time `take` spent.
        private var pendingSum = 0.0
        private var pendingCount = 0.0

        /// The agent's index in the map (a map file of at most 64 MB lists far fewer than 2^31 agents).
        var agentIndex: Int { Int(agent) }

        var fast: RSSIFilter {
            RSSIFilter(rssi: fastRSSI, variance: fastVariance, time: time, outlierRun: Int(fastOutlierRun))
        }

        var slow: RSSIFilter {
            RSSIFilter(rssi: slowRSSI, variance: slowVariance, time: time, outlierRun: Int(slowOutlierRun))
        }

        /// The agent's filters, which must have the same time (they take the same readings).
        init(agentIndex: Int, fast: RSSIFilter, slow: RSSIFilter) {
            agent = Int32(agentIndex)
            store(fast: fast, slow: slow)
        }

        /// Keeps the filters' state, which must have the same time (they take the same readings).
        @inline(__always)
        private mutating func store(fast: RSSIFilter, slow: RSSIFilter) {
            assert(fast.time == slow.time, "a link's filters at different times")
            fastRSSI = fast.rssi
            fastVariance = fast.variance
            slowRSSI = slow.rssi
            slowVariance = slow.variance
            time = fast.time
            fastOutlierRun = Int16(clamping: fast.outlierRun)
            slowOutlierRun = Int16(clamping: slow.outlierRun)
        }

        /// Updates both filters with a reading, each from the state it had before it (both then take
        /// `max(time, reading time)`).
        mutating func update(
            _ reading: Reading, fast fastConfiguration: RSSIFilter.Configuration,
            slow slowConfiguration: RSSIFilter.Configuration
        ) {
            var fast = self.fast
            var slow = self.slow
            fast.update(
                rssi: reading.rssi, count: reading.count, variance: reading.variance, time: reading.time,
                configuration: fastConfiguration)
            slow.update(
                rssi: reading.rssi, count: reading.count, variance: reading.variance, time: reading.time,
                configuration: slowConfiguration)
            store(fast: fast, slow: slow)
        }

        /// Adds a reading's RSSI, weighed by its adverts, to the sums since the tag's last update.
        mutating func addPending(rssi: Double, weight: Double) {
            pendingSum += rssi * weight
            pendingCount += weight
        }

        /// The mean RSSI of the readings summed since the tag's last update, if any; starts the sums afresh.
        mutating func takePending() -> Double? {
            guard pendingCount > 0 else { return nil }
            defer { (pendingSum, pendingCount) = (0, 0) }
            return pendingSum / pendingCount
        }

        /// Whether readings were summed since the tag's last update.
        var hasPending: Bool { pendingCount > 0 }

        /// Whether it was heard within `maxAge` of `now` (a clock stepped back counts as heard): the links estimates
        /// read, and the ones ``TagState/dropLinks(notHeardWithin:of:)`` keeps.
        func isHeard(within maxAge: Double, of now: Double) -> Bool {
            now - time <= maxAge
        }

        /// Restarts the slow filter from the fast one.
        mutating func restartSlow() {
            slowRSSI = fastRSSI
            slowVariance = fastVariance
            slowOutlierRun = fastOutlierRun
        }
    }

    let identity: TagIdentity
    // A short array beats a dictionary here: a tag is heard by a handful of agents. Appended to, and cut only by
    // `dropLinks`, which lists the rest in the directory again.
    private(set) var links: [Link] = []
    // Before the directory, so that the fields a reading writes lie between the identity and the directory, which
    // finding its tag and link has just read: 96 bytes from the state's start, on the lines those reads loaded. After
    // the directory, `lastHeard` was on a line of its own for a quarter of the tags, and its load was 69 % of
    // `take`'s samples in `perf` at 10,000 tags.
    var lastHeard = -Double.infinity
    var advertisedPower: Double?
    /// Which link is whose, for the first links.
    private var directory = LinkDirectory()
    let name: String?
    let measuredPowerOverride: Double?
    /// How sure the map is of ``measuredPowerOverride`` (1σ, dB), when it names the power and says.
    let measuredPowerSigma: Double?
    /// The floor it is on, by either tracker.
    var floor: UInt16?
    /// When an estimate last placed the tag by stairs or a lift of its floor.
    var atStairs = -Double.infinity
    /// Updates in a row its floor led every other by the switch margin, since it came onto it (counted up to
    /// ``LocatorEngine/Configuration/floorSwitchUpdatesAwayFromStairs``: then the floor is established).
    var floorLeadCount = 0
    /// Where its last estimate put it, on its floor.
    var lastPosition: Point?
    /// Trilateration's state: the track and the floor contest.
    var trilateration = TrilaterationState()
    var moving = true
    var quietSince: Double?
    var slowRestart = -Double.infinity
    /// The grid filter's state: a posterior on the tag's floor (``floor``) and on each other floor it may be on, with
    /// their probabilities.
    var grid = FloorBelief()

    /// Whether it has a position (a track, or the grid filter's posterior).
    var hasPosition: Bool { trilateration.track != nil || grid.posterior != nil }

    init(identity: TagIdentity, name: String?, measuredPowerOverride: Double?, measuredPowerSigma: Double? = nil) {
        self.identity = identity
        self.name = name
        self.measuredPowerOverride = measuredPowerOverride
        self.measuredPowerSigma = measuredPowerOverride == nil ? nil : measuredPowerSigma
    }

    /// Where its link for the agent is in ``links``, if it has one.
    @inline(__always)
    func link(of agentIndex: Int) -> Int? {
        directory.position(of: agentIndex, in: links)
    }

    /// Drops the links not heard within `maxAge` of `now`: those that no estimate reads (``TagEstimator``'s ranges
    /// and motion test skip them). A tag that walks through a building hears a few agents at a time but, over a
    /// day, nearly all of them; kept, their links were scanned by every estimate and, past the directory's
    /// capacity, by every reading. A link dropped starts afresh with the agent's next reading, as the first did.
    ///
    /// A link whose readings the grid filter has not taken yet stays until it has.
    mutating func dropLinks(notHeardWithin maxAge: Double, of now: Double) {
        let count = links.count
        links.removeAll { !$0.isHeard(within: maxAge, of: now) && !$0.hasPending }
        if links.count != count { directory = LinkDirectory(listing: links) }
    }

    /// Restarts every link's slow RSSI average from its fast one.
    mutating func restartSlowAverages() {
        for index in links.indices { links[index].restartSlow() }
    }

    mutating func take(
        _ reading: Reading,
        agentIndex: Int,
        link: Int?,
        fast: RSSIFilter.Configuration,
        slow: RSSIFilter.Configuration,
        summingForGrid: Bool
    ) {
        if let power = reading.measuredPower { advertisedPower = power }
        lastHeard = max(lastHeard, reading.time)
        // A link found before an earlier reading of the same batch made it is found now.
        if let index = link ?? self.link(of: agentIndex) {
            links[index].update(reading, fast: fast, slow: slow)
            // Only the grid filter reads the sums; trilateration works from the filters alone.
            if summingForGrid { links[index].addPending(rssi: reading.rssi, weight: Double(reading.count)) }
            return
        }
        let filter = RSSIFilter(
            rssi: reading.rssi,
            count: reading.count,
            variance: reading.variance,
            time: reading.time,
            configuration: fast
        )
        var link = Link(agentIndex: agentIndex, fast: filter, slow: filter)
        if summingForGrid { link.addPending(rssi: reading.rssi, weight: Double(reading.count)) }
        directory.note(agentIndex, at: links.count)
        links.append(link)
    }

    /// Hands the grid filter each agent's mean RSSI since the tag's last update, in the order of the links, and
    /// starts the sums afresh.
    mutating func takePending(_ body: (_ agentIndex: Int, _ rssi: Double) -> Void) {
        for index in links.indices {
            guard let rssi = links[index].takePending() else { continue }
            body(links[index].agentIndex, rssi)
        }
    }
}

/// The agents of a tag's first 16 links, in 32 bytes of its state.
///
/// A reading updates its agent's link, which had to be found first. Found by a scan of the links themselves
/// (72 bytes each, in their own allocation), at 10,000 tags that scan was nearly a third of the time of taking a
/// reading, and the array's header, read first, nearly half: cache misses, as no tag's links stay cached between
/// two of its readings. The directory lies beside the identity, which the lookup has just read, so the only link
/// memory a reading touches is the link it updates.
struct LinkDirectory: Sendable {
    static let capacity = 16
    /// Each link's agent index plus one, in the order of the links; 0 after the last. An agent index too large for
    /// 16 bits is kept as `UInt16.max`; the link itself says whose it is.
    private var keys = SIMD16<UInt16>(repeating: 0)

    /// Lists nothing.
    init() {}

    /// Lists the first links' agents.
    init(listing links: [TagState.Link]) {
        for position in links.indices.prefix(Self.capacity) { note(links[position].agentIndex, at: position) }
    }

    /// Where the link of the agent is in `links` (whose first links this directory lists), if it has one.
    @inline(__always)
    func position(of agentIndex: Int, in links: [TagState.Link]) -> Int? {
        // All 16 compared at once, without a branch to mispredict: the first that holds the key, or 16 if none.
        let lanes = SIMD16<UInt16>(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
        let first = Int(lanes.replacing(with: 16, where: keys .!= SIMD16(repeating: Self.key(agentIndex))).min())
        // The link confirms it, as a tag's state confirms the index table's fingerprint (two agents past 16 bits
        // share a key).
        if first < Self.capacity, links[first].agentIndex == agentIndex { return first }
        // Not listed, and every link is (the directory is not full): none.
        if first == Self.capacity, keys[Self.capacity - 1] == 0 { return nil }
        return links.firstIndex { $0.agentIndex == agentIndex }
    }

    /// Notes that the link at `position` (the next one appended) is the agent's.
    mutating func note(_ agentIndex: Int, at position: Int) {
        guard position < Self.capacity else { return }
        keys[position] = Self.key(agentIndex)
    }

    private static func key(_ agentIndex: Int) -> UInt16 {
        agentIndex >= 0 && agentIndex < Int(UInt16.max) - 1 ? UInt16(agentIndex + 1) : UInt16.max
    }
}

/// Trilateration's state of a tag (``TagState/trilateration``): its Kalman track, on which floor, and the floor
/// contest (the grid filter's state is ``FloorBelief``).
struct TrilaterationState: Sendable {
    /// The position track, and the floor it is on.
    var track: TrackFilter?
    var trackFloor: UInt16?
    /// The floor that beats the tag's, and on how many updates in a row.
    var floorChallenger: UInt16?
    var floorChallengerCount = 0
}
