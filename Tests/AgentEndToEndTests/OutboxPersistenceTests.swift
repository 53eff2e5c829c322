import BrokerFixture
import Foundation
import Glibc
import Testing
import WhereaboutsCore
import WhereaboutsMQTT
import WhereaboutsSession
import WhereaboutsWire

/// The agent's outbox journal against a real broker and a real `kill -9`.
@Suite("whereabouts-agent's outbox journal, with a real mosquitto", .serialized, .timeLimit(.minutes(4)))
struct OutboxPersistenceTests {
    static let base = 1_764_475_200.25

    /// Three tags every 200 ms for `seconds` at the recorded pace.
    static func capture(seconds: Int, to path: String) throws {
        var capture = Capture()
        for step in 0..<(seconds * 5) {
            for minor in UInt16(1)...3 {
                capture.iBeacon(
                    uuid: siteUUID, major: 1, minor: minor, rssi: Int8(-60 - Int(minor) * 5 - step % 3),
                    at: base + Double(step) * 0.2 + Double(minor) * 0.05)
            }
        }
        try capture.write(to: path)
    }

    /// Batches decoded as the locator decodes them, in arrival order, duplicates included.
    static func batches(_ payloads: [[UInt8]], agent: AgentID) -> [DecodedBatch] {
        let decoder = BatchDecoder(tolerance: .init(futureSkew: 1e9, maximumAge: 1e9))
        return payloads.compactMap {
            decoder.decode($0, topicAgent: agent, knownAgents: [agent], now: Date().timeIntervalSince1970).batch
        }
    }

    static func journal(_ path: String) -> OutboxJournal.Contents {
        OutboxJournal.decode((try? [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))) ?? [])
    }

    @Test("kill -9 during a broker outage loses nothing windowed: the restart sends it first, once each, in order")
    func killDuringOutage() async throws {
        let scratch = try ScratchDirectory()
        let longCapture = scratch.path + "/long.btsnoop"
        let shortCapture = scratch.path + "/short.btsnoop"
        try Self.capture(seconds: 120, to: longCapture)
        try Self.capture(seconds: 3, to: shortCapture)
        let state = scratch.path + "/state"
        var options = BrokerOptions()
        options.persistence = true
        let broker = try await MosquittoBroker.start(options)
        defer { broker.cleanup() }
        let agentName = "e2e-journal-\(UInt16.random(in: 0...UInt16.max))"
        let agent = try #require(AgentID(agentName))
        let journalPath = state + "/\(agentName).outbox"
        let readingsTopic = "whereabouts/v1/\(site)/agents/\(agentName)/readings"
        func arguments(_ capture: String, speed: String) -> [String] {
            [
                "--id", agentName, "--site", site, "--broker", "mqtt://\(broker.host):\(broker.port)",
                "--source", "btsnoop:\(capture)", "--replay-speed", speed, "--reconnect-max", "1", "--keepalive", "5",
                "--state-dir", state,
            ]
        }
        try await observing(broker, agent: agentName, persistent: true) { observer in
            func received() -> [DecodedBatch] {
                Self.batches(observer.messages.filter { $0.topic == readingsTopic }.map(\.payload), agent: agent)
            }
            // Run 1 publishes at the recorded pace until the broker goes away, then holds its batches.
            let first = try AgentRun(arguments(longCapture, speed: "1"), in: scratch, name: "first")
            try await waitUntil("three batches") { received().count >= 3 }
            await broker.stop()
            try await waitUntil("six batches journaled during the outage") {
                Self.journal(journalPath).pending.count >= 6
            }
            first.process.send(SIGKILL)
            #expect(await first.process.waitForExit(timeout: .seconds(10)))
            #expect(first.process.exitCode == nil, "killed by the signal")

            // What the journal holds after the kill: every batch windowed and not acknowledged.
            let leftover = Self.journal(journalPath)
            let journaled = Self.batches(leftover.pending.map { Array($0.payload.utf8) }, agent: agent)
            #expect(journaled.count == leftover.pending.count)
            let firstEpoch = try #require(journaled.first?.epoch)
            let lastSeq = try #require(journaled.last?.seq)
            #expect(journaled.map(\.seq) == Array((lastSeq - journaled.count + 1)...lastSeq))

            // Run 2 starts while the broker is still away, then the broker comes back.
            let second = try AgentRun(arguments(shortCapture, speed: "fast"), in: scratch, name: "second")
            try await waitUntil("the journal read back") { second.output.contains("outbox journal") }
            #expect(second.output.contains("\(journaled.count) unacknowledged batches"), "\(second.output)")
            try await broker.restart()
            #expect(try await second.exitCode(within: .seconds(90)) == 0, "\(second.output)")
            let built = try #require(second.counter("batches"), "\(second.output)")
            // The new run's epoch, from its start line ("agent ID site UUID epoch E: ...").
            let words = second.output.split(separator: " ")
            let epochWord = try #require(words.firstIndex(of: "epoch").map { words[$0 + 1].dropLast() })
            let secondEpoch = try #require(Int(epochWord))
            #expect(secondEpoch > firstEpoch)
            try await waitUntil("every batch of both runs") {
                let keys = Set(received().map { [$0.epoch, $0.seq] })
                return (0...lastSeq).allSatisfy { keys.contains([firstEpoch, $0]) }
                    && (0..<built).allSatisfy { keys.contains([secondEpoch, $0]) }
            }

            // First arrivals: run 1's batches 0...lastSeq, then run 2's from 0, each in order, none missing.
            let arrivals = received()
            var seen: Set<[Int]> = []
            let firstArrivals = arrivals.filter { seen.insert([$0.epoch, $0.seq]).inserted }
            #expect(
                firstArrivals.map(\.epoch) == Array(repeating: firstEpoch, count: lastSeq + 1)
                    + Array(repeating: secondEpoch, count: built))
            #expect(firstArrivals.map(\.seq) == Array(0...lastSeq) + Array(0..<built))
            // The locator's deduplication takes each once, refuses only duplicates, and counts no gap.
            var deduplicator = BatchDeduplicator()
            var taken = 0
            for batch in arrivals {
                let verdict = deduplicator.admit(batch)
                if verdict == nil { taken += 1 } else { #expect(verdict == .duplicateBatch) }
            }
            #expect(taken == lastSeq + 1 + built)
            #expect(deduplicator.missing.isEmpty)
            #expect(second.counter("dropped") == 0)
            #expect(second.counter("acked") == journaled.count + built)
            // A clean exit leaves nothing to send again.
            #expect(Self.journal(journalPath).pending.isEmpty)
            print(
                "agent journal: \(journaled.count) batches journaled at the kill (seq \(journaled.first?.seq ?? -1)"
                    + "...\(lastSeq)), \(built) from the restart; \(arrivals.count) received, "
                    + "\(arrivals.count - firstArrivals.count) duplicates dropped by the deduplicator")
        }
    }
}
