/// When a tag may be estimated next, kept apart from its ``TagState``: an update looks at this for every tag with
/// readings waiting, 50 times a second. Read from the states, at 10,000 tags that scan was a cache miss per tag
/// (the flags lie in two lines of a 360-byte state), most of the update's own time on the service thread.
struct EstimateSchedule: Sendable {
    /// Its state's `moving`, as of its last estimate.
    var moving = true
    /// When it was last estimated (an update's `now`).
    var lastEstimated = -Double.infinity
    /// When its pending zone change may be decided; infinity while none is pending.
    var decisionDue = Double.infinity
    /// Where its estimates fall in each (still tag's) interval, as a fraction of it.
    let phase: Double

    init(phase: Double) {
        self.phase = phase
    }

    /// The phase of the `started`th tag: successive tags spread evenly over the interval (the golden-ratio
    /// sequence), the same in every run of the same input.
    static func phase(started: Int) -> Double {
        let golden = 0.618_033_988_749_894_8
        let product = Double(started) * golden
        return product - product.rounded(.down)
    }

    /// When it may be estimated again: the first of its own instants after its last estimate, one every `wait`
    /// seconds from `offset` (the same for both waits, so that a walking tag's instants include a still one's when
    /// one wait divides the other, as 0.5 s and 1 s do). A millisecond of slack each way: an update on one of those
    /// instants (a replay's ticks on whole seconds) is not put off by rounding, and an estimate made that much
    /// early does not make the same instant due again.
    ///
    /// Instants of its own, not its last estimate plus the wait: a tag is estimated with the first update after it
    /// is due, so estimates made together stay together. Ten thousand tags started at once were then estimated in a
    /// few updates a second, up to 1,300 in one update of 70 ms, and readings meanwhile waited for the loop; at their
    /// phases the same estimates spread over all fifty updates of a second.
    func nextEstimate(wait: Double, offset: Double) -> Double {
        let slack = 1e-3
        guard wait > slack, lastEstimated.isFinite else { return -.infinity }
        let instant = (((lastEstimated + slack - offset) / wait).rounded(.down) + 1) * wait + offset
        return instant - slack
    }
}

/// A tag with readings waiting for an estimate (``TagTracker``): its index, when it may be estimated, and when it
/// last was.
struct DirtyTag: Sendable {
    var index: Int
    var due: Double
    /// When it is estimated even at an update that brings it no readings: a wait past its instant, and with a
    /// zone change pending, a still tag's wait past when the change falls due. (Not from `due`: a tag whose zone
    /// change is due is estimated only with its batches, so that the change is decided with the one that
    /// completes it, not at the first update past its dwell.)
    var unheardDue: Double
    var lastEstimated: Double
}

/// Where a reading goes in the tracker: its tag's index and its link for the reading's agent, when they are held
/// (``TagTracker/places(of:agentIndex:into:)``).
struct TagPlace: Sendable {
    var tagIndex: Int?
    var link: Int?
}

/// A bit per tag index.
struct TagBits: Sendable {
    private var words: [UInt64] = []

    func contains(_ index: Int) -> Bool {
        let word = index >> 6
        return word < words.count && words[word] & (1 << UInt64(index & 63)) != 0
    }

    /// Sets the bit; returns whether it was clear.
    @discardableResult
    mutating func insert(_ index: Int) -> Bool {
        let word = index >> 6
        if word >= words.count { words += Array(repeating: 0, count: word + 1 - words.count) }
        let bit: UInt64 = 1 << UInt64(index & 63)
        defer { words[word] |= bit }
        return words[word] & bit == 0
    }

    /// Sets the bit.
    @inline(__always)
    mutating func set(_ index: Int) {
        let word = index >> 6
        if word >= words.count { words += Array(repeating: 0, count: word + 1 - words.count) }
        words[word] |= 1 << UInt64(index & 63)
    }

    mutating func remove(_ index: Int) {
        let word = index >> 6
        guard word < words.count else { return }
        words[word] &= ~(1 << UInt64(index & 63))
    }
}
