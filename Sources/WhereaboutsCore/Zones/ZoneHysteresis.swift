/// One tag's zone, decided on its zone probabilities with hysteresis, so that a tag standing near a boundary does
/// not flap and a change is reported only when the evidence for it holds.
///
/// - A tag **enters** a zone when the zone is at least ``Configuration/enterProbability`` likely.
/// - A tag in a zone **leaves** it when the zone is less than ``Configuration/exitProbability`` likely: for another
///   zone, when one is at least ``Configuration/enterProbability`` likely then, otherwise for no zone. Another zone
///   growing likelier does not by itself move the tag: two zones near 50/50 would trade it back and forth.
/// - Either way the challenge must hold over ``Configuration/probabilityDwell`` seconds of readings, counted from
///   the update before the one that made it (so at one estimate a second, that update decides); until then the tag
///   stays where it is, however the rest of the mass is spread. Between the two thresholds nothing changes: that
///   band is the hysteresis.
///
/// The probabilities come from the grid filter's posterior (``update(evidence:time:configuration:)``).
///
/// With trilateration the zone is decided from positions (``update(position:zones:time:configuration:)``): a tag
/// leaves its zone for another (or for no zone) only when its position is at least ``Configuration/margin`` metres
/// out of the zone it is in, and stays out for ``Configuration/dwell`` seconds; a tag in no zone enters one once it
/// has been inside it for the dwell time. (Deciding a trilateration fix's zone on its Gaussian probabilities, with
/// the rule above, reported a walk across a boundary 5.8–7.8 s late on 3 of 5 seeds against the 5 s goal: the fix's
/// accuracy is wide, so the next room becomes likely late. docs/tracker.md has the figures.)
public struct ZoneHysteresis: Sendable, Hashable {
    /// Tuning of the hysteresis.
    public struct Configuration: Sendable, Hashable {
        /// How likely a zone must be before a tag enters it. Above 0.5, so that at most one zone can be. (The
        /// rule before the band, the likeliest region once 0.7 likely for 2 s, gave the grid filter 1.2–4.8 points
        /// less zone accuracy on the accuracy harness.) What stops flaps is the exit threshold: 0.6 left tags in no
        /// zone while the next one was 0.51–0.6 likely, and held the open office 1.7 points lower (seeds 1–6) with
        /// 11 % too few zone changes on seed 42; 0.51 changed none of `ZoneProbabilityTests`' counts.
        public var enterProbability: Double = 0.51
        /// How unlikely the zone a tag is in must become before it leaves it. The band between this and
        /// ``enterProbability`` is what keeps a still tag near a boundary from flapping. A still tag 0.3 m from a
        /// boundary of the demo office, an hour each on three seeds (`ZoneProbabilityTests`), changed zone 10, 12
        /// and 10 times with 0.55 / 0.2 and no dwell; 4, 2 and 2 with 0.6 / 0.15 (and with 0.51 / 0.15); 0, 0 and 0
        /// with 0.7 / 0.1, which lost 1 point of zone accuracy in the harness's open office against 0.6 / 0.15.
        /// Issue 45: at 0.2 the Kolakowski robot path reported 102.6 zone changes per tag-hour against 112.8 true
        /// (−9 %, against −27 % at 0.15) and the harness stayed within 7 %, but a still tag 0.3 m from a boundary
        /// changed zone 6 times in an hour on seed 2 (`ZoneProbabilityTests`, at most 4): it stays at 0.15.
        public var exitProbability: Double = 0.15
        /// From positions alone (trilateration): how long, in seconds, a change must hold before it is reported.
        public var dwell: Double = 1
        /// From probabilities (the grid filter): over how many seconds of readings a change must hold before it is
        /// reported. The span counts from the previous estimate of the tag, whose readings the first update that
        /// challenges its zone weighs: at one estimate a second (the default interval, and replay), that update
        /// decides at once; when estimates come with every batch (`--estimate-interval 0`), each weighing a few
        /// agents' readings, the challenge must last a second. Until cb42529 the span counted from the challenging
        /// update itself, so at one estimate a second every change waited for the next one: the grid was 1.0–3.1
        /// points less accurate on the harness's four scenarios (seeds 1–6, with the band at 0.55 / 0.2), reported
        /// each change a second later, and 17 % fewer zone changes than the truth in the open office
        /// (docs/tracker.md). Live, the estimate that decides comes with a batch of the tag's readings (a tag past
        /// its instant waits for one, ``LocatorEngine/Configuration/estimateInterval``), so the occupancy follows
        /// the batch that completed the change by the update's own time: without that, the tag's instant decided
        /// it, and the reading-to-occupancy p99 was 581 ms where it is 41 ms (`scripts/bench.sh`).
        public var probabilityDwell: Double = 1
        /// From positions alone: how far past a boundary, in metres, a position must be to count toward leaving.
        public var margin: Double = 0.5

        public init() {}
    }

    /// Seconds the dwell may fall short by: an update a whole dwell after the challenge, on times that are not
    /// whole numbers, must not wait for the next one over rounding.
    static let slack = 1e-6

    /// The zone the tag is in, or nil for none.
    public private(set) var current: ZoneKey?
    /// Since when the current zone (or no zone) has been challenged, if it is.
    private var challengedSince: Double?
    /// When the last update on probabilities came: the readings of the next one start there.
    private var lastEvidenceTime: Double?
    private var positionChallenger: ZoneKey??
    private var positionChallengerSince = 0.0

    /// Whether the tag has been where it is (a zone, or none) with no challenge pending, at least once: until then
    /// its first place is still being decided, from its first estimates.
    public private(set) var settled = false

    public init(current: ZoneKey? = nil) {
        self.current = current
    }

    /// Notes, at the end of an update, whether the tag is settled (``settled``).
    private mutating func noteSettled() {
        if !settled, current != nil || (challengedSince == nil && positionChallenger == nil) { settled = true }
    }

    /// When the pending challenge, if any, may be decided: its start plus the dwell of its kind (on probabilities,
    /// ``Configuration/probabilityDwell``; on positions, ``Configuration/dwell``).
    public func decisionDue(configuration: Configuration) -> Double? {
        if let challengedSince { return challengedSince + configuration.probabilityDwell }
        return positionChallenger == nil ? nil : positionChallengerSince + configuration.dwell
    }

    /// Takes a position on a floor; returns the change, if one is decided now.
    ///
    /// - Parameter zones: zones of the floor the tag is on: at least the one holding the position, if any, and the
    ///   one the tag is in (the whole floor will do).
    public mutating func update(
        position: Point,
        zones: [Zone],
        time: Double,
        configuration: Configuration
    ) -> (from: ZoneKey?, to: ZoneKey?)? {
        update(position: position, zones: zones, among: zones.indices, time: time, configuration: configuration)
    }

    /// ``update(position:zones:time:configuration:)`` on `zones[i]` for each i of `indices`: the zones are read
    /// where they are (a copy of each, its name and its polygon, cost a tenth of a 10,000-tag locator's zone
    /// decisions).
    mutating func update(
        position: Point,
        zones: [Zone],
        among indices: some Collection<Int>,
        time: Double,
        configuration: Configuration
    ) -> (from: ZoneKey?, to: ZoneKey?)? {
        defer { noteSettled() }
        let containing = indices.first { zones[$0].polygon.contains(position) }
        let candidate = containing.map { zones[$0].key }
        guard candidate != current else {
            positionChallenger = nil
            return nil
        }
        // How far the position is out of the current zone: it must be clearly gone from there, whatever the shape
        // of the zone it is going to (a position hugging the building's outer wall is only centimetres inside the
        // next room, yet well out of the last one). From no zone, being inside the new one is enough.
        let depth: Double
        if let current, let zone = indices.first(where: { zones[$0].key == current }) {
            depth = -zones[zone].polygon.signedDistance(position)
        } else if current != nil {
            // The current zone is on another floor: the floor change already decided it.
            depth = .infinity
        } else {
            depth = containing.map { zones[$0].polygon.signedDistance(position) } ?? 0
        }
        guard depth >= (current == nil ? 0 : configuration.margin) else { return nil }
        if positionChallenger != .some(candidate) {
            positionChallenger = .some(candidate)
            positionChallengerSince = time
        }
        guard time - positionChallengerSince >= configuration.dwell - Self.slack else { return nil }
        let change = (from: current, to: candidate)
        current = candidate
        positionChallenger = nil
        return change
    }

    /// Takes the probability mass per zone of the floor the tag is on; returns the change, if one is decided now.
    mutating func update(
        evidence: ZoneEvidence,
        time: Double,
        configuration: Configuration
    ) -> (from: ZoneKey?, to: ZoneKey?)? {
        defer {
            lastEvidenceTime = time
            noteSettled()
        }
        let (likeliest, best) = Self.likeliest(evidence)
        // Where the tag would go now. A tag in a zone is challenged only once that zone is unlikely enough to
        // leave, whatever else grows: two zones near 50/50 must not trade the tag back and forth. It goes to the
        // zone likely enough to enter, or else to none. A tag in no zone is challenged by a zone likely enough.
        let entering = best >= configuration.enterProbability ? likeliest : nil
        let candidate: ZoneKey??
        if let current {
            candidate =
                evidence.probability(of: current) < configuration.exitProbability ? .some(entering) : .none
        } else {
            candidate = entering.map { .some($0) } ?? .none
        }
        guard case .some(let destination) = candidate else {
            challengedSince = nil
            return nil
        }
        // The dwell runs from the first readings that challenged the current zone (those since the last update),
        // wherever the tag would go: a tag leaving one room for the next is often "in no zone likely enough" before
        // it is in the next room.
        let since = challengedSince ?? min(lastEvidenceTime ?? time, time)
        challengedSince = since
        guard time - since >= configuration.probabilityDwell - Self.slack else { return nil }
        let change = (from: current, to: destination)
        current = destination
        challengedSince = nil
        return change
    }

    /// Moves a tag that changed floor to the floor `evidence` is of: it leaves its zone at once and enters the
    /// likeliest zone there at once, if that is at least ``Configuration/enterProbability`` likely; returns the zone
    /// left and the zone entered.
    ///
    /// The floor change was itself decided on held evidence (the floor choice has its own hysteresis), so a dwell
    /// more for the new floor's zone only held the tag in no zone for a second or two: on the harness's two floors
    /// each floor change was reported as two zone changes, through no zone.
    mutating func changeFloor(evidence: ZoneEvidence, configuration: Configuration) -> (
        from: ZoneKey?, to: ZoneKey?
    ) {
        defer { noteSettled() }
        let left = leave()
        let (likeliest, best) = Self.likeliest(evidence)
        current = best >= configuration.enterProbability ? likeliest : nil
        return (left, current)
    }

    /// ``changeFloor(evidence:configuration:)`` from a position (the trilateration path): the tag enters at once the
    /// zone of `zones[i]`, for i in `indices`, that holds the position, if one does.
    mutating func changeFloor(position: Point, zones: [Zone], among indices: some Collection<Int>) -> (
        from: ZoneKey?, to: ZoneKey?
    ) {
        defer { noteSettled() }
        let left = leave()
        current = indices.first { zones[$0].polygon.contains(position) }.map { zones[$0].key }
        return (left, current)
    }

    /// The likeliest zone of the evidence (the first in its order among equals) and its mass; nil and -1 when it
    /// has no zones.
    private static func likeliest(_ evidence: ZoneEvidence) -> (zone: ZoneKey?, mass: Double) {
        var likeliest: ZoneKey?
        var best = -1.0
        for entry in evidence.masses where entry.probability > best {
            likeliest = entry.zone
            best = entry.probability
        }
        return (likeliest, best)
    }

    /// Leaves the current zone at once (the tag timed out); returns the zone left.
    public mutating func leave() -> ZoneKey? {
        let left = current
        current = nil
        challengedSince = nil
        lastEvidenceTime = nil
        positionChallenger = nil
        return left
    }
}
