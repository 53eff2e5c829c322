import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

/// A readings batch decoded by ``LocatorPipeline/preparation``, off the service's loop.
public struct PreparedBatch: Sendable {
    /// The map's generation it was decoded under.
    fileprivate let mapGeneration: Int
    /// The agent its topic names.
    fileprivate let agent: AgentID
    fileprivate let result: BatchDecodeResult
    /// The time it was decoded at, which its time checks used.
    fileprivate let decodedAt: Double
}

/// The readings' way into the engine: each batch decoded and checked (``BatchDecoder``), duplicates by (agent,
/// epoch, seq) dropped (``BatchDeduplicator``, whose ledger the shell keeps across restarts), its readings ingested
/// together, then each recorded, handed to the calibration when it is another agent's beacon, and counted as taken
/// or refused (``LocatorMonitor``). A replayed reading takes the same way from the engine on.
struct ReadingIntake: Sendable {
    private let decoder: BatchDecoder
    /// Which batches were taken, per agent.
    private(set) var deduplicator = BatchDeduplicator()
    /// Whether readings that pass the wire checks (before the engine's own) produce `.record` actions.
    private let recordsReadings: Bool
    /// How many times the map was replaced: a batch decoded under another (``PreparedBatch``) is decoded again.
    private var mapGeneration = 0

    init(limits: BatchDecoder.Limits, tolerance: BatchDecoder.TimeTolerance, recordsReadings: Bool) {
        decoder = BatchDecoder(limits: limits, tolerance: tolerance)
        self.recordsReadings = recordsReadings
    }

    /// The map was replaced: batches prepared before are decoded again.
    mutating func mapReplaced() {
        mapGeneration += 1
    }

    // MARK: - The batch ledger

    /// Takes the ledger an earlier run saved; bytes that are not a whole, valid ledger change nothing.
    mutating func restoreLedger(_ bytes: [UInt8]) throws(BatchLedger.Error) {
        var restored = try BatchLedger.decode(
            bytes, maximumAgents: deduplicator.maximumAgents, clockSkew: deduplicator.clockSkew)
        restored.recordsAdmissions = deduplicator.recordsAdmissions
        restored.watching(since: deduplicator.watchingSince)
        deduplicator = restored
    }

    /// Takes again the batches the last run journaled after its last save of the ledger; returns how many.
    mutating func replayJournal(_ bytes: [UInt8]) -> Int {
        let admissions = BatchLedger.journal(bytes)
        deduplicator.replay(admissions)
        return admissions.count
    }

    /// Lists the batches taken from now on for ``takeJournal()``.
    mutating func journalsLedger() {
        deduplicator.recordsAdmissions = true
    }

    /// The journal lines of the batches taken since the last call (none unless ``journalsLedger()``).
    mutating func takeJournal() -> [UInt8] {
        BatchLedger.journalLines(deduplicator.takeAdmissions())
    }

    /// The locator receives what the broker passes on from `now`: its connection.
    mutating func connected(now: Double) {
        deduplicator.watching(since: now)
    }

    // MARK: - Decoding

    /// Decodes a readings batch with what stays fixed while this map is in force: the decoder (its limits, its tag
    /// cache, which is safe to share), the map's agents and the locator's share. Nil for any other message, and for
    /// a batch of an agent the share does not hear.
    func preparation(
        map: FloorMap, share: FloorShare?, topics: Topics
    ) -> @Sendable (_ topic: String, _ payload: [UInt8], _ now: Double) -> PreparedBatch? {
        let decoder = decoder
        let generation = mapGeneration
        return { topic, payload, now in
            guard case .readings(let agent) = topics.parse(topic) else { return nil }
            if let index = map.agentIndex(of: agent.rawValue), !share.hears(floor: map.agents[index].floor) {
                return nil
            }
            let result = Self.decode(payload, agent: agent, decoder: decoder, map: map, now: now)
            return PreparedBatch(mapGeneration: generation, agent: agent, result: result, decodedAt: now)
        }
    }

    /// A prepared batch as it would decode at `now` (its time checks made again); nil when it must be decoded again
    /// (the map was replaced since, or only that can tell its verdict at `now`).
    func retimed(_ prepared: PreparedBatch, now: Double) -> (result: BatchDecodeResult, agent: AgentID)? {
        guard prepared.mapGeneration == mapGeneration,
            let result = decoder.retimed(prepared.result, decodedAt: prepared.decodedAt, now: now)
        else { return nil }
        return (result, prepared.agent)
    }

    /// A received batch's payload, decoded now.
    func decode(_ payload: [UInt8], agent: AgentID, map: FloorMap, now: Double) -> BatchDecodeResult {
        Self.decode(payload, agent: agent, decoder: decoder, map: map, now: now)
    }

    private static func decode(
        _ payload: [UInt8], agent: AgentID, decoder: BatchDecoder, map: FloorMap, now: Double
    ) -> BatchDecodeResult {
        decoder.decode(
            payload, topicAgent: agent, isKnownAgent: { map.agentIndex(of: $0.rawValue) != nil }, now: now)
    }

    // MARK: - Taking readings

    /// A batch that was new and reached the engine: its agent's index in the map, and its readings accepted.
    struct TakenBatch {
        var agentIndex: Int
        var accepted: Int
    }

    /// Takes a decoded batch of `agent` (the one its topic names); nil when it was refused (or a duplicate).
    mutating func take(
        _ result: BatchDecodeResult, agent: AgentID, map: FloorMap, now: Double, engine: inout LocatorEngine,
        calibration: inout LocatorCalibration, monitor: inout LocatorMonitor, actions: inout [Action]
    ) -> TakenBatch? {
        monitor.counters.batches += 1
        guard let batch = result.batch, let agentIndex = map.agentIndex(of: batch.agent.rawValue) else {
            monitor.reject(result.rejection ?? .unknownAgent, agent: agent, now: now, actions: &actions)
            return nil
        }
        if let duplicate = deduplicator.admit(batch) {
            monitor.reject(duplicate, agent: agent, now: now, actions: &actions)
            return nil
        }
        engine.agentHeard(agentIndex, at: now)
        monitor.batchTaken(sent: batch.sent, now: now)
        // The engine takes the batch's readings together (it looks their tags up a few dozen at a time), then each
        // is recorded and counted in its place among the batch's outcomes, as one taken alone would be.
        var readings: [RecordedReading] = []
        readings.reserveCapacity(batch.outcomes.count)
        for case .accepted(let wire) in batch.outcomes { readings.append(RecordedReading(wire, agent: batch.agent)) }
        let engineReadings = readings.map(Self.engineReading)
        let refusals = engine.ingest(engineReadings, agentIndex: agentIndex, now: now)
        // Counted per agent once per batch, not per reading: the endpoint's figures cost the hot path nothing more.
        let acceptedBefore = monitor.counters.accepted
        defer { monitor.accepted(monitor.counters.accepted - acceptedBefore, agentIndex: agentIndex) }
        var next = 0
        for outcome in batch.outcomes {
            switch outcome {
            case .rejected(let reason):
                monitor.reject(reason, agent: agent, now: now, actions: &actions)
            case .accepted:
                settle(
                    readings[next], as: engineReadings[next], refusal: refusals[next], agentIndex: agentIndex,
                    now: now, engine: engine, calibration: &calibration, monitor: &monitor, actions: &actions)
                next += 1
            }
        }
        return TakenBatch(agentIndex: agentIndex, accepted: readings.count)
    }

    /// Takes one reading of a recording, which holds what passed the wire checks and the deduplication: from the
    /// engine on the same way as a reading of a live batch. True when it reached the engine (a recording has no
    /// heartbeats: the reading is the sign of life its batch was).
    func take(
        _ reading: RecordedReading, map: FloorMap, share: FloorShare?, now: Double, engine: inout LocatorEngine,
        calibration: inout LocatorCalibration, monitor: inout LocatorMonitor, actions: inout [Action]
    ) -> Bool {
        guard reading.time.isFinite, now.isFinite else {
            monitor.reject(.nonFinite, agent: reading.agent, now: now.isFinite ? now : 0, actions: &actions)
            return false
        }
        guard let agentIndex = map.agentIndex(of: reading.agent.rawValue) else {
            monitor.reject(.unknownAgent, agent: reading.agent, now: now, actions: &actions)
            return false
        }
        guard share.hears(floor: map.agents[agentIndex].floor) else {
            monitor.counters.otherFloors += 1
            return false
        }
        engine.agentHeard(agentIndex, at: now)
        let engineReading = Self.engineReading(reading)
        let refusal = engine.ingest(engineReading, agentIndex: agentIndex, now: now)
        let acceptedBefore = monitor.counters.accepted
        settle(
            reading, as: engineReading, refusal: refusal, agentIndex: agentIndex, now: now, engine: engine,
            calibration: &calibration, monitor: &monitor, actions: &actions)
        monitor.accepted(monitor.counters.accepted - acceptedBefore, agentIndex: agentIndex)
        return true
    }

    private static func engineReading(_ reading: RecordedReading) -> Reading {
        Reading(
            tag: reading.tag,
            time: reading.time,
            rssi: reading.rssi,
            count: reading.count,
            variance: reading.variance,
            measuredPower: reading.power.map(Double.init)
        )
    }

    /// What follows a reading's ingestion, live or replayed: recorded when recording, handed to the calibration
    /// when it is another agent's beacon, and counted as taken or refused.
    private func settle(
        _ reading: RecordedReading, as engineReading: Reading, refusal: ReadingRejection?, agentIndex: Int,
        now: Double, engine: LocatorEngine, calibration: inout LocatorCalibration, monitor: inout LocatorMonitor,
        actions: inout [Action]
    ) {
        // The recording keeps every reading that passed the wire checks, so that a replay sees what the live
        // engine saw, stale or untracked ones included.
        if recordsReadings { actions.append(.record(JSONLines.line(reading))) }
        if let refusal {
            if refusal == .agentBeacon {
                monitor.counters.agentBeacons += 1
                calibration.take(engineReading, receiver: agentIndex, engine: engine)
            } else {
                monitor.reject(Self.reason(for: refusal), agent: reading.agent, now: now, actions: &actions)
            }
            return
        }
        monitor.counters.accepted += 1
    }

    static func reason(for refusal: ReadingRejection) -> RejectionReason {
        switch refusal {
        case .unknownAgent: .unknownAgent
        case .untrackedTag: .untrackedTag
        case .stale: .tooOldToTrack
        case .invalidValue: .nonFinite
        case .agentBeacon: .untrackedTag
        }
    }
}
