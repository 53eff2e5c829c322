import CommandLineSupport
import Synchronization
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsHCI
import WhereaboutsRuntime

/// Live scanning on one controller: forwards its raw events as agent inputs, restarts the scan on request, and
/// opens the controller again when it goes away.
///
/// A controller that vanishes mid-scan (unplugged, its emulator or serial link gone) or fails is logged as an
/// error naming it; the agent then keeps running (its windows, its broker session and the batches held for the
/// broker) and opens the controller again after 1 s, then 2, 4, … up to 30 s between attempts, until it is back
/// (scanning and advertising again) or the agent stops. Only the first failed attempt is a warning; later ones
/// are logged at debug level, so a long absence does not fill the journal.
public final class LiveScan: Sendable {
    /// The first wait before opening a controller again, seconds.
    static let firstRetryDelay = 1.0
    /// The longest wait between attempts, seconds.
    static let maximumRetryDelay = 30.0

    let opener: ControllerOpener
    private let logger: Logger
    private let host: Mutex<HCIHost>
    /// Events the controllers replaced so far had dropped.
    private let earlierDrops = Atomic<Int>(0)
    private let restartRequested = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    /// Whether the agent takes GATT jobs (`--gatt`), and what runs them.
    let takesJobs: Bool
    let gattJobs = GATTJobRunner()

    init(opener: ControllerOpener, host: HCIHost, logger: Logger, takesJobs: Bool = false) {
        self.opener = opener
        self.host = Mutex(host)
        self.logger = logger
        self.takesJobs = takesJobs
    }

    /// The controller open now (a job runs on it beside the scan).
    var currentHost: HCIHost { host.withLock { $0 } }

    /// "passive, legacy scanning" or the like, for the log.
    static func describe(_ host: HCIHost, _ scan: LEScanParameters) -> String {
        (scan.active ? "active" : "passive") + (host.usesExtendedScanning ? ", extended scanning" : ", legacy scanning")
    }

    /// Events the controller had to drop because the agent fell behind, over every time it was opened.
    var droppedEvents: Int { earlierDrops.load(ordering: .relaxed) + host.withLock { $0 }.droppedEvents }

    /// Forwards events from `firstStream`, from each restarted scan, and from each reopened controller, until
    /// stopped or cancelled.
    func run(firstStream: AsyncStream<[UInt8]>, into feed: inout SourceFeed<AgentPipeline.Input>) async {
        var stream = firstStream
        // The drops the pipeline was last told of, and when they were last read (at most once a second: the count
        // is behind the host's lock, and events come hundreds a second).
        var toldDrops = 0
        var dropsRead = -Double.infinity
        while true {
            for await event in stream {
                let now = WallClock.now()
                guard await feed.send(.events([HeardEvent(bytes: event, time: now)], framing: .h4)) else { return }
                guard now - dropsRead >= 1 else { continue }
                dropsRead = now
                let drops = droppedEvents
                if drops != toldDrops {
                    toldDrops = drops
                    guard await feed.send(.sourceDrops(drops)) else { return }
                }
            }
            if stopRequested.load(ordering: .acquiring) || Task.isCancelled {
                _ = await feed.send(.sourceEnded(problem: nil))
                return
            }
            let current = host.withLock { $0 }
            var failure = current.failure
            if failure == nil, restartRequested.exchange(false, ordering: .acquiringAndReleasing) {
                do {
                    stream = try await current.startScanning(opener.scan)
                    logger.info("scan restarted on \(opener.name)")
                    continue
                } catch {
                    failure = error
                }
            }
            let reason = failure.map { "\($0)" } ?? "its scan ended"
            logger.error(
                (reason.contains(opener.name) ? reason : "Bluetooth controller \(opener.name) failed: \(reason)")
                    + "; opening it again in \(Self.firstRetryDelay) s")
            guard let reopened = await reopen(replacing: current) else {
                _ = await feed.send(.sourceEnded(problem: nil))
                return
            }
            stream = reopened
        }
    }

    /// Opens the controller again, waiting longer after each failed attempt; nil once stopped or cancelled.
    private func reopen(replacing old: HCIHost) async -> AsyncStream<[UInt8]>? {
        old.close()
        var delay = Self.firstRetryDelay
        var attempts = 0
        while true {
            do {
                try await Task.sleep(for: .seconds(delay))
            } catch {
                return nil
            }
            if stopRequested.load(ordering: .acquiring) { return nil }
            attempts += 1
            do throws(HCIError) {
                let (reopened, events) = try await opener.open()
                let replaced = host.withLock { current in
                    defer { current = reopened }
                    return current
                }
                earlierDrops.add(replaced.droppedEvents, ordering: .relaxed)
                // A restart asked for while the controller was away is done: the scan is new.
                restartRequested.store(false, ordering: .releasing)
                logger.warning(
                    "Bluetooth controller \(opener.name) is back after \(attempts) "
                        + (attempts == 1 ? "attempt" : "attempts")
                        + ": scanning again (\(Self.describe(reopened, opener.scan)))"
                        + (opener.advertising.map { ", advertising \($0.advertisement.tag)" } ?? ""))
                return events
            } catch {
                delay = min(delay * 2, Self.maximumRetryDelay)
                logger.log(
                    attempts == 1 ? .warning : .debug,
                    "cannot open Bluetooth controller \(opener.name) again (attempt \(attempts)): \(error); "
                        + "next attempt in \(delay) s")
            }
        }
    }

    /// Stops the scan and starts it again (the watchdog's remedy for a controller that went quiet).
    func restart() async {
        restartRequested.store(true, ordering: .releasing)
        await host.withLock { $0 }.stopScanning()
    }

    /// Stops the scan for good; the forwarder then reports the end of the source.
    func stop() async {
        stopRequested.store(true, ordering: .releasing)
        await host.withLock { $0 }.stopScanning()
    }

    /// Stops scanning and advertising and closes the controller.
    func shutDown() async {
        stopRequested.store(true, ordering: .releasing)
        await host.withLock { $0 }.shutDown()
    }
}
