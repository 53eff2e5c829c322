import Testing
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsCore
import WhereaboutsWire

@Suite("Batches")
struct BatchTests {
    let agent = AgentID("hall-1")

    @Test("one batch per window, seq from 0 up by one, epoch constant, empty windows as heartbeats")
    func sequencing() throws {
        let agent = try #require(agent)
        var sequencer = BatchSequencer(agent: agent, epoch: 1_764_475_200_123)
        var aggregator = WindowAggregator()
        _ = aggregator.add(sighting(3, rssi: -70), at: 1000.2)
        _ = aggregator.add(sighting(3, rssi: -72), at: 1000.4)
        let windows = aggregator.advance(to: 1002.1)
        let batches = windows.map { sequencer.batch(for: $0, sent: 1002.1) }
        #expect(batches.map(\.seq) == [0, 1])
        #expect(batches.allSatisfy { $0.epoch == 1_764_475_200_123 && $0.agent == agent })
        #expect(batches[0].readings.count == 1)
        #expect(batches[1].readings.isEmpty)
        let reading = try #require(batches[0].readings.first)
        #expect(reading.tag == tag(3))
        #expect(reading.count == 2)
        #expect(reading.rssi == -71)
        #expect(reading.time == 1001)
        #expect(reading.variance == 2)
        #expect(reading.power == -59)
        #expect(sequencer.nextSeq == 2)
    }

    @Test("the payload is a batch the locator's decoder accepts, readings and all")
    func decodable() throws {
        let agent = try #require(agent)
        var sequencer = BatchSequencer(agent: agent, epoch: 42)
        var aggregator = WindowAggregator()
        let telemetry = BeaconTelemetry(batteryMillivolts: 3000, temperatureCelsius: 23.5)
        for rssi in [-60, -61, -59, -60] {
            _ = aggregator.add(sighting(9, rssi: rssi, telemetry: telemetry), at: 500.5)
        }
        let flushed = aggregator.flush()
        let window = try #require(flushed)
        let batch = sequencer.batch(for: window, sent: 501)
        let result = BatchDecoder().decode(
            Array(batch.payload.utf8), topicAgent: agent, knownAgents: [agent], now: 501)
        let decoded = try #require(result.batch, "\(result)")
        #expect(decoded.epoch == 42)
        #expect(decoded.seq == 0)
        #expect(decoded.accepted.count == 1)
        #expect(decoded.accepted.first?.count == 4)
        #expect(decoded.accepted.first?.batteryMillivolts == 3000)
        #expect(decoded.accepted.first?.temperature == 23.5)
    }
}

@Suite("Batch outbox")
struct BatchOutboxTests {
    /// Publishes what the outbox offers, numbering message ids from `firstID`; returns (seq, id) pairs.
    func send(_ outbox: inout BatchOutbox, firstID: inout Int) -> [(seq: Int, id: Int)] {
        var sent: [(Int, Int)] = []
        while let entry = outbox.nextToSend() {
            outbox.sent(seq: entry.seq, messageID: firstID)
            sent.append((entry.seq, firstID))
            firstID += 1
        }
        return sent
    }

    @Test("nothing is sent while disconnected; on connection batches go in order within the in-flight window")
    func order() {
        var outbox = BatchOutbox(capacity: 10, inFlightLimit: 3)
        var id = 1
        for seq in 0..<5 { outbox.enqueue(seq: seq, payload: [UInt8(seq)]) }
        #expect(outbox.nextToSend() == nil)
        outbox.connectionEstablished()
        let first = send(&outbox, firstID: &id)
        #expect(first.map(\.seq) == [0, 1, 2])
        #expect(outbox.inFlight == 3)
        let released = outbox.acknowledged(messageID: first[1].id)
        #expect(released == 1)
        let more = send(&outbox, firstID: &id)
        #expect(more.map(\.seq) == [3])
        #expect(outbox.seqs == [0, 2, 3, 4])
    }

    @Test("an acknowledgement releases its batch; unknown ids are ignored")
    func ackRelease() {
        var outbox = BatchOutbox(capacity: 10, inFlightLimit: 8)
        var id = 100
        outbox.connectionEstablished()
        for seq in 0..<3 { outbox.enqueue(seq: seq, payload: []) }
        let sent = send(&outbox, firstID: &id)
        for pair in sent {
            let released = outbox.acknowledged(messageID: pair.id)
            #expect(released == pair.seq)
        }
        #expect(outbox.isEmpty)
        let unknown = outbox.acknowledged(messageID: 999)
        #expect(unknown == nil)
        #expect(outbox.acknowledged == 3)
    }

    @Test("after a reconnect, what was not acknowledged is sent again, in order")
    func resendAfterReconnect() {
        var outbox = BatchOutbox(capacity: 10, inFlightLimit: 4)
        var id = 1
        outbox.connectionEstablished()
        for seq in 0..<6 { outbox.enqueue(seq: seq, payload: []) }
        let sent = send(&outbox, firstID: &id)
        #expect(sent.map(\.seq) == [0, 1, 2, 3])
        _ = outbox.acknowledged(messageID: sent[0].id)
        outbox.connectionLost()
        #expect(outbox.inFlight == 0)
        #expect(outbox.nextToSend() == nil)
        // A late acknowledgement under an id from before the reconnect does not release anything.
        let stale = outbox.acknowledged(messageID: sent[2].id)
        #expect(stale == nil)
        outbox.connectionEstablished()
        let again = send(&outbox, firstID: &id)
        #expect(again.map(\.seq) == [1, 2, 3, 4])
        #expect(outbox.republished == 3)
        for pair in again { _ = outbox.acknowledged(messageID: pair.id) }
        let rest = send(&outbox, firstID: &id)
        #expect(rest.map(\.seq) == [5])
    }

    @Test("beyond its capacity the outbox drops the oldest batches and counts them")
    func dropOldest() {
        var outbox = BatchOutbox(capacity: 3)
        for seq in 0..<7 { outbox.enqueue(seq: seq, payload: []) }
        #expect(outbox.seqs == [4, 5, 6])
        #expect(outbox.dropped == 4)
        #expect(outbox.peak == 3)
        outbox.connectionEstablished()
        #expect(outbox.nextToSend()?.seq == 4)
    }

    @Test("a refused acknowledgement releases the batch and is counted; a discarded batch too")
    func refusals() {
        var outbox = BatchOutbox()
        outbox.connectionEstablished()
        outbox.enqueue(seq: 0, payload: [])
        outbox.enqueue(seq: 1, payload: [])
        outbox.sent(seq: 0, messageID: 5)
        let refused = outbox.acknowledged(messageID: 5, success: false)
        #expect(refused == 0)
        outbox.discard(seq: 1)
        #expect(outbox.isEmpty)
        #expect(outbox.refused == 2)
    }
}
