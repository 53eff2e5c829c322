import BrokerFixture
import Foundation
import Glibc
import Testing

/// What the programs that read settings files make of files that are not what they should be, run as real
/// processes: a FIFO once blocked the locator forever (its open waits for a writer that never comes), and a key given
/// twice silently took the last value.
@Suite("Settings files: FIFOs and repeated keys are refused, exit status 2")
struct SettingsFileTests {
    /// Runs `program`; its exit status and output. A program still running after 30 s is killed and reported: the
    /// old behaviour on a FIFO was to wait forever.
    func run(_ program: CommandLineTests.Program, _ arguments: [String]) async throws -> (
        status: Int32?, output: String
    ) {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let log = scratch.file("output.log")
        let process = try ChildProcess(
            executable: BuiltProducts.path(program.executable), arguments: program.words + arguments, outputPath: log)
        let exited = await process.waitForExit(timeout: .seconds(30))
        if !exited {
            process.send(SIGKILL)
            _ = await process.waitForExit(timeout: .seconds(5))
        }
        #expect(exited, "\(program) \(arguments) did not stop within 30 s")
        return (process.exitCode, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    @Test(
        "a FIFO given as --config or --env-file is refused at once, naming it",
        arguments: CommandLineTests.withFiles, ["--config", "--env-file"])
    func fifoIsRefused(program: CommandLineTests.Program, flag: String) async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let fifo = scratch.file("settings.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let (status, output) = try await run(program, ["--broker", "mqtt://127.0.0.1:1", flag, fifo])
        #expect(status == 2, "\(program) \(flag): \(output)")
        #expect(output.contains("\(fifo) is not a regular file"), "\(program) \(flag): \(output)")
    }

    @Test("a FIFO given as the locator's --map is refused at once, naming it")
    func fifoMapIsRefused() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let fifo = scratch.file("map.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let (status, output) = try await run(
            CommandLineTests.Program(executable: "whereabouts-locator"),
            ["--map", fifo, "--broker", "mqtt://127.0.0.1:1"])
        #expect(status == 2, "\(output)")
        #expect(output.contains("\(fifo) is not a regular file"), "\(output)")
    }

    @Test(
        "a key given twice in a settings file is refused, naming the key and both lines",
        arguments: CommandLineTests.withFiles)
    func repeatedKeyIsRefused(program: CommandLineTests.Program) async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.file("settings.env")
        try "# broker\nWHEREABOUTS_BROKER=mqtt://127.0.0.1:1\n\nexport WHEREABOUTS_BROKER = mqtt://127.0.0.1:2\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        for flag in ["--config", "--env-file"] {
            let (status, output) = try await run(program, [flag, file])
            #expect(status == 2, "\(program) \(flag): \(output)")
            #expect(
                output.contains("\(file):4: WHEREABOUTS_BROKER is given twice, first on line 2"),
                "\(program) \(flag): \(output)")
        }
    }

    @Test("--lease-time without --role auto is refused, saying why, from a flag or a file")
    func leaseTimeNeedsRoleAuto() async throws {
        let locator = CommandLineTests.Program(executable: "whereabouts-locator")
        let map = try Fixtures.path("corridor.json")
        for role in [[], ["--role", "single"]] {
            let (status, output) = try await run(
                locator, ["--map", map, "--broker", "mqtt://127.0.0.1:1", "--lease-time", "5"] + role)
            #expect(status == 2, "\(role): \(output)")
            #expect(
                output.contains("--lease-time is only for a pair of locators (--role auto)"), "\(role): \(output)")
        }
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.file("locator.conf")
        try "WHEREABOUTS_LEASE_TIME=5\n".write(toFile: file, atomically: true, encoding: .utf8)
        let (status, output) = try await run(
            locator, ["--map", map, "--broker", "mqtt://127.0.0.1:1", "--config", file])
        #expect(status == 2, "\(output)")
        #expect(output.contains("WHEREABOUTS_LEASE_TIME in \(file) is only for a pair of locators"), "\(output)")
    }
}
