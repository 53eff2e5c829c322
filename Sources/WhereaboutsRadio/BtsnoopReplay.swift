import CommandLineSupport
import Glibc
import WhereaboutsAdvertising
public import WhereaboutsAgent
import WhereaboutsRuntime

/// Replays the HCI events of a btsnoop file as agent inputs, paced or as fast as the consumer takes them.
///
/// The file is read in 64 KiB chunks, so a long capture replays in bounded memory. A damaged record or a
/// truncated tail ends the replay with a problem; what came before it has been delivered.
public struct BtsnoopReplay: Sendable {
    public var path: String
    public var speed: ReplaySpeed
    public var keepsTimes: Bool

    /// A replay of the capture at `path`; `keepsTimes` stamps events with the capture's times rather than now.
    public init(path: String, speed: ReplaySpeed, keepsTimes: Bool) {
        self.path = path
        self.speed = speed
        self.keepsTimes = keepsTimes
    }

    /// Opens the file now, so that a bad path fails at startup with a clear message.
    /// Opens the file now and reads its header, so that a missing, empty or foreign file fails at startup with a
    /// clear message rather than replaying nothing and exiting 0.
    static func check(_ path: String) throws(RuntimeError) {
        guard let file = fopen(path, "rb") else {
            throw RuntimeError("cannot open btsnoop file \(path): \(FileAccess.systemMessage())")
        }
        defer { fclose(file) }
        var header = [UInt8](repeating: 0, count: 16)
        let count = header.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
        guard count > 0 else { throw RuntimeError("\(path) is empty, not a btsnoop capture") }
        var reader = BtsnoopReader()
        reader.append(header[0..<count])
        do {
            _ = try reader.next()
            if reader.datalink == nil { try reader.finish() }
        } catch {
            throw RuntimeError("\(path) is not a btsnoop capture we can read: \(error)")
        }
    }

    /// Runs the replay into `feed`; returns when the file ends or the task is cancelled.
    func run(into feed: inout SourceFeed<AgentPipeline.Input>) async {
        guard let file = fopen(path, "rb") else {
            let problem = SourceProblem(
                message: "cannot open btsnoop file \(path): \(FileAccess.systemMessage())", isFailure: true)
            _ = await feed.send(.sourceEnded(problem: problem))
            return
        }
        defer { fclose(file) }
        // Fast replay maps the capture onto the past, ending now (ReplayClock), so it needs the capture's end first.
        let end = speed == .fast && !keepsTimes ? Self.lastEventTime(in: path) : nil
        var reader = BtsnoopReader()
        var clock: ReplayClock?
        var pending: [HeardEvent] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var problem: SourceProblem?

        func deliver() async -> Bool {
            guard !pending.isEmpty else { return !Task.isCancelled }
            defer { pending.removeAll(keepingCapacity: true) }
            return await feed.send(.events(pending, framing: .bare))
        }

        reading: while !Task.isCancelled {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if count > 0 { reader.append(chunk[0..<count]) }
            do {
                while let packet = try reader.next() {
                    let replayClock =
                        clock
                        ?? ReplayClock(
                            firstEventTime: packet.time, lastEventTime: end ?? packet.time,
                            startWallTime: WallClock.now(),
                            startMonotonic: WallClock.monotonic(), speed: speed, keepsTimes: keepsTimes)
                    clock = replayClock
                    if let due = replayClock.due(packet.time), due > WallClock.monotonic() + 0.002 {
                        guard await deliver() else { return }
                        guard await wait(until: due, clock: replayClock, &feed) else { return }
                    }
                    pending.append(HeardEvent(bytes: packet.event, time: replayClock.stamp(packet.time)))
                    if pending.count >= 256 {
                        guard await deliver() else { return }
                    }
                }
            } catch {
                problem = SourceProblem(message: "\(path): \(error)", isFailure: false)
                break reading
            }
            if count < chunk.count {
                if ferror(file) != 0 {
                    problem = SourceProblem(
                        message: "cannot read \(path): \(FileAccess.systemMessage())", isFailure: false)
                } else {
                    do {
                        try reader.finish()
                    } catch {
                        problem = SourceProblem(message: "\(path): \(error)", isFailure: false)
                    }
                }
                break reading
            }
        }
        guard await deliver() else { return }
        _ = await feed.send(.sourceEnded(problem: problem))
    }

    /// The latest event time in the capture at `path`, up to any damage, or nil for none.
    static func lastEventTime(in path: String) -> Double? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var reader = BtsnoopReader()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var last: Double?
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if count > 0 { reader.append(chunk[0..<count]) }
            do {
                while let packet = try reader.next() { last = max(last ?? packet.time, packet.time) }
            } catch {
                return last
            }
            if count < chunk.count { return last }
        }
    }

    /// Sleeps until the monotonic time `due`, telling the consumer the replay's time at least every 250 ms so that
    /// windows close on time across quiet stretches of the capture.
    private func wait(until due: Double, clock: ReplayClock, _ feed: inout SourceFeed<AgentPipeline.Input>) async
        -> Bool
    {
        while true {
            let now = WallClock.monotonic()
            if now >= due { return true }
            let step = min(due - now, 0.25)
            do {
                try await Task.sleep(for: .milliseconds(Int((step * 1000).rounded(.up))))
            } catch {
                return false
            }
            if WallClock.monotonic() < due {
                guard await feed.send(.replayTime(clock.replayTime(atMonotonic: WallClock.monotonic()))) else {
                    return false
                }
            }
        }
    }
}
