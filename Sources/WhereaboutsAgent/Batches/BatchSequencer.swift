import WhereaboutsAdvertising
public import WhereaboutsWire

/// Turns closed windows into numbered reading batches: one per window, `seq` from 0 and one more each time.
///
/// The `epoch` names this run of the agent (its start time in milliseconds, by convention), so that the locator
/// tells a restarted agent's `seq` 0 from a redelivered one.
public struct BatchSequencer: Sendable {
    /// The agent the batches come from.
    public let agent: AgentID
    /// This run's epoch.
    public let epoch: Int
    /// The `seq` the next batch gets.
    public private(set) var nextSeq = 0

    /// A sequencer starting at `seq` 0.
    public init(agent: AgentID, epoch: Int) {
        self.agent = agent
        self.epoch = epoch
    }

    /// The batch for one window, sent at `sent` (Unix seconds). An empty window makes a batch with no readings.
    ///
    /// Each reading is timed at the window's end and carries the robust mean RSSI rounded to 0.01 dB, the advert
    /// count, the variance (when there were two or more adverts), the last measured power and the last telemetry.
    public mutating func batch(for window: ClosedWindow, sent: Double) -> ReadingBatch {
        let readings = window.aggregates.map { aggregate in
            ReadingBatch.Reading(
                tag: aggregate.tag, time: window.slot.end, rssi: Self.hundredths(aggregate.rssi),
                count: aggregate.count, variance: aggregate.variance.map(Self.hundredths),
                power: aggregate.measuredPower, batteryMillivolts: aggregate.telemetry?.batteryMillivolts,
                temperature: aggregate.telemetry?.temperatureCelsius.map(Self.hundredths))
        }
        defer { nextSeq += 1 }
        return ReadingBatch(agent: agent, epoch: epoch, seq: nextSeq, sent: sent, readings: readings)
    }

    private static func hundredths(_ value: Double) -> Double {
        (value * 100).rounded() / 100
    }
}
