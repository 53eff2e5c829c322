import Foundation
import Testing
import WhereaboutsAdvertising

/// The btsnoop times we write are the times BlueZ's own reader prints: `btmon -r FILE` (Debian's `bluez`, installed
/// by scripts/bootstrap.sh). A missing btmon fails the test: it is a dependency of the suite, not an option.
@Suite("btsnoop files as btmon reads them")
struct BtmonAgreementTests {
    /// Runs `btmon -T -r path` in UTC and returns what it printed.
    static func btmon(reading path: String) throws -> String {
        let candidates = ["/usr/bin/btmon", "/usr/sbin/btmon", "/bin/btmon"]
        guard let executable = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BtmonMissing()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-T", "-r", path]
        process.environment = ["TZ": "UTC", "PATH": "/usr/bin:/bin"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    struct BtmonMissing: Error, CustomStringConvertible {
        var description: String { "btmon is not installed: run scripts/bootstrap.sh (Debian package bluez)" }
    }

    @Test(
        "a file written for a known Unix time is read by btmon as that UTC time",
        arguments: [BtsnoopDatalink.monitor, .hciUART])
    func btmonReadsOurTimes(datalink: BtsnoopDatalink) throws {
        // 2025-01-01T00:00:00.123456Z and 2026-11-30T16:13:37.5Z.
        let times = [1_735_689_600.123456, 1_796_055_217.5]
        let packets = times.map { BtsnoopPacket(time: $0, event: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]) }
        let path = NSTemporaryDirectory() + "whereabouts-btmon-\(UUID().uuidString).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(BtsnoopWriter(datalink: datalink).file(packets)).write(to: URL(fileURLWithPath: path))
        let printed = try Self.btmon(reading: path)
        #expect(printed.contains("2025-01-01 00:00:00.123456"), "btmon printed:\n\(printed)")
        #expect(printed.contains("2026-11-30 16:13:37.500000"), "btmon printed:\n\(printed)")
        // And our reader gives the same times back.
        let read = try BtsnoopReader.events(in: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(read.map(\.time) == times)
    }
}
