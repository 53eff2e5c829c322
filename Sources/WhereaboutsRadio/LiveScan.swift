import CommandLineSupport
import Synchronization
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsHCI
import WhereaboutsRuntime

/// Live scanning on one controller: forwards its raw events as agent inputs and restarts the scan on request.
public final class LiveScan: Sendable {
    let controller: HCIController
    let parameters: LEScanParameters
    private let restartRequested = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)

    init(controller: HCIController, parameters: LEScanParameters) {
        self.controller = controller
        self.parameters = parameters
    }

    /// Forwards events from `firstStream`, and from each restarted scan after it, until stopped or failed.
    func run(firstStream: AsyncStream<[UInt8]>, into feed: inout SourceFeed<AgentPipeline.Input>) async {
        var stream = firstStream
        while true {
            for await event in stream {
                guard await feed.send(.events([HeardEvent(bytes: event, time: WallClock.now())], framing: .h4))
                else { return }
            }
            if stopRequested.load(ordering: .acquiring) || Task.isCancelled {
                _ = await feed.send(.sourceEnded(problem: nil))
                return
            }
            guard restartRequested.exchange(false, ordering: .acquiringAndReleasing) else {
                let reason = controller.failure.map { "\($0)" } ?? "the scan ended"
                _ = await feed.send(
                    .sourceEnded(problem: SourceProblem(message: "\(controller.name): \(reason)", isFailure: true)))
                return
            }
            do {
                stream = try await controller.startScanning(parameters)
            } catch {
                _ = await feed.send(
                    .sourceEnded(
                        problem: SourceProblem(
                            message: "cannot restart the scan on \(controller.name): \(error)", isFailure: true)))
                return
            }
        }
    }

    /// Stops the scan and starts it again (the watchdog's remedy for a controller that went quiet).
    func restart() async {
        restartRequested.store(true, ordering: .releasing)
        await controller.stopScanning()
    }

    /// Stops the scan for good; the forwarder then reports the end of the source.
    func stop() async {
        stopRequested.store(true, ordering: .releasing)
        await controller.stopScanning()
    }
}
