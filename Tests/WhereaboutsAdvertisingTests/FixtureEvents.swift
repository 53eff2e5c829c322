import Foundation
import TestFixtures
import Testing

/// One event of the shared fixture hci-events/hci_events.jsonl (Tests/TestFixtures) with its independent decoding.
struct FixtureEvent: Sendable, CustomTestStringConvertible {
    struct Report: Sendable {
        var address: String
        var addressType: UInt8
        var eventType: UInt16
        var rssi: Int
        var data: [UInt8]
    }

    var line: Int
    var name: String
    var bytes: [UInt8]
    var subevent: Int
    var kinds: [String]
    var reports: [Report]

    var testDescription: String { "line \(line) \(name)" }

    /// Every fixture event, loaded once from the test bundle.
    static let all: [FixtureEvent] = load()

    /// The events whose `test` field is `name`.
    static func named(_ name: String) -> FixtureEvent? { all.first { $0.name == name } }

    private static func load() -> [FixtureEvent] {
        // A missing file leaves no events, which the fixture's count test reports.
        guard let text = try? TestFixtures.text("hci-events/hci_events.jsonl") else { return [] }
        var events: [FixtureEvent] = []
        for (index, line) in text.split(separator: "\n").enumerated() {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let hex = object["hex"] as? String, let bytes = bytes(hex: hex),
                let subevent = object["subevent"] as? Int, let kinds = object["kinds"] as? [String],
                let reports = object["reports"] as? [[String: Any]]
            else { continue }
            let name = (object["test"] as? String) ?? (object["source_file"] as? String) ?? "?"
            events.append(
                FixtureEvent(
                    line: index + 1,
                    name: name,
                    bytes: bytes,
                    subevent: subevent,
                    kinds: kinds,
                    reports: reports.compactMap { report in
                        guard let address = report["addr"] as? String, let type = report["addr_type"] as? Int,
                            let eventType = report["evt_type"] as? Int, let rssi = report["rssi"] as? Int,
                            let adHex = report["ad_hex"] as? String, let data = Self.bytes(hex: adHex)
                        else { return nil }
                        return Report(
                            address: address,
                            addressType: UInt8(type),
                            eventType: UInt16(eventType),
                            rssi: rssi,
                            data: data
                        )
                    }
                )
            )
        }
        return events
    }

    /// Bytes from hex text; nil if malformed.
    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        return bytes
    }
}

/// Bytes from hex text written in a test; spaces are ignored. Traps on a typo, which is a bug in the test.
func hex(_ text: String) -> [UInt8] {
    guard let bytes = FixtureEvent.bytes(hex: text.replacingOccurrences(of: " ", with: "")) else {
        preconditionFailure("bad hex in test: \(text)")
    }
    return bytes
}
