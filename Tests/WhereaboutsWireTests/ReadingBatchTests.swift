import Testing
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsWire

@Suite("Reading batch encoding")
struct ReadingBatchTests {
    static let golden =
        #"{"v":1,"agent":"hall-1","epoch":1764475200123,"seq":42,"sent":1764475201,"readings":["#
        + #"{"tag":"ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-7","t":1764475200.5,"rssi":-67.5,"n":9,"var":4.2,"#
        + #""power":-59},{"tag":"eddystone-00112233445566778899-aabbccddeeff","t":1764475200.75,"rssi":-80,"#
        + #""battery_mv":2950,"temp_c":21.5}]}"#

    @Test("writes the contract's example byte for byte, members in fixed order")
    func encodesGolden() {
        #expect(WireFixtures.sampleBatch.payload == Self.golden)
    }

    @Test("decodes what it encodes, every reading accepted and equal")
    func roundTrips() throws {
        let batch = WireFixtures.sampleBatch
        let decoded = try #require(WireFixtures.decode(batch.payload).batch)
        #expect(decoded.agent == batch.agent)
        #expect(decoded.epoch == batch.epoch)
        #expect(decoded.seq == batch.seq)
        #expect(decoded.sent == batch.sent)
        #expect(decoded.accepted == batch.readings)
        #expect(decoded.rejections.isEmpty)
    }

    @Test("omits n when 1 and optional members when absent")
    func omitsDefaults() {
        let reading = ReadingBatch.Reading(tag: WireFixtures.tag, time: 10.25, rssi: -70)
        #expect(
            JSONWriter().string(reading.json)
                == #"{"tag":"ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-7","t":10.25,"rssi":-70}"#)
    }

    @Test("round-trips 1,000 seeded random batches")
    func randomRoundTrips() throws {
        let seed: UInt64 = 0xBA7C_0001
        print("batch round-trip seed: \(seed)")
        var generator = SplitMix64(seed: seed)
        let now = WireFixtures.now
        for _ in 0..<1000 {
            var readings: [ReadingBatch.Reading] = []
            for _ in 0..<Int.random(in: 0...20, using: &generator) {
                let tag: TagIdentity =
                    Bool.random(using: &generator)
                    ? .iBeacon(
                        uuid: WireFixtures.site, major: .random(in: 0...UInt16.max, using: &generator),
                        minor: .random(in: 0...UInt16.max, using: &generator))
                    : .address(UInt64.random(in: 0...0xFFFF_FFFF_FFFF, using: &generator))
                readings.append(
                    .init(
                        tag: tag, time: now - Double.random(in: 0...59, using: &generator),
                        rssi: Double.random(in: -127...20, using: &generator),
                        count: Int.random(in: 1...50, using: &generator),
                        variance: Bool.random(using: &generator) ? Double.random(in: 0...100, using: &generator) : nil,
                        power: Bool.random(using: &generator) ? Int.random(in: -127...20, using: &generator) : nil))
            }
            let batch = ReadingBatch(
                agent: WireFixtures.agent, epoch: Int.random(in: 0...Int(now * 1000), using: &generator),
                seq: Int.random(in: 0...(1 << 40), using: &generator), sent: now, readings: readings)
            let decoded = try #require(WireFixtures.decode(batch.payload).batch)
            #expect(decoded.accepted == batch.readings)
            #expect(decoded.epoch == batch.epoch && decoded.seq == batch.seq)
        }
    }
}
