/// The grid tracker's state of a tag: a posterior on each floor the tag may be on, and the probability that it is
/// there (docs/tracker.md, "Floor, part of the state"). Most tags have one floor open, with probability 1.
///
/// An update (``TagEstimator``'s grid estimate) runs its four steps in order: ``open(_:current:margin:hasGrid:landing:)``
/// the floors that may be the tag's; ``move(now:current:tuning:joining:massNear:)`` probability between floors as
/// people climb; ``weigh(_:keep:)`` each floor by its posterior's evidence, once the filter has updated them; then
/// ``choose(now:current:)`` the most probable floor and ``close(below:keeping:)`` those nothing holds open.
struct FloorBelief: Sendable {
    /// The posterior on the tag's floor (``TagState/floor``), the most likely one.
    var posterior: GridPosterior?
    /// The other floors the tag may be on, each with its posterior and probability. Empty for most tags.
    var others: [FloorHypothesis] = []
    /// The probability of the tag's floor: with the others', 1.
    var mass = 1.0
    /// When the floors' probabilities last moved: the masses move by the time since then, not since the tag's
    /// floor's posterior was updated (an update with no reading that has a table on that floor leaves it behind).
    var time = -Double.infinity

    /// Forgets every floor: the tag is lost.
    mutating func forget() {
        posterior = nil
        others = []
        mass = 1
        time = -.infinity
    }

    /// One floor, certain, from `now`: a tag without a posterior (new, or lost) starts on the floor it was expected
    /// on or is heard best on.
    mutating func restart(now: Double) {
        others = []
        mass = 1
        time = now
    }

    /// 1. Opens a posterior on each floor of `scores` that may be the tag's and has none: one joined to the tag's
    /// floor (`current`, scored `current score`) by stairs it was placed by (`landing` gives them; its window then
    /// starts around them), or one heard within `margin` dB of the tag's floor. Only floors with a grid (`hasGrid`).
    mutating func open(
        _ scores: [(floor: UInt16, score: Double)], current: UInt16, margin: Double, hasGrid: (UInt16) -> Bool,
        landing: (UInt16) -> Stairs?
    ) {
        let currentScore = scores.first { $0.floor == current }?.score ?? -.infinity
        for entry in scores where entry.floor != current && hasGrid(entry.floor) {
            guard !others.contains(where: { $0.floor == entry.floor }) else { continue }
            let stairs = landing(entry.floor)
            guard stairs != nil || entry.score >= currentScore - margin else { continue }
            others.append(FloorHypothesis(floor: entry.floor, posterior: nil, mass: 0, entry: stairs?.position))
        }
    }

    /// 2, for a tag that has just (re)started: its probability shared evenly among the floors open, or, on a floor
    /// another locator holds it on (`expected`), 0.99 there.
    mutating func share(expected: Bool) {
        guard !others.isEmpty else { return }
        let share = expected ? 0.01 / Double(others.count) : 1 / Double(others.count + 1)
        mass = 1 - share * Double(others.count)
        for index in others.indices { others[index].mass = share }
    }

    /// 2. Moves probability between the tag's floor (`current`) and each other floor, by the time since it last
    /// moved (at most ``GridFilter/Configuration/resetAfter``): the share of a floor's posterior within
    /// ``GridFilter/Configuration/stairsCatchment`` of the stairs joining the two (`joining`; `massNear` measures
    /// it) leaves at ``GridFilter/Configuration/floorChangeRateByStairs`` a second, the rest at
    /// ``GridFilter/Configuration/floorChangeRateElsewhere``.
    ///
    /// Mass that comes by the stairs arrives at them: the other floor's window takes its share there, beside its own
    /// (which, left to the readings while the tag was on another floor, drifted to wherever on that floor explains
    /// them least badly). Not the tag's own floor's: what comes back to it is a small share.
    mutating func move(
        now: Double, current: UInt16, tuning: GridFilter.Configuration, joining: (UInt16) -> Stairs?,
        massNear: (GridPosterior, Point) -> Double
    ) {
        let elapsed = min(max(now - time, 0), tuning.resetAfter)
        time = now
        for index in others.indices {
            let other = others[index]
            let stairs = joining(other.floor)
            // Each way, the share of a floor's mass that leaves it: at the stairs' rate for its mass by the stairs to
            // the other floor, at the rate elsewhere for the rest.
            func leaving(_ posterior: GridPosterior?) -> (all: Double, byStairs: Double) {
                var near = 0.0
                if let stairs, let posterior { near = massNear(posterior, stairs.position) }
                let byStairs = near * (1 - exponential(-tuning.floorChangeRateByStairs * elapsed))
                return (byStairs + (1 - near) * (1 - exponential(-tuning.floorChangeRateElsewhere * elapsed)), byStairs)
            }
            let leavingHere = leaving(posterior)
            let up = leavingHere.all * mass
            let arriving = leavingHere.byStairs * mass
            let down = leaving(other.posterior).all * other.mass
            mass += down - up
            others[index].mass += up - down
            guard let stairs, others[index].mass > 0, other.entry == nil else { continue }
            let share = min(arriving / others[index].mass, 1)
            // (A floor with no window yet starts one: around the stairs if most of its mass comes by them. A share
            // under 1 % is not worth mixing in: the weighing would prune it.)
            if other.posterior != nil ? share >= 0.01 : share >= 0.5 {
                others[index].entry = stairs.position
                others[index].entryShare = share
            }
        }
    }

    /// 3. Weighs each floor by the likelihood of the update's readings there (`evidences`: the tag's floor's, then
    /// the others' in order), each mixed with `keep` of the best floor's, so that one update never favours a floor
    /// by more than 1 / `keep`. Returns false when no floor is left with any probability.
    mutating func weigh(_ evidences: [Double], keep: Double) -> Bool {
        let top = evidences.max() ?? 0
        func weight(_ evidence: Double) -> Double { keep + (1 - keep) * exponential(evidence - top) }
        mass *= weight(evidences[0])
        var total = mass
        for index in others.indices {
            others[index].mass *= weight(evidences[index + 1])
            total += others[index].mass
        }
        guard total > 0, total.isFinite else { return false }
        mass /= total
        for index in others.indices { others[index].mass /= total }
        return true
    }

    /// 4. Makes the most probable floor the tag's, of those whose posterior this update weighed (one just opened
    /// whose readings no table reached has none worth reporting); returns which of ``others`` it was, now holding the
    /// floor it replaced (`current`), or nil when the tag's floor stays.
    mutating func choose(now: Double, current: UInt16) -> (floor: UInt16, index: Int)? {
        let weighedNow = others.indices.filter { others[$0].posterior?.time == now }
        guard let leader = weighedNow.max(by: { others[$0].mass < others[$1].mass }), others[leader].mass > mass,
            let chosen = others[leader].posterior
        else { return nil }
        let replaced = FloorHypothesis(floor: current, posterior: posterior, mass: mass, entry: nil)
        let floor = others[leader].floor
        mass = others[leader].mass
        posterior = chosen
        others[leader] = replaced
        return (floor, leader)
    }

    /// 4. Closes the other floors under `pruneMass` that `keeping` does not hold open (stairs the tag was placed by,
    /// or agents that hear it well there); what they held goes back to the floors left, in proportion. Returns the
    /// most probable other floor's probability (0 with none left).
    mutating func close(below pruneMass: Double, keeping: (UInt16) -> Bool) -> Double {
        others.removeAll { other in other.mass < pruneMass && !keeping(other.floor) }
        let open = mass + others.reduce(0) { $0 + $1.mass }
        if open > 0, open < 1 {
            mass /= open
            for index in others.indices { others[index].mass /= open }
        }
        let runnerUp = others.map(\.mass).max() ?? 0
        if others.isEmpty { mass = 1 }
        return runnerUp
    }
}

/// A floor other than its own that a tag may be on, for the grid filter (``FloorBelief/others``).
struct FloorHypothesis: Sendable {
    var floor: UInt16
    /// Its posterior on that floor: nil until the first update after it opened (then empty, with the tag's power
    /// offset, until an update weighs a reading there).
    var posterior: GridPosterior?
    /// The probability that the tag is on that floor.
    var mass: Double
    /// Where the stairs or lift the tag may come by are, for the next update (nil after it), and the share of the
    /// floor's probability that comes by them (1 for a floor just opened).
    var entry: Point?
    var entryShare = 1.0
}
