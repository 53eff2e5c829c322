import Synchronization

/// One worker's share of an update: a run of tags' states, moved out of the tracker for the duration, its buffers,
/// and the estimates it made, in the run's order.
struct EstimateWork: Sendable {
    var states: [TagState]
    var scratch: EstimateScratch
    var estimates: [TagEstimate] = []
    /// Where in the run each estimate's tag is, in the estimates' order.
    var estimatedSlots: [Int] = []

    /// Estimates every tag of the run, in order.
    mutating func run(estimator: TagEstimator, now: Double, radio: RadioConstants, zones: ZoneGeometry) {
        estimates.reserveCapacity(states.count)
        estimatedSlots.reserveCapacity(states.count)
        for index in states.indices {
            if let estimate = estimator.estimate(
                &states[index], now: now, radio: radio, zones: zones, scratch: &scratch)
            {
                estimates.append(estimate)
                estimatedSlots.append(index)
            }
        }
    }

    /// Runs the shares with `runner` (each on a thread of its own, with the runtime's) and puts each back done.
    ///
    /// Each share travels in a mutex of its own, which its worker holds while it works. The shares are moved in and
    /// out, never copied: a worker must be the only owner of each state's buffers, or every change it made would
    /// copy them.
    static func run(
        _ shares: inout [EstimateWork?], runner: WorkRunner, estimator: TagEstimator, now: Double,
        radio: RadioConstants, zones: ZoneGeometry
    ) {
        let slots = shares.indices.map { index in
            defer { shares[index] = nil }
            return Slot(shares[index])
        }
        runner.run(slots.count) { index in
            slots[index].share.withLock { $0?.run(estimator: estimator, now: now, radio: radio, zones: zones) }
        }
        for index in shares.indices {
            shares[index] = slots[index].share.withLock { share in
                defer { share = nil }
                return share
            }
        }
    }

    private final class Slot: Sendable {
        let share: Mutex<EstimateWork?>
        init(_ share: EstimateWork?) { self.share = Mutex(share) }
    }
}
