import Testing
import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

/// The journal's bytes: records, a torn tail, corrupt records, foreign files; and the outbox's changes that feed it.
@Suite("Outbox journal")
struct OutboxJournalTests {
    static let topic = "whereabouts/v1/site/agents/a1/readings"

    static func held(_ id: Int, _ payload: String? = nil) -> OutboxJournal.Record {
        .held(id: id, topic: topic, payload: payload ?? "{\"seq\":\(id)}", qos: .atLeastOnce, retain: false)
    }

    /// A journal of held 0..<5 with 1 and 3 released, and the end offset of each record.
    static func sample() -> (bytes: [UInt8], ends: [Int], records: [OutboxJournal.Record]) {
        let records: [OutboxJournal.Record] = [
            held(0), held(1), .released(id: 1), held(2), held(3, "ünïcode payload"), .released(id: 3), held(4),
        ]
        var bytes = OutboxJournal.header
        var ends: [Int] = []
        for record in records {
            bytes += OutboxJournal.encode(record)
            ends.append(bytes.count)
        }
        return (bytes, ends, records)
    }

    @Test("records read back as written; what was held and not released is pending, in order")
    func roundTrip() {
        let (bytes, _, records) = Self.sample()
        let contents = OutboxJournal.decode(bytes)
        #expect(contents.isJournal)
        #expect(contents.records == records)
        #expect(contents.damage.isEmpty)
        #expect(contents.validLength == bytes.count)
        #expect(contents.pending.map(\.id) == [0, 2, 4])
        #expect(contents.pending.map(\.topic) == Array(repeating: Self.topic, count: 3))
        #expect(contents.pending.first?.payload == "{\"seq\":0}")
    }

    @Test("a file cut at any byte keeps every whole record before the cut and reports the rest as a torn tail")
    func tornTailAtEveryCut() {
        let (bytes, ends, records) = Self.sample()
        for cut in OutboxJournal.header.count...bytes.count {
            let contents = OutboxJournal.decode(Array(bytes.prefix(cut)))
            let whole = ends.filter { $0 <= cut }.count
            #expect(contents.records == Array(records.prefix(whole)), "cut at \(cut)")
            let lastEnd = whole == 0 ? OutboxJournal.header.count : ends[whole - 1]
            #expect(contents.validLength == lastEnd, "cut at \(cut)")
            if cut == lastEnd {
                #expect(contents.damage.isEmpty, "cut at \(cut)")
            } else {
                #expect(contents.damage == [.init(offset: lastEnd, length: cut - lastEnd, kind: .tornTail)])
            }
        }
    }

    @Test("a flipped bit anywhere in a record in the middle costs that record only; later ones are read")
    func corruptRecordSkipped() {
        let (bytes, ends, records) = Self.sample()
        // Record 3 (held 2) spans ends[2]..<ends[3].
        for index in ends[2]..<ends[3] {
            for bit in [0, 3, 7] {
                var damaged = bytes
                damaged[index] ^= UInt8(1 << bit)
                let contents = OutboxJournal.decode(damaged)
                #expect(contents.records == records.enumerated().filter { $0.offset != 3 }.map(\.element))
                #expect(
                    contents.damage == [.init(offset: ends[2], length: ends[3] - ends[2], kind: .corrupt)],
                    "byte \(index) bit \(bit)")
                #expect(contents.pending.map(\.id) == [0, 4])
            }
        }
    }

    @Test("a lost release brings its batch back (a duplicate the locator drops), never loses another")
    func corruptRelease() {
        let (bytes, ends, _) = Self.sample()
        var damaged = bytes
        damaged[ends[1] + 12] ^= 0xFF  // inside `released 1`
        let contents = OutboxJournal.decode(damaged)
        #expect(contents.damage.map(\.kind) == [.corrupt])
        #expect(contents.pending.map(\.id) == [0, 1, 2, 4])
    }

    @Test("an empty file or a torn header is a new journal; other bytes are not a journal")
    func headers() {
        #expect(OutboxJournal.decode([]) == .init(isJournal: true, records: [], damage: [], validLength: 0))
        let torn = OutboxJournal.decode(Array(OutboxJournal.header.prefix(3)))
        #expect(torn.isJournal && torn.records.isEmpty && torn.damage.map(\.kind) == [.tornTail])
        #expect(!OutboxJournal.decode(Array("WHEREABOUTS_ID=hall-1\n".utf8)).isJournal)
        #expect(!OutboxJournal.decode(Array("WBOUTBX".utf8) + [2] + OutboxJournal.encode(Self.held(0))).isJournal)
    }

    @Test("random bytes after the header never trap; what is read is whole records, and every byte is accounted for")
    func randomBytes() {
        var generator = SplitMix64(seed: 13)
        let good = OutboxJournal.encode(Self.held(7))
        for round in 0..<300 {
            var bytes = OutboxJournal.header
            for _ in 0..<Int(generator.next() % 6) {
                if generator.next() % 2 == 0 {
                    bytes += good
                } else {
                    bytes += (0..<Int(generator.next() % 40)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
                    if generator.next() % 3 == 0 { bytes += OutboxJournal.marker }
                }
            }
            let contents = OutboxJournal.decode(bytes)
            #expect(contents.isJournal)
            #expect(contents.records.allSatisfy { $0 == Self.held(7) }, "round \(round)")
            let skipped = contents.damage.reduce(0) { $0 + $1.length }
            #expect(
                OutboxJournal.header.count + contents.records.count * good.count + skipped == bytes.count,
                "round \(round)")
        }
    }

    @Test("a compacted file holds exactly the pending entries")
    func compactedFile() {
        let pending = OutboxJournal.decode(Self.sample().bytes).pending
        let compacted = OutboxJournal.decode(OutboxJournal.file(holding: pending))
        #expect(compacted.pending == pending)
        #expect(compacted.records.count == 3)
    }

    // MARK: - The outbox's changes

    static func batch(_ seq: Int) -> Publication {
        Publication(topic: topics.events, payload: "\(seq)", qos: .atLeastOnce, retain: false)
    }

    @Test("an outbox that records changes lists takes, acknowledgements and drops; not the status, not retained ones")
    func outboxChanges() {
        var outbox = Outbox(policy: .untilAcknowledged(capacity: 2, inFlightLimit: 8), recordsChanges: true)
        outbox.enqueueFirst(
            Publication(topic: topics.locatorStatus, payload: "online", qos: .atLeastOnce, retain: true))
        outbox.enqueue(Publication(topic: topics.events, payload: "state", qos: .atLeastOnce, retain: true))
        for seq in 0..<3 { outbox.enqueue(Self.batch(seq)) }
        let ids = outbox.held.filter { !$0.publication.retain }.map(\.id)
        #expect(outbox.statistics.dropped == 1)
        let first = outbox.takeChanges()
        #expect(first.count == 4)
        let taken = first.prefix(3).compactMap { change -> String? in
            if case .held(let entry) = change { entry.publication.payload } else { nil }
        }
        #expect(taken == ["0", "1", "2"])
        guard case .released(let droppedID) = first[3] else {
            Issue.record("the drop is not listed: \(first)")
            return
        }
        #expect(!ids.contains(droppedID))
        #expect(outbox.takeChanges().isEmpty)
        // Sending changes nothing on disk; the acknowledgement does.
        var messageID = 1
        while let entry = outbox.nextToSend() {
            outbox.sent(id: entry.id, messageID: messageID)
            messageID += 1
        }
        #expect(outbox.takeChanges().isEmpty)
        for id in 1..<messageID { outbox.acknowledged(messageID: id, success: true) }
        #expect(outbox.takeChanges() == ids.map { .released(id: $0) })

        var quiet = Outbox(policy: .untilAcknowledged(capacity: 2, inFlightLimit: 8))
        quiet.enqueue(Self.batch(0))
        #expect(quiet.takeChanges().isEmpty)
    }

    @Test("a journal written from an outbox's changes holds exactly what the outbox holds, after any history")
    func journalMirrorsOutbox() {
        var generator = SplitMix64(seed: 7)
        var outbox = Outbox(policy: .untilAcknowledged(capacity: 20, inFlightLimit: 4), recordsChanges: true)
        var bytes = OutboxJournal.header
        var messageID = 1
        var connected = true
        var seq = 0
        for step in 0..<2_000 {
            switch generator.next() % 5 {
            case 0, 1:
                outbox.enqueue(Self.batch(seq))
                seq += 1
            case 2 where connected:
                if let entry = outbox.nextToSend() {
                    outbox.sent(id: entry.id, messageID: messageID)
                    messageID += 1
                }
            case 3:
                if let entry = outbox.held.first(where: { $0.messageID != nil }), let id = entry.messageID {
                    outbox.acknowledged(messageID: id, success: true)
                }
            default:
                connected.toggle()
                if !connected { outbox.connectionLost() }
            }
            for change in outbox.takeChanges() {
                switch change {
                case .held(let entry):
                    bytes += OutboxJournal.encode(
                        .held(
                            id: entry.id, topic: entry.publication.topic.name, payload: entry.publication.payload,
                            qos: .atLeastOnce, retain: false))
                case .released(let id):
                    bytes += OutboxJournal.encode(.released(id: id))
                }
            }
            if step % 25 == 0 {
                #expect(
                    OutboxJournal.decode(bytes).pending.map(\.payload) == outbox.held.map(\.publication.payload),
                    "step \(step)")
            }
        }
        #expect(OutboxJournal.decode(bytes).pending.map(\.payload) == outbox.held.map(\.publication.payload))
        #expect(outbox.statistics.dropped > 0)
        #expect(outbox.statistics.acknowledged > 0)
    }

    @Test("a service state restores journaled publications before its own and lists them as held")
    func restoreQueuesFirst() {
        var state = ServiceState(pipeline: JournaledPipeline())
        state.restore([Self.batch(100), Self.batch(101)])
        let restored = state.takeOutboxChanges()
        #expect(restored.count == 2)
        _ = state.take(1, at: ServiceTime(now: 0, monotonic: 0))
        _ = state.connected(at: ServiceTime(now: 0, monotonic: 0))
        var payloads: [String] = []
        while let entry = state.nextToSend() {
            payloads.append(entry.publication.payload)
            _ = state.sent(id: entry.id, result: .accepted(messageID: payloads.count), at: .init(now: 0, monotonic: 0))
        }
        #expect(payloads == ["online", "100", "101", "1"])
    }
}

/// The event pipeline, with a journaled outbox.
struct JournaledPipeline: ServicePipeline {
    typealias Input = Int
    var session: BrokerSession.Configuration {
        .init(
            statusTopic: topics.locatorStatus, outbox: .untilAcknowledged(capacity: 100, inFlightLimit: 8),
            journaled: true)
    }
    var subscriptions: [Subscription] { [] }
    func connected(at time: ServiceTime) -> [ServiceAction<Never>] { [] }
    func receive(topic: String, payload: [UInt8], at time: ServiceTime) -> [ServiceAction<Never>] { [] }
    func take(_ input: Int, at time: ServiceTime) -> [ServiceAction<Never>] {
        [.publish(Publication(topic: topics.events, payload: "\(input)", qos: .atLeastOnce, retain: false))]
    }
    func tick(at time: ServiceTime, outbox: Outbox) -> [ServiceAction<Never>] { [] }
    func stop(at time: ServiceTime) -> [ServiceAction<Never>] { [] }
}

/// What the locator makes of a restarted agent's journal: its batches, resent unchanged, are taken once each.
@Suite("Outbox journal and the locator's deduplication")
struct JournalDeduplicationTests {
    static let agent: AgentID = {
        guard let agent = AgentID("a1") else { preconditionFailure("bad test agent id") }
        return agent
    }()

    static func batch(epoch: Int, seq: Int, sent: Double) -> ReadingBatch {
        ReadingBatch(agent: agent, epoch: epoch, seq: seq, sent: sent, readings: [])
    }

    @Test("a restart's journaled batches, resent first with their own epoch and seq, are taken once, with no gap")
    func resentBatchesTakenOnce() throws {
        let firstEpoch = 1_764_475_200_000
        let start = Double(firstEpoch) / 1000
        // Run 1 windowed 10 batches; the locator got 0...4 before the outage (and 5 reached the broker, but its
        // acknowledgement was lost with the connection, so the journal still holds it).
        let run1 = (0..<10).map { Self.batch(epoch: firstEpoch, seq: $0, sent: start + Double($0)) }
        var journal = OutboxJournal.header
        for (index, batch) in run1.enumerated() {
            journal += OutboxJournal.encode(
                .held(id: index, topic: "t", payload: batch.payload, qos: .atLeastOnce, retain: false))
            if index < 5 { journal += OutboxJournal.encode(.released(id: index)) }
        }
        // Killed, restarted 60 s later: epoch 2; the journal's batches go out first, unchanged, then run 2's.
        let secondEpoch = firstEpoch + 60_000
        let resent = OutboxJournal.decode(journal).pending.map(\.payload)
        let run2 = (0..<3).map { Self.batch(epoch: secondEpoch, seq: $0, sent: start + 61 + Double($0)).payload }

        var deduplicator = BatchDeduplicator()
        var taken: [(Int, Int)] = []
        func deliver(_ payload: String) throws -> RejectionReason? {
            let decoded = try #require(
                BatchDecoder(tolerance: .init(futureSkew: 1e9, maximumAge: 1e9))
                    .decode(Array(payload.utf8), topicAgent: Self.agent, knownAgents: [Self.agent], now: start)
                    .batch)
            let verdict = deduplicator.admit(decoded)
            if verdict == nil { taken.append((decoded.epoch, decoded.seq)) }
            return verdict
        }
        for batch in run1.prefix(6) { #expect(try deliver(batch.payload) == nil) }
        #expect(resent.count == 5)
        #expect(try deliver(resent[0]) == .duplicateBatch)  // seq 5 again: dropped
        for payload in resent.dropFirst() { #expect(try deliver(payload) == nil) }
        for payload in run2 { #expect(try deliver(payload) == nil) }
        #expect(taken.map(\.0) == Array(repeating: firstEpoch, count: 10) + Array(repeating: secondEpoch, count: 3))
        #expect(taken.map(\.1) == Array(0..<10) + Array(0..<3))
        #expect(deduplicator.missing.isEmpty)

        // Why first: a journaled batch that came after the new run's first batch would be refused as a leftover.
        var late = BatchDeduplicator()
        _ = late.admit(agent: Self.agent, epoch: firstEpoch, seq: 4, sent: start + 4)
        _ = late.admit(agent: Self.agent, epoch: secondEpoch, seq: 0, sent: start + 61)
        #expect(late.admit(agent: Self.agent, epoch: firstEpoch, seq: 5, sent: start + 5) == .supersededEpoch)
    }
}
