import CommandLineSupport
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsSettings
import WhereaboutsWire

/// `whereabouts-bench batches`: readings per CPU second through the locator's batch decoder, the fast path against
/// the JSON tree it replaces for well-formed batches, on the same payloads in the same run.
enum BatchDecodeBench {
    static let table: [Setting] = [.value("seconds"), .value("readings")]

    static func run(_ settings: Settings) throws -> ExitStatus {
        let seconds = try settings.number("seconds") ?? 2
        let perBatch = try settings.integer("readings") ?? 50
        guard let agent = AgentID("bench-1"), let site = BeaconUUID("f7826da6-4fa2-4e98-8024-bc5b71e0893e") else {
            throw RuntimeError("bad bench identifiers")
        }
        let now = 1_767_225_600.0
        var generator = SplitMix64(seed: 11)
        let payloads = (0..<200).map { seq -> [UInt8] in
            let readings = (0..<perBatch).map { index in
                ReadingBatch.Reading(
                    tag: .iBeacon(uuid: site, major: 1000, minor: UInt16(index)), time: now - 0.5,
                    rssi: (-60 - Double.random(in: 0...30, using: &generator)).rounded(toDecimals: 2),
                    count: Int.random(in: 1...12, using: &generator),
                    variance: Double.random(in: 0...20, using: &generator).rounded(toDecimals: 2), power: -59)
            }
            let batch = ReadingBatch(agent: agent, epoch: 1_767_225_000_000, seq: seq, sent: now, readings: readings)
            return Array(batch.payload.utf8)
        }
        let decoder = BatchDecoder()
        func measure(_ decode: ([UInt8]) -> BatchDecodeResult) throws -> Double {
            var readings = 0
            let start = Measure.threadCPUTime()
            var elapsed = 0.0
            while elapsed < seconds {
                for payload in payloads {
                    guard let batch = decode(payload).batch else { throw RuntimeError("a bench batch was refused") }
                    readings += batch.outcomes.count
                }
                elapsed = Measure.threadCPUTime() - start
            }
            return Double(readings) / elapsed
        }
        let tree = try measure {
            decoder.decodeThroughTree($0, topicAgent: agent, isKnownAgent: { $0 == agent }, now: now)
        }
        let fast = try measure { decoder.decode($0, topicAgent: agent, isKnownAgent: { $0 == agent }, now: now) }
        Measure.emit([
            ("figure", .string("batch-decode")), ("readings_per_batch", .number(Double(perBatch))),
            ("tree_readings_per_cpu_second", .number(tree)), ("readings_per_cpu_second", .number(fast)),
            ("speedup", .number(fast / tree)),
        ])
        return .success
    }
}
