import Foundation
import Testing
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsCore
import WhereaboutsRadio
import WhereaboutsRuntime

/// Runs a source into a feed whose credits are always given back, and returns everything it sent.
func drain(_ radio: AgentRadio) async -> [AgentPipeline.Input] {
    let (credits, creditContinuation) = AsyncStream.makeStream(of: Void.self)
    let (inputs, inputContinuation) = AsyncStream.makeStream(of: AgentPipeline.Input.self)
    var feed = SourceFeed<AgentPipeline.Input>(credits: credits, limit: 2) { input in
        inputContinuation.yield(input)
        creditContinuation.yield()
    }
    await radio.run(into: &feed)
    inputContinuation.finish()
    var received: [AgentPipeline.Input] = []
    for await input in inputs { received.append(input) }
    return received
}

func temporaryPath(_ name: String) -> String {
    NSTemporaryDirectory() + "whereabouts-radio-" + UUID().uuidString + "-" + name
}

@Suite("Btsnoop replay as the agent's radio")
struct BtsnoopReplayTests {
    @Test("a fast replay delivers every event with its capture time, then the end of the capture")
    func fastReplay() async throws {
        let uuid = try #require(BeaconUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0"))
        let address = try #require(DeviceAddress(value: 0xC0_00_00_00_00_01))
        let data = IBeaconAdvertisement(uuid: uuid, major: 1, minor: 2).advertisingData
        let packets = try (0..<1000).map { index in
            BtsnoopPacket(
                time: 1_767_225_600 + Double(index) * 0.01,
                event: try #require(
                    AdvertisingReportEvent.legacy(
                        address: address, addressType: .randomDevice, data: data, rssi: -60)))
        }
        let path = temporaryPath("capture.btsnoop")
        try Data(BtsnoopWriter().file(packets)).write(to: URL(fileURLWithPath: path))
        let radio = AgentRadio.replay(BtsnoopReplay(path: path, speed: .fast, keepsTimes: true))
        #expect(!radio.isLive)
        let inputs = await drain(radio)
        var times: [Double] = []
        for input in inputs {
            if case .events(let events, _) = input { times += events.map(\.time) }
        }
        #expect(times == packets.map(\.time))
        guard case .sourceEnded(let problem) = inputs.last else {
            Issue.record("the replay did not end with sourceEnded")
            return
        }
        #expect(problem == nil)
    }

    @Test("a fast replay without --keep-times stamps nothing ahead of now: the capture ends in the last second")
    func fastReplayEndsNow() async throws {
        let uuid = try #require(BeaconUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0"))
        let address = try #require(DeviceAddress(value: 0xC0_00_00_00_00_01))
        let data = IBeaconAdvertisement(uuid: uuid, major: 1, minor: 2).advertisingData
        // A 967 s capture, one advert every 3.7 s.
        let packets = try (0..<262).map { index in
            BtsnoopPacket(
                time: 1_767_225_600.25 + Double(index) * 3.7,
                event: try #require(
                    AdvertisingReportEvent.legacy(
                        address: address, addressType: .randomDevice, data: data, rssi: -60)))
        }
        let path = temporaryPath("long.btsnoop")
        try Data(BtsnoopWriter().file(packets)).write(to: URL(fileURLWithPath: path))
        let started = Date().timeIntervalSince1970
        let inputs = await drain(.replay(BtsnoopReplay(path: path, speed: .fast, keepsTimes: false)))
        var times: [Double] = []
        for input in inputs {
            if case .events(let events, _) = input { times += events.map(\.time) }
        }
        try #require(times.count == packets.count)
        #expect(times.allSatisfy { $0 <= started + 0.01 }, "latest stamp \(times.max() ?? 0), started \(started)")
        #expect(try #require(times.last) > started - 1.01)
        // One whole-second shift for all.
        let shift = times[0] - packets[0].time
        #expect(shift == shift.rounded())
        for (time, packet) in zip(times, packets) { #expect(abs(time - packet.time - shift) < 1e-6) }
    }

    @Test("a missing capture ends the source with a failure that names the file")
    func missingFile() async {
        let path = temporaryPath("missing.btsnoop")
        let inputs = await drain(.replay(BtsnoopReplay(path: path, speed: .fast, keepsTimes: true)))
        guard case .sourceEnded(let problem?) = inputs.last else {
            Issue.record("no failure reported")
            return
        }
        #expect(problem.isFailure)
        #expect(problem.message.contains(path))
    }
}
