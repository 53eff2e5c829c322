import BrokerFixture
import Foundation
import Glibc
import Testing
import WhereaboutsCore
import WhereaboutsMQTT
import WhereaboutsWire

/// `whereabouts sim --broker` as a process: SIGTERM ends it in order. It once ignored SIGTERM, because a libmosquitto
/// thread per simulated agent took the signal while the process meant to read it through a signalfd
/// (SignalWatcher now writes it to a pipe from a handler).
@Suite("whereabouts sim --broker and SIGTERM", .serialized)
struct SimSignalTests {
    @Test("SIGTERM ends sim --broker with status 0, every simulated agent saying offline")
    func sigtermEndsTheSimulator() async throws {
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let map = try Fixtures.map("corridor.json")
        let prefix = Topics(site: map.site.uuid).prefix
        let collector = try Collector(broker: broker, filters: ["\(prefix)/agents/+/#"])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await collector.run() }
            defer { group.cancelAll() }
            try await collector.waitUntilSubscribed()
            let log = scratch.file("sim.log")
            let sim = try ChildProcess(
                executable: BuiltProducts.path("whereabouts"),
                arguments: [
                    "sim", "--map", try Fixtures.path("corridor.json"), "--tags", "3", "--duration", "3600", "--seed",
                    "1", "--broker", "mqtt://127.0.0.1:\(broker.port)",
                ], outputPath: log)
            defer { sim.send(SIGKILL) }
            let statuses = map.agents.map { "\(prefix)/agents/\($0.id)/status" }
            try await waitFor("every simulated agent online and a batch of readings") {
                statuses.allSatisfy { collector.last($0) == "online" }
                    && collector.messages.contains { $0.topic.hasSuffix("/readings") }
            }
            let signalled = ContinuousClock.now
            sim.send(SIGTERM)
            let exited = await sim.waitForExit(timeout: .seconds(20))
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(exited, "sim --broker did not end on SIGTERM:\n\(output)")
            #expect(sim.exitCode == 0, "\(output)")
            try await waitFor("every simulated agent offline") {
                statuses.allSatisfy { collector.last($0) == "offline" }
            }
            print("sim --broker: exited \(ContinuousClock.now - signalled) after SIGTERM (\(map.agents.count) agents)")
        }
    }
}
