import BrokerFixture
import ControllerEmulator
import Foundation
import GATTPeripheral
import Glibc
import Testing
import WhereaboutsAdvertising
import WhereaboutsCore

extension AgentGATTTests {
    /// A built executable beside the agent (`whereabouts`, `whereabouts-locator`).
    static func sibling(_ name: String) throws -> String {
        ((try AgentBinary.path()) as NSString).deletingLastPathComponent + "/" + name
    }

    /// A one-floor map with the agent under test at (5, 5) and the peripheral's tag, named.
    static func map(agent: String) throws -> String {
        let tag = try peripheralBeacon.tag
        return """
            {"site": {"uuid": "\(site)", "name": "GATT test"},
             "floors": [{"major": 1, "name": "Ground", "height": 0, "outline": [[0, 0], [10, 0], [10, 10], [0, 10]]}],
             "zones": [{"floor": 1, "minor": 1, "name": "Room", "polygon": [[0, 0], [10, 0], [10, 10], [0, 10]]}],
             "agents": [{"id": "\(agent)", "floor": 1, "x": 5, "y": 5, "z": 2.4}],
             "tags": [{"id": "\(tag)", "name": "Badge"}]}
            """
    }

    @Test("agent, broker, locator and `whereabouts tag battery TAG`: the tool finds the agent and prints the level")
    func toolEndToEnd() async throws {
        let air = try await Air()
        let mapPath = air.scratch.path + "/map.json"
        try Self.map(agent: air.agentID).write(toFile: mapPath, atomically: true, encoding: .utf8)
        let broker = "mqtt://\(air.broker.host):\(air.broker.port)"
        try await Self.withAgent(air) { _, agent in
            let locator = try ChildProcess(
                executable: try Self.sibling("whereabouts-locator"),
                arguments: [
                    "--map", mapPath, "--broker", broker, "--client-id", "locator-gatt", "--log-level", "debug",
                ],
                outputPath: air.scratch.path + "/locator.out")
            defer { locator.send(SIGTERM) }
            let tag = try Self.peripheralBeacon.tag
            // The locator publishes the tag's retained position (naming the agent) once it has readings of it: the
            // peripheral advertises again and again until the tool finds the agent through it.
            var patience = Patience(.seconds(90))
            var output = ""
            var attempt = 0
            while true {
                guard !patience.isExhausted() else {
                    let log = (try? String(contentsOfFile: air.scratch.path + "/locator.out", encoding: .utf8)) ?? ""
                    throw HarnessError("the tool never printed a level:\n\(output)\nlocator:\n\(log)")
                }
                for _ in 0..<6 {
                    let before = air.relay.reportsForwarded
                    try await air.peripheral.readvertise()
                    try await waitUntil("the peripheral's report") { air.relay.reportsForwarded > before }
                }
                attempt += 1
                let outputPath = air.scratch.path + "/tool-\(attempt).out"
                let tool = try ChildProcess(
                    executable: try Self.sibling("whereabouts"),
                    arguments: ["tag", "battery", "\(tag)", "--site", site, "--broker", broker, "--deadline", "10"],
                    outputPath: outputPath)
                guard await tool.waitForExit(timeout: .seconds(60)) else {
                    tool.send(SIGKILL)
                    throw HarnessError("the tool did not exit")
                }
                output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
                if tool.exitCode == 0 { break }
                #expect(tool.exitCode == 1, "\(output)")
                #expect(output.contains("no agent hears \(tag)"), "\(output)")
            }
            #expect(output == "battery 87 % (agent \(air.agentID))\n", "\(agent.output)")
            // The locator heard the agent's result too: the level is on the tag's topic, retained, for Home Assistant.
            let levelPath = air.scratch.path + "/battery-level.out"
            let level = try ChildProcess(
                executable: "/usr/bin/mosquitto_sub",
                arguments: [
                    "-h", air.broker.host, "-p", "\(air.broker.port)", "-C", "1", "-W", "30",
                    "-t", "whereabouts/v1/\(site)/tags/\(tag)/battery_level",
                ],
                outputPath: levelPath)
            #expect(await level.waitForExit(timeout: .seconds(60)))
            #expect((try? String(contentsOfFile: levelPath, encoding: .utf8)) == "87\n")
            // The daily timer's command, with the site from the map as its settings (operator.env) give it: every
            // tag with a retained position, a line each.
            let allPath = air.scratch.path + "/tool-all.out"
            let all = try ChildProcess(
                executable: try Self.sibling("whereabouts"),
                arguments: ["tag", "battery", "--all", "--spread", "1", "--map", mapPath, "--broker", broker],
                outputPath: allPath)
            #expect(await all.waitForExit(timeout: .seconds(60)))
            #expect(all.exitCode == 0)
            let lines = (try? String(contentsOfFile: allPath, encoding: .utf8)) ?? ""
            #expect(lines == "\(tag): battery 87 % (agent \(air.agentID))\n", "\(agent.output)")
        }
    }
}
