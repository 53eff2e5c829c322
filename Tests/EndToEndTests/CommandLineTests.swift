import BrokerFixture
import Foundation
import Testing
import WhereaboutsAgent
import WhereaboutsLocator
import WhereaboutsSettings

/// Each program's `--help` against what it accepts: every flag in the usage is taken, every `WHEREABOUTS_*` name it
/// or the docs mention is taken from a file, and an unknown one is refused as before.
@Suite("Command lines: --help, flags and WHEREABOUTS_* names agree")
struct CommandLineTests {
    /// A program to ask: the executable and the words before its options.
    struct Program: CustomStringConvertible, Sendable {
        var executable: String
        var words: [String] = []
        var description: String { ([executable] + words).joined(separator: " ") }
    }

    static let services = [Program(executable: "whereabouts-agent"), Program(executable: "whereabouts-locator")]
    static let tool =
        ["sim", "replay", "evaluate", "render", "watch", "web", "free-port", "calibrate", "tag"].map {
            Program(executable: "whereabouts", words: [$0])
        } + [Program(executable: "whereabouts", words: ["map", "check"])]
    /// The programs that read an `--env-file`.
    static let withFiles = services + [Program(executable: "whereabouts", words: ["web"])]

    /// Runs `program` with `arguments`; its exit status and what it wrote (standard output and error together).
    func run(_ program: Program, _ arguments: [String]) async throws -> (status: Int32?, output: String) {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let log = scratch.file("output.log")
        let process = try ChildProcess(
            executable: BuiltProducts.path(program.executable), arguments: program.words + arguments, outputPath: log)
        #expect(await process.waitForExit(timeout: .seconds(30)), "\(program) did not stop")
        return (process.exitCode, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    /// The flags a usage lists: lines that start with two spaces and `--`.
    static func flags(inUsage usage: String) -> [String] {
        usage.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("  --") else { return nil }
            return String(line.dropFirst(4).prefix { $0.isLetter || $0.isNumber || $0 == "-" })
        }
    }

    /// Every `WHEREABOUTS_*` name in `text`.
    static func environmentNames(in text: String) -> Set<String> {
        var names: Set<String> = []
        var rest = text[...]
        while let range = rest.range(of: "WHEREABOUTS_") {
            let name = rest[range.upperBound...].prefix { $0.isUppercase || $0.isNumber || $0 == "_" }
            if let last = name.last, last != "_" { names.insert("WHEREABOUTS_" + name) }
            rest = rest[range.upperBound...]
        }
        return names
    }

    @Test("the services print exactly the usage their table makes, which lists every flag and name of the table")
    func servicesPrintTheirTables() async throws {
        for (program, interface) in zip(Self.services, [AgentSettings.interface, LocatorCommandLine.interface]) {
            let (status, output) = try await run(program, ["--help"])
            #expect(status == 0, "\(program)")
            #expect(output == interface.usage + "\n", "\(program)")
            #expect(interface.problems.isEmpty, "\(program): \(interface.problems)")
            let listed = Set(Self.flags(inUsage: output))
            for setting in interface.table {
                if case .secret = setting.kind {
                    #expect(output.contains("  \(setting.key ?? "?") "), "\(program) --help lacks \(setting.name)")
                } else {
                    #expect(listed.contains(setting.name), "\(program) --help lacks --\(setting.name)")
                }
                if let key = setting.key { #expect(output.contains(key), "\(program) --help lacks \(key)") }
            }
            #expect(listed.isSuperset(of: ["env-file", "config", "help"]), "\(program)")
        }
    }

    @Test("every flag a program's --help lists is one it takes", arguments: services + tool)
    func helpedFlagsAreTaken(program: Program) async throws {
        let (status, usage) = try await run(program, ["--help"])
        #expect(status == 0, "\(program): \(usage)")
        let flags = Self.flags(inUsage: usage)
        #expect(flags.contains("help"), "\(program)")
        for flag in flags where flag != "help" {
            // The unknown flag after it makes the run stop at parsing, whatever the flag does.
            let (status, output) = try await run(program, ["--\(flag)=x", "--no-such-flag"])
            #expect(status == 2, "\(program) --\(flag): \(output)")
            #expect(!output.contains("unknown option --\(flag) "), "\(program) does not take --\(flag)")
        }
    }

    @Test("every WHEREABOUTS_* name a program's --help shows is taken from an --env-file", arguments: withFiles)
    func helpedNamesAreTaken(program: Program) async throws {
        let (_, usage) = try await run(program, ["--help"])
        let names = Self.environmentNames(in: usage)
        #expect(names.contains("WHEREABOUTS_BROKER"), "\(program)")
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        // Empty values count as not set, so the run stops at the first required setting, after reading the file.
        let file = scratch.file("settings.env")
        try names.sorted().map { "\($0)=\n" }.joined().write(toFile: file, atomically: true, encoding: .utf8)
        let (status, output) = try await run(program, ["--env-file", file])
        #expect(status == 2, "\(program): \(output)")
        #expect(output.contains("is required"), "\(program): \(output)")
        #expect(!output.contains("unknown setting"), "\(program): \(output)")
    }

    @Test("an unknown WHEREABOUTS_* name in a file is refused with its line, exit status 2", arguments: withFiles)
    func unknownNamesAreRefused(program: Program) async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.file("settings.env")
        try "WHEREABOUTS_BROKER=mqtt://127.0.0.1:1\nWHEREABOUTS_BROKR=x\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        let (status, output) = try await run(program, ["--env-file", file])
        #expect(status == 2, "\(program): \(output)")
        #expect(output.contains("\(file):2: unknown setting WHEREABOUTS_BROKR"), "\(program): \(output)")
    }

    @Test("every WHEREABOUTS_* name the docs and deploy files mention is one a program takes")
    func documentedNamesAreTaken() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        // The pages and the files a service is installed with; the account scripts' own variables
        // (WHEREABOUTS_PASSWORD_OUT, …) are theirs, not settings.
        var documents = ["README.md"]
        for folder in ["docs", "deploy/agent", "deploy/locator"] {
            let names = try FileManager.default.contentsOfDirectory(atPath: root + "/" + folder)
            documents += names.filter { !$0.hasSuffix(".png") && !$0.hasSuffix(".svg") }.sorted().map {
                folder + "/" + $0
            }
        }
        // `whereabouts web` declares its settings in the executable: its --help is its table.
        let (_, webUsage) = try await run(Program(executable: "whereabouts", words: ["web"]), ["--help"])
        let taken = Set((AgentSettings.interface.table + LocatorCommandLine.interface.table).compactMap(\.key))
            .union(Self.environmentNames(in: webUsage))
        var mentioned: Set<String> = []
        for document in documents {
            let text = try String(contentsOfFile: root + "/" + document, encoding: .utf8)
            let names = Self.environmentNames(in: text)
            mentioned.formUnion(names)
            #expect(names.isSubset(of: taken), "\(document) mentions \(names.subtracting(taken).sorted())")
        }
        #expect(mentioned.count > 20, "the docs were read")
        // The agent's page describes the agent's settings only.
        let agentPage = try String(contentsOfFile: root + "/docs/agent.md", encoding: .utf8)
        let agentNames = Set(AgentSettings.interface.table.compactMap(\.key))
        #expect(Self.environmentNames(in: agentPage).isSubset(of: agentNames))
    }
}
