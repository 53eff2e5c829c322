import BrokerFixture
import Foundation
import Glibc
import Testing
import WhereaboutsCore
import WhereaboutsMQTT
import WhereaboutsSession
import WhereaboutsWire

/// The agent on a full disk: before, a restart whose journal could not be rewritten exited 1 at once, so under
/// systemd it crash-looped and published nothing until someone freed space.
@Suite("whereabouts-agent on a full disk, with a real mosquitto", .serialized, .timeLimit(.minutes(5)))
struct FullDiskTests {
    @Test(
        "restarted on a full disk, it publishes from memory at once and says degraded; with room again it journals",
        .enabled(if: SmallFilesystem.canMount, "mounting a small tmpfs (a real full disk) needs root"))
    func restartOnFullDisk() async throws {
        let scratch = try ScratchDirectory()
        let capture = scratch.path + "/long.btsnoop"
        try OutboxPersistenceTests.capture(seconds: 240, to: capture)
        let disk = try SmallFilesystem(at: scratch.path + "/state", size: "256k")
        var options = BrokerOptions()
        options.persistence = true
        let broker = try await MosquittoBroker.start(options)
        defer { broker.cleanup() }
        let agentName = "e2e-full-\(UInt16.random(in: 0...UInt16.max))"
        let agent = try #require(AgentID(agentName))
        let journalPath = disk.path + "/\(agentName).outbox"
        let readingsTopic = "whereabouts/v1/\(site)/agents/\(agentName)/readings"
        let statusTopic = "whereabouts/v1/\(site)/agents/\(agentName)/status"
        let arguments = [
            "--id", agentName, "--site", site, "--broker", "mqtt://\(broker.host):\(broker.port)",
            "--source", "btsnoop:\(capture)", "--replay-speed", "1", "--reconnect-max", "1", "--keepalive", "5",
            "--state-dir", disk.path,
        ]
        try await observing(broker, agent: agentName, persistent: true) { observer in
            func received() -> [DecodedBatch] {
                OutboxPersistenceTests.batches(
                    observer.messages.filter { $0.topic == readingsTopic }.map(\.payload), agent: agent)
            }
            // Run 1 leaves batches in its journal (a broker outage, then kill -9), as a crash-looping agent would.
            let first = try AgentRun(arguments, in: scratch, name: "first")
            try await waitUntil("two batches", agent: first) { received().count >= 2 }
            await broker.stop()
            try await waitUntil("three batches journaled during the outage", agent: first) {
                OutboxPersistenceTests.journal(journalPath).pending.count >= 3
            }
            first.process.send(SIGKILL)
            #expect(await first.process.waitForExit(timeout: .seconds(10)))
            let journaled = OutboxPersistenceTests.batches(
                OutboxPersistenceTests.journal(journalPath).pending.map { Array($0.payload.utf8) }, agent: agent)
            let firstEpoch = try #require(received().first?.epoch)

            // The disk fills; the broker comes back; run 2 starts on the full disk.
            try disk.fill()
            let subscriptions = observer.subscriptions
            try await broker.restart()
            try await waitUntil("the observer back") { observer.subscriptions > subscriptions }
            let receivedBefore = received().count
            let start = ContinuousClock.now
            let second = try AgentRun(arguments, in: scratch, name: "second")
            try await waitUntil("run 2's first own batch", agent: second) {
                !second.process.isRunning || received().contains { $0.epoch != firstEpoch }
            }
            let firstOwnBatch = ContinuousClock.now - start
            #expect(second.process.isRunning, "run 2 exited on the full disk:\n\(second.output)")
            try #require(second.process.isRunning)
            #expect(second.output.contains("No space left on device"), "\(second.output)")
            try await waitUntil("degraded on the status topic", agent: second) {
                observer.payloads(on: statusTopic).last == "degraded"
            }
            // What run 1 left is sent from memory first, in order, then run 2's own.
            try await waitUntil("run 1's journaled batches", agent: second) {
                received().count >= receivedBefore + journaled.count
            }
            let sent = received().dropFirst(receivedBefore).prefix(journaled.count)
            #expect(sent.map { [$0.epoch, $0.seq] } == journaled.map { [$0.epoch, $0.seq] })

            // Room again: the next change rewrites the journal, and the status says online.
            disk.free()
            try await waitUntil("the journal writable again", agent: second) {
                second.output.contains("writable again")
            }
            try await waitUntil("online again", agent: second) { observer.payloads(on: statusTopic).last == "online" }
            // And it journals: an outage now leaves batches on disk.
            await broker.stop()
            try await waitUntil("batches journaled again", agent: second) {
                OutboxPersistenceTests.journal(journalPath).pending.count >= 3
            }
            try await broker.restart()
            second.process.send(SIGTERM)
            #expect(try await second.exitCode(within: .seconds(60)) == 0, "\(second.output)")
            #expect(second.counter("journal-failures") == 1, "\(second.output)")
            let built = try #require(second.counter("batches"), "\(second.output)")
            let secondEpoch = try #require(received().first { $0.epoch != firstEpoch }?.epoch)
            try await waitUntil("every batch of run 2") {
                Set(received().filter { $0.epoch == secondEpoch }.map(\.seq)) == Set(0..<built)
            }
            #expect(OutboxPersistenceTests.journal(journalPath).pending.isEmpty, "a clean exit leaves nothing")
            print(
                "agent on a full disk: first own batch \(firstOwnBatch) after the start; \(journaled.count) journaled "
                    + "batches of the last run sent from memory; \(built) batches built, all delivered")
        }
    }
}
