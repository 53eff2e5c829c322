import BrokerFixture
import Foundation
import Glibc
import Testing
import WhereaboutsCore

/// Resident memory and CPU time of the agent replaying 1,000 adverts per second for 20 s at the recorded pace.
///
/// A measurement, not a gate: it runs only with `WHEREABOUTS_AGENT_PROFILE=1` and prints its numbers
/// (`WHEREABOUTS_AGENT_BINARY` picks another build, such as the release one). It asserts only that every advert
/// arrived.
@Suite(
    "whereabouts-agent resource profile",
    .enabled(if: ProcessInfo.processInfo.environment["WHEREABOUTS_AGENT_PROFILE"] == "1"))
struct AgentProfile {
    @Test("replaying 1,000 adverts/s for 20 s: VmRSS, VmHWM and CPU time")
    func memoryAndCPU() async throws {
        let scratch = try ScratchDirectory()
        var capture = Capture()
        let base = 1_764_475_200.0
        // 50 tags at 20 Hz each: 1,000 adverts a second, 20,000 in all, plus 10 % noise.
        for step in 0..<20_000 {
            let time = base + Double(step) / 1000
            capture.iBeacon(
                uuid: siteUUID, major: 1, minor: UInt16(step % 50), rssi: Int8(-55 - step % 37), at: time)
            if step % 10 == 0 {
                capture.raw(NoiseEvents.all[step / 10 % NoiseEvents.all.count], at: time + 0.0005)
            }
        }
        let path = scratch.path + "/load.btsnoop"
        try capture.write(to: path)
        let broker = try await MosquittoBroker.start()
        defer { broker.cleanup() }
        let agent = "profile-\(UInt16.random(in: 0...UInt16.max))"
        try await observing(broker, agent: agent) { observer in
            let run = try AgentRun(
                [
                    "--id", agent, "--site", site, "--broker", "mqtt://\(broker.host):\(broker.port)",
                    "--source", "btsnoop:\(path)", "--replay-speed", "1",
                ], in: scratch)
            var samples: [(rss: Int, hwm: Int)] = []
            var cpuTicks = 0
            while run.process.isRunning {
                if let status = try? String(contentsOfFile: "/proc/\(run.process.pid)/status", encoding: .utf8) {
                    let rss = Self.kilobytes("VmRSS", in: status)
                    let hwm = Self.kilobytes("VmHWM", in: status)
                    if rss > 0 { samples.append((rss, hwm)) }
                }
                if let stat = try? String(contentsOfFile: "/proc/\(run.process.pid)/stat", encoding: .utf8),
                    let close = stat.lastIndex(of: ")")
                {
                    // Fields after the command name: state is field 3, utime 14 and stime 15.
                    let fields = stat[stat.index(after: close)...].split(separator: " ")
                    if fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) {
                        cpuTicks = user + system
                    }
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(try await run.exitCode(within: .seconds(5)) == 0, "\(run.output)")
            let built = try #require(run.counter("batches"))
            try await waitUntil("\(built) batches") {
                (try? ReceivedBatches(observer, agent: agent))?.unique.count ?? 0 >= built
            }
            let batches = try ReceivedBatches(observer, agent: agent)
            #expect(batches.adverts == capture.expected)
            let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
            let steady = samples.dropFirst(samples.count / 4)
            print(
                "agent profile: \(capture.packets.count) events over 20 s; VmRSS median "
                    + "\(steady.map(\.rss).sorted()[steady.count / 2]) kB, max \(samples.map(\.rss).max() ?? 0) kB; "
                    + "VmHWM \(samples.last?.hwm ?? 0) kB; CPU \(Double(cpuTicks) / ticksPerSecond) s "
                    + "(user+system, sampled up to 0.2 s before exit); \(built) batches")
        }
    }

    static func kilobytes(_ key: String, in status: String) -> Int {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}
