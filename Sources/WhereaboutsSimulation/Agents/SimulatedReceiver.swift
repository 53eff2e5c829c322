import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsCore
import WhereaboutsWire

/// One simulated agent's receiving side, made of the real agent's code: its `WindowAggregator` (wall-clock windows,
/// integer RSSI samples, the mean inside Tukey's IQR fences) and its `BatchSequencer` (readings timed at the
/// window's end, RSSI and variance to 0.01 dB), so that the accuracy harness measures the aggregation that ships.
struct SimulatedReceiver: Sendable {
    /// The address every simulated advert comes from: tags are named by their beacon identity, not their address.
    private static let address = DeviceAddress(value: 0)

    private var aggregator: WindowAggregator
    private var sequencer: BatchSequencer
    private var closed: [ClosedWindow] = []
    private let keepsAdverts: Bool
    private var adverts: [SimulatedAdvert] = []

    /// A receiver whose first window is the one holding `start` (Unix seconds); it keeps what it hears raw when
    /// `keepsAdverts`.
    init(agent: AgentID, windowLength: Double, start: Double, keepsAdverts: Bool = false) {
        self.keepsAdverts = keepsAdverts
        aggregator = WindowAggregator(configuration: WindowAggregator.Configuration(windowLength: windowLength))
        sequencer = BatchSequencer(agent: agent, epoch: 0)
        // Open the first window now, so that it closes (empty, as a heartbeat) even if nothing is heard in it.
        closed = aggregator.advance(to: start)
    }

    /// Hears one advert at `time`: RSSI in whole dBm, as a controller reports it.
    mutating func hear(tag: TagIdentity, rssi: Int, power: Int?, at time: Double) {
        guard let address = Self.address else { return }
        if keepsAdverts { adverts.append(SimulatedAdvert(tag: tag, rssi: rssi, power: power, time: time)) }
        let sighting = BeaconSighting(
            tag: tag, rssi: rssi, measuredPower: power, address: address, addressType: .publicDevice, time: time)
        closed += aggregator.add(sighting, at: time)
    }

    /// The adverts heard since the last call, in the order heard.
    mutating func takeAdverts() -> [SimulatedAdvert] {
        defer { adverts.removeAll(keepingCapacity: true) }
        return adverts
    }

    /// Moves the clock to `time`; returns the readings of every window that closed, as the agent batches them.
    mutating func batches(until time: Double) -> [(windowEnd: Double, readings: [ReadingBatch.Reading])] {
        closed += aggregator.advance(to: time)
        defer { closed.removeAll(keepingCapacity: true) }
        return closed.map { window in
            (window.slot.end, sequencer.batch(for: window, sent: window.slot.end).readings)
        }
    }
}
