import BrokerFixture
import Foundation
import Testing

/// `whereabouts map check` and `render --plan` as a user runs them: the accuracy to expect, and warnings that leave
/// the exit status alone.
@Suite("The map check's expected accuracy")
struct MapCheckPlanTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    func run(_ arguments: [String], scratch: ScratchDirectory) async throws -> (Int32?, String) {
        let log = scratch.file("whereabouts-\(UUID().uuidString).log")
        let process = try ChildProcess(
            executable: BuiltProducts.path("whereabouts"), arguments: arguments, outputPath: log)
        #expect(await process.waitForExit(timeout: .seconds(60)))
        return (process.exitCode, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    @Test("the demo office: a plan line per floor, each zone's expected accuracy, the small rooms warned of, exit 0")
    func demoOffice() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let (status, output) = try await run(
            ["map", "check", Self.repositoryRoot + "/maps/demo-office.json"], scratch: scratch)
        #expect(status == 0, "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.count { $0.hasPrefix("  plan     expected accuracy median ") } == 2, "\(output)")
        #expect(lines.count { $0.hasPrefix("  zone ") && $0.contains(", expected accuracy ") } == 14, "\(output)")
        // The two focus rooms are 4 m across, and 2.4-2.6 m is expected in them.
        #expect(lines.contains { $0.hasPrefix(#"warning  floor 2, zone "Focus Room 1": expected accuracy "#) })
        #expect(lines.contains { $0.hasPrefix(#"warning  floor 2, zone "Focus Room 2": expected accuracy "#) })
        #expect(lines.count { $0.hasPrefix("warning") } == 2, "\(output)")
    }

    @Test("two agents in a flat: most of it heard by fewer than three, warned of, and the heat map drawn")
    func sparse() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let map = scratch.file("flat.json")
        try Data(
            """
            {"site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Flat"},
             "floors": [{"major": 1, "name": "Flat", "outline": [[0,0],[12,0],[12,8],[0,8]]}],
             "zones": [{"floor": 1, "minor": 1, "name": "Kitchen", "polygon": [[0,0],[3,0],[3,3],[0,3]]}],
             "agents": [{"id": "a", "floor": 1, "x": 2, "y": 2, "z": 2}, {"id": "b", "floor": 1, "x": 10, "y": 6, "z": 2}]}
            """.utf8
        ).write(to: URL(fileURLWithPath: map))
        let (status, output) = try await run(["map", "check", map], scratch: scratch)
        #expect(status == 0, "\(output)")
        #expect(
            output.contains("warning  floor 1: 100 % of the free area is heard by fewer than 3 agents"), "\(output)")
        #expect(output.contains(#"warning  floor 1, zone "Kitchen": expected accuracy "#), "\(output)")
        let svg = scratch.file("plan.svg")
        let (drawn, drawing) = try await run(["render", "--map", map, "--plan", "--out", svg], scratch: scratch)
        #expect(drawn == 0, "\(drawing)")
        let text = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(text.contains(#"class="plan-cell""#) && text.contains("100 % of the free area heard by fewer than 3"))
    }
}
