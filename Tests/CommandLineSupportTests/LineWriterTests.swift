import CommandLineSupport
import Foundation
import Testing

/// A file in a fresh scratch directory.
func scratchFile(_ name: String) throws -> String {
    let directory = NSTemporaryDirectory() + "whereabouts-cls-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    return directory + "/" + name
}

func contents(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

@Suite("Line writer")
struct LineWriterTests {
    @Test("a write reaches the file at once, with no buffering a crash could lose")
    func unbuffered() throws {
        let path = try scratchFile("record.jsonl")
        let writer = try LineWriter(appendingTo: path)
        try writer.write("a\nb\n")
        #expect(try contents(path) == "a\nb\n")
        try writer.write("c\n")
        #expect(try contents(path) == "a\nb\nc\n")
    }

    @Test(
        "opening to append cuts off a torn last line and says how many bytes",
        arguments: [
            ("one\ntwo\nthr", "one\ntwo\n", 3), ("one\n", "one\n", 0), ("torn", "", 4), ("", "", 0),
        ])
    func tornLine(before: String, after: String, cut: Int) throws {
        let path = try scratchFile("record.jsonl")
        try before.write(toFile: path, atomically: true, encoding: .utf8)
        let writer = try LineWriter(appendingTo: path)
        #expect(writer.repairedBytes == cut)
        #expect(try contents(path) == after)
        try writer.write("next\n")
        #expect(try contents(path) == after + "next\n")
    }

    @Test("a torn line longer than the look-back chunk is cut back to the last newline")
    func longTornLine() throws {
        let path = try scratchFile("record.jsonl")
        let torn = String(repeating: "x", count: 10_000)
        try ("kept\n" + torn).write(toFile: path, atomically: true, encoding: .utf8)
        let writer = try LineWriter(appendingTo: path)
        #expect(writer.repairedBytes == 10_000)
        #expect(try contents(path) == "kept\n")
    }

    @Test("reopen follows the path after the file was moved away (logrotate)")
    func reopen() throws {
        let path = try scratchFile("record.jsonl")
        let writer = try LineWriter(appendingTo: path)
        try writer.write("before\n")
        try FileManager.default.moveItem(atPath: path, toPath: path + ".1")
        try writer.write("still the old file\n")
        try writer.reopen()
        try writer.write("after\n")
        #expect(try contents(path + ".1") == "before\nstill the old file\n")
        #expect(try contents(path) == "after\n")
    }

    @Test("replacing truncates; a path that cannot be opened names itself")
    func replacingAndErrors() throws {
        let path = try scratchFile("truth.jsonl")
        try "old\n".write(toFile: path, atomically: true, encoding: .utf8)
        let writer = try LineWriter(replacing: path)
        try writer.write("new\n")
        #expect(try contents(path) == "new\n")
        #expect(throws: RuntimeError.self) { try LineWriter(appendingTo: "/nonexistent-dir/x.jsonl") }
        do {
            _ = try LineWriter(appendingTo: "/nonexistent-dir/x.jsonl")
        } catch {
            #expect(error.message.contains("/nonexistent-dir/x.jsonl"))
        }
    }
}

@Suite("Scaled clock")
struct ScaledClockTests {
    @Test("scales from its origin and refuses scales and origins out of range")
    func scaling() throws {
        let origin = Date().timeIntervalSince1970 - 10
        let clock = try ScaledClock(scale: 10, origin: origin)
        let now = clock.now()
        #expect(now - origin > 99 && now - origin < 101)
        #expect(throws: UsageError.self) { try ScaledClock(scale: 0, origin: nil) }
        #expect(throws: UsageError.self) { try ScaledClock(scale: 1001, origin: nil) }
        #expect(throws: UsageError.self) { try ScaledClock(scale: 1, origin: origin - 100_000) }
    }
}
