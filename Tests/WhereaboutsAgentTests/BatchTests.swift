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
