import BrokerFixture
import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsLocator
import WhereaboutsMQTT
import WhereaboutsWire

/// A `kill -9` of the locator with a backlog queued at the broker: what the broker already counts as delivered
/// must not be lost beyond the locator's inbox.
@Suite("Locator crash", .serialized)
struct LocatorCrashTests {
    static let batches = 2_000
    static let readingsPerBatch = 100

    @Test("kill -9 one second into a 200,000-reading backlog loses at most one inbox of batches (37 of 2,000)")
    func killDuringBacklog() async throws {
        let tests = try LocatorEndToEndTests()
        var options = BrokerOptions()
        options.extraConfiguration = ["max_queued_messages 0"]
        try await tests.withSite(options: options) { broker, collector, agents, scratch in
            let record = scratch.file("readings.jsonl")
            let arguments = ["--warm-up", "1", "--record", record]
            let topics = tests.topics
            // The locator's persistent session must exist for the broker to queue for it.
            let first = try LocatorProcess(map: tests.mapPath, broker: broker, scratch: scratch, extra: arguments)
            try await waitFor("the locator to come online") { collector.last(topics.locatorStatus.name) == "online" }
            #expect(await first.stop() == 0)
            try await waitFor("the locator to say goodbye") { collector.last(topics.locatorStatus.name) == "offline" }
            // The backlog: 2,000 batches of 100 readings from one agent, queued while the locator is away.
            let agent = try #require(agents["west"])
            let start = now()
            var sent: Set<String> = []
            for index in 0..<Self.batches {
                // Every reading is its own tag (major: the reading, minor: the batch), so each one is identifiable.
                let time = now()
                let readings = (0..<Self.readingsPerBatch).map { reading in
                    ReadingBatch.Reading(
                        tag: .iBeacon(uuid: tests.map.site.uuid, major: UInt16(reading), minor: UInt16(index)),
                        time: time, rssi: -60, count: 3)
                }
                let batch = try await agent.send(readings, sent: time)
                for reading in batch.readings { sent.insert(reading.tag.description) }
                // Paced, so that the broker and the tests running beside this one keep their share of the cores.
                if index % 50 == 49 { try await Task.sleep(for: .milliseconds(20)) }
            }
            try await Task.sleep(for: .milliseconds(500))
            // Restart, let it record part of the backlog, and kill it. Waited for, not slept for: on two busy cores
            // a debug build can take over a second to start, connect and record its first batch.
            let sizeBeforeVictim = Self.size(record)
            let victim = try LocatorProcess(map: tests.mapPath, broker: broker, scratch: scratch, extra: arguments)
            try await waitFor("the victim to record part of the backlog") { Self.size(record) > sizeBeforeVictim }
            try await Task.sleep(for: .milliseconds(300))
            await victim.kill()
            let afterKill = try Self.recorded(record)
            // A last run takes what the broker still holds, then stops cleanly.
            let last = try LocatorProcess(map: tests.mapPath, broker: broker, scratch: scratch, extra: arguments)
            // Until everything sent is recorded, or the recording has stood still for 5 s. Its size is what is
            // watched: decoding 200,000 lines every 200 ms took most of a core from the tests running beside this one
            // (the standby's take-over, timed by the clock, was seen seconds late). It is decoded once it pauses.
            let sizeAfterKill = Self.size(record)
            var previous = -1
            var still = now()
            var decodedAt = -1
            while now() - start < 120 {
                let size = Self.size(record)
                if size != previous {
                    previous = size
                    still = now()
                } else if now() - still > 1, size != decodedAt {
                    decodedAt = size
                    if try Self.recorded(record).count >= sent.count { break }
                } else if size > sizeAfterKill, now() - still > 5 {
                    break
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(await last.stop() == 0)
            let recorded = try Self.recorded(record)
            let lost = sent.subtracting(recorded).count
            print(
                "locator kill -9 in a backlog: \(sent.count) readings sent, \(afterKill.count) recorded before the "
                    + "kill, \(lost) lost (\(lost / Self.readingsPerBatch) batches)")
            #expect(afterKill.count > 0, "the victim should have recorded some of the backlog before the kill")
            #expect(afterKill.count < sent.count, "the kill should have come in the middle of the backlog")
            // At most what `LocatorService.inboxLimit` names: the inbox, the one libmosquitto holds in its callback
            // (acknowledged before the callback runs), and the four the runner has taken (decoded ahead of the loop,
            // `ServiceRunner`'s feed limit). The bound said two of those until this test lost 36 batches in a run.
            #expect(lost <= (LocatorService.inboxLimit + 5) * Self.readingsPerBatch)
        }
    }

    @Test("a 64 MiB payload on a readings topic never reaches the locator: not read, not copied, nothing to count")
    func oversizedPayload() async throws {
        let tests = try LocatorEndToEndTests()
        try await tests.withSite { broker, collector, agents, scratch in
            let locator = try LocatorProcess(
                map: tests.mapPath, broker: broker, scratch: scratch, extra: ["--warm-up", "1"])
            let topics = tests.topics
            try await waitFor("the locator to come online") { collector.last(topics.locatorStatus.name) == "online" }
            let before = try Self.peakResidentKilobytes(locator.process.pid)
            let agent = try #require(agents["west"])
            try agent.sendRaw([UInt8](repeating: UInt8(ascii: " "), count: 64 << 20))
            // A good batch after it: the broker delivers in order, so once it is taken the big one is behind us.
            let sent = try await tests.sendRound(agents, position: Point(x: 5, y: 5), time: now())
            try await waitFor("the good readings", timeout: .seconds(60)) {
                collector.all(topics.locatorMetrics.name).contains {
                    ((try? LocatorMetrics(payload: $0))?.readingsAccepted ?? 0)
                        >= sent.reduce(0) { $0 + $1.readings.count }
                }
            }
            let after = try Self.peakResidentKilobytes(locator.process.pid)
            print("locator peak RSS around a 64 MiB payload: \(before) KiB before, \(after) KiB after")
            // The locator tells the broker its Maximum Packet Size (MQTT v5), and mosquitto (without a packet limit of
            // its own here) drops the message for it instead of sending it. Before, libmosquitto read the packet and
            // copied it (two copies, 128 MiB of peak) before the callback could refuse it as payload_too_large.
            #expect(after - before < 8 * 1024, "VmHWM grew \(after - before) KiB")
            #expect(await locator.stop() == 0)
            try await waitFor("the final metrics") { collector.last(topics.locatorStatus.name) == "offline" }
            let metrics = try LocatorMetrics(payload: try #require(collector.last(topics.locatorMetrics.name)))
            #expect(metrics.readingsRejected[.payloadTooLarge] == nil, "never received, so never counted")
        }
    }

    /// VmHWM of a process, KiB.
    static func peakResidentKilobytes(_ pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    /// The recording's size in bytes (0 before it exists).
    static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    /// The distinct readings in the recording, by tag.
    static func recorded(_ path: String) throws -> Set<String> {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return Set(JSONLines.decode(text, as: RecordedReading.self).records.map(\.tag.description))
    }
}
