import CommandLineSupport
import WhereaboutsAdvertising
public import WhereaboutsAgent
import WhereaboutsHCI

/// `whereabouts-agent --check`: opens the controller as the agent does, prints who it is, scans, prints each tag the
/// agent would publish as first heard, and after the count of tags or the timeout prints the verdict. No broker.
public enum RadioCheck {
    /// How a check ended.
    public enum Outcome: Sendable, Equatable {
        /// At least one tag the agent would publish was heard.
        case heard
        /// None was heard before the timeout (the report says what to check).
        case silent
        /// The controller could not be opened or went away; the message names it and the cause.
        case failed(String)
    }

    /// Runs the check, writing the report line by line with `write`.
    public static func run(_ settings: AgentCheckSettings, write: @escaping @Sendable (String) -> Void) async
        -> Outcome
    {
        guard
            let scan = LEScanParameters(
                active: settings.activeScan, intervalMilliseconds: settings.scanIntervalMilliseconds,
                windowMilliseconds: settings.scanWindowMilliseconds)
        else { return .failed("scan interval and window are out of range") }
        guard let (name, makeTransport) = ControllerOpener.transport(for: settings.source) else {
            return .failed("--check needs a controller, not a replay")
        }
        let opener = ControllerOpener(name: name, scan: scan, makeTransport: makeTransport)
        let host: HCIHost
        let events: AsyncStream<[UInt8]>
        let identity: ControllerIdentity
        do throws(HCIError) {
            (host, events) = try await opener.open()
        } catch {
            return .failed(ControllerOpener.openFailure(name, error))
        }
        let start = WallClock.monotonic()
        do throws(HCIError) {
            identity = try await host.identity()
        } catch {
            host.close()
            return .failed("cannot read who Bluetooth controller \(name) is: \(error)")
        }
        for line in CheckReport.controller(identity, activeScan: settings.activeScan) { write(line) }
        write(CheckReport.listening(settings.filter, count: settings.count, timeout: settings.timeout))
        let check = await listen(
            to: events, BeaconCheck(filter: settings.filter, count: settings.count), timeout: settings.timeout,
            start: start, write: write)
        let elapsed = WallClock.monotonic() - start
        let failure = host.failure
        await host.shutDown()
        for line in CheckReport.verdict(check, elapsed: elapsed, activeScan: settings.activeScan) { write(line) }
        // A controller that went away before the check was done: the verdict would blame the tags.
        if let failure, !check.isComplete {
            let text = "\(failure)"
            return .failed(text.contains(name) ? text : "Bluetooth controller \(name) failed: \(text)")
        }
        return check.passed ? .heard : .silent
    }

    /// Feeds the events to the check until it has heard enough, the scan ends, or `timeout` seconds from `start`.
    static func listen(
        to events: AsyncStream<[UInt8]>, _ initial: BeaconCheck, timeout: Double, start: Double,
        write: @escaping @Sendable (String) -> Void
    ) async -> BeaconCheck {
        await withTaskGroup(of: BeaconCheck?.self) { group in
            group.addTask {
                var check = initial
                for await event in events {
                    let new = check.ingest(event[...], framing: .h4, elapsed: WallClock.monotonic() - start)
                    for (offset, heard) in new.enumerated() {
                        write(CheckReport.heard(heard, number: check.heard.count - new.count + offset + 1))
                    }
                    if check.isComplete { break }
                }
                return check
            }
            group.addTask {
                let remaining = timeout - (WallClock.monotonic() - start)
                try? await Task.sleep(for: .milliseconds(Int((max(0, remaining) * 1000).rounded(.up))))
                return nil
            }
            // The first to finish ends the other: the scan's stream ends when its task is cancelled.
            var result = initial
            while let next = await group.next() {
                group.cancelAll()
                if let next { result = next }
            }
            return result
        }
    }
}
