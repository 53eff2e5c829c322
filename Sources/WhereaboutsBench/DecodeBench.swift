import CommandLineSupport
import WhereaboutsAdvertising
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsSettings

/// `whereabouts-bench decode`: HCI events per CPU second through the agent's decoding, single thread.
///
/// The events are the captured fixture (287 real LE advertising events, legacy and extended), decoded again and
/// again by a `SightingDecoder` (HCI event parser, AD structures, iBeacon/AltBeacon/Eddystone frames, telemetry)
/// that selects every beacon and accepts the 24 over-long legacy reports, so that it does the same work as the
/// bluetooth-data-tools reference (`scripts/bench/decode_bluetooth_data_tools.py`) on the same bytes.
enum DecodeBench {
    static let table: [Setting] = [.value("fixture"), .value("seconds")]

    static func run(_ settings: Settings) throws -> ExitStatus {
        guard let fixture = settings.value("fixture") else { throw UsageError("--fixture FILE is required") }
        let minimumSeconds = try settings.number("seconds") ?? 3
        let events = try loadEvents(fixture)
        guard !events.isEmpty else { throw RuntimeError("\(fixture) holds no events") }

        let filter = SightingFilter(constraints: [], selectsAllBeacons: true)
        var decoder = SightingDecoder(filter: filter, parser: HCIEventParser(maximumLegacyDataLength: 251))
        var sightingsPerPass = 0
        for event in events { sightingsPerPass += decoder.sightings(in: event, framing: .h4, time: 0).count }

        var passes = 0
        var sightings = 0
        let start = Measure.threadCPUTime()
        var elapsed = 0.0
        var time = 0.0
        while elapsed < minimumSeconds {
            for _ in 0..<100 {
                for event in events {
                    time += 0.001
                    sightings += decoder.sightings(in: event, framing: .h4, time: time).count
                }
            }
            passes += 100
            elapsed = Measure.threadCPUTime() - start
        }
        let eventCount = passes * events.count
        Measure.emit([
            ("figure", .string("decode")),
            ("events_per_pass", .number(Double(events.count))),
            ("sightings_per_pass", .number(Double(sightingsPerPass))),
            ("events", .number(Double(eventCount))),
            ("sightings", .number(Double(sightings))),
            ("cpu_seconds", .number(elapsed)),
            ("events_per_cpu_second", .number(Double(eventCount) / elapsed)),
        ])
        return .success
    }

    /// The `hex` of every line of the fixture, as bytes (H4: starting with the 0x04 packet type).
    static func loadEvents(_ path: String) throws -> [[UInt8]] {
        let bytes = try FileAccess.read(path)
        var events: [[UInt8]] = []
        for line in bytes.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            guard case .object(let object) = try JSONParser().parse(Array(line)),
                case .string(let hex) = object["hex"], let event = decodeHex(hex)
            else { throw RuntimeError("\(path): a line without a valid \"hex\"") }
            events.append(event)
        }
        return events
    }

    private static func decodeHex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func nibble(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
