import BrokerFixture
import Foundation
import Testing
import WhereaboutsAdvertising
import WhereaboutsCore
import WhereaboutsWire

/// Issue 13's real-capture findings, as tests: a long capture replayed fast with the default settings must reach the
/// broker whole (no batch dropped, whatever the outbox holds) and stamped with the capture's times, never ahead.
@Suite("long fast replays: nothing dropped, nothing stamped ahead", .serialized, .timeLimit(.minutes(3)))
struct LongReplayTests {
    static let base = 1_764_475_200.25

    @Test(
        "a 1500 s capture replayed fast with default settings delivers every batch, seq from 0, at the capture's times",
        arguments: [false, true])
    func longFastReplay(keepTimes: Bool) async throws {
        let scratch = try ScratchDirectory()
        var capture = Capture()
        // 1500 windows, two and a half times the default 600-batch outbox: one tag every second, another every 2 s.
        for step in 0..<1500 {
            let time = Self.base + Double(step)
            capture.iBeacon(uuid: siteUUID, major: 1, minor: 1, rssi: Int8(-60 - step % 7), at: time)
            if step % 2 == 0 { capture.iBeacon(uuid: siteUUID, major: 1, minor: 2, rssi: -70, at: time + 0.5) }
        }
        let path = scratch.path + "/long.btsnoop"
        try capture.write(to: path)

        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        let agent = "e2e-long-\(UInt16.random(in: 0...UInt16.max))"
        try await observing(broker, agent: agent) { observer in
            let started = Date().timeIntervalSince1970
            let run = try AgentRun(
                [
                    "--id", agent, "--site", site, "--broker", "mqtt://\(broker.host):\(broker.port)",
                    "--source", "btsnoop:\(path)", "--replay-speed", "fast",
                ] + (keepTimes ? ["--keep-times"] : []), in: scratch)
            let code = try await run.exitCode(within: .seconds(120))
            #expect(code == 0, "\(run.output)")
            #expect(run.counter("dropped") == 0, "\(run.output)")
            let built = try #require(run.counter("batches"), "\(run.output)")
            #expect(built >= 1500)
            try await waitUntil("\(built) batches", timeout: .seconds(30)) {
                (try? ReceivedBatches(observer, agent: agent))?.unique.count ?? 0 >= built
            }
            let batches = try ReceivedBatches(observer, agent: agent)
            #expect(batches.unique.map(\.seq) == Array(0..<built), "batches missing or out of order")
            #expect(batches.adverts == capture.expected, "\(run.output)")

            // Each reading is stamped with its window's end: the capture's, or the capture's shifted by whole
            // seconds so that the last one is no later than the replay's start (plus its window).
            let readings = batches.unique.flatMap(\.accepted)
            let times = Set(readings.map(\.time))
            let captureWindowEnds = Set(capture.packets.map { ($0.time).rounded(.down) + 1 })
            if keepTimes {
                #expect(times == captureWindowEnds)
            } else {
                let shift = try #require(times.min()) - (try #require(captureWindowEnds.min()))
                #expect(shift == shift.rounded())
                #expect(times == Set(captureWindowEnds.map { $0 + shift }))
                let finished = Date().timeIntervalSince1970
                #expect(try #require(times.max()) <= finished + 1, "stamped ahead of the wall clock")
                #expect(try #require(times.max()) >= started - 2)
            }
        }
    }
}
