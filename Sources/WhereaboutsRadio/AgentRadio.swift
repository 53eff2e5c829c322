public import CommandLineSupport
import WhereaboutsAdvertising
public import WhereaboutsAgent
import WhereaboutsHCI
public import WhereaboutsRuntime

/// Where the agent's HCI events come from, ready to run: a live scan on a Bluetooth controller (the kernel's
/// `hci0`, or H4 on a UART, pty or emulator socket), or a btsnoop capture replayed. A source for the service runner.
public enum AgentRadio: ServiceSource {
    /// Scanning (and maybe advertising) on a controller; the first scan's events.
    case live(LiveScan, AsyncStream<[UInt8]>)
    /// Replaying a capture.
    case replay(BtsnoopReplay)

    /// Opens the controller and starts scanning (and advertising), or checks the capture file.
    public static func open(_ settings: AgentSettings, logger: Logger) async throws -> AgentRadio {
        if case .btsnoop(let path) = settings.source {
            try BtsnoopReplay.check(path)
            if case .on(let advertisement) = settings.advertising {
                logger.info("replaying a capture: not advertising \(advertisement.tag)")
            }
            return .replay(BtsnoopReplay(path: path, speed: settings.replaySpeed, keepsTimes: settings.keepTimes))
        }
        guard let (name, makeTransport) = ControllerOpener.transport(for: settings.source, userChannel: settings.gatt)
        else {
            throw RuntimeError("no controller to open for \(settings.source)")
        }
        guard
            let scan = LEScanParameters(
                active: settings.activeScan, intervalMilliseconds: settings.scanIntervalMilliseconds,
                windowMilliseconds: settings.scanWindowMilliseconds)
        else { throw RuntimeError("scan interval and window are out of range") }
        var opener = ControllerOpener(name: name, scan: scan, makeTransport: makeTransport)
        switch settings.advertising {
        case .on(let advertisement):
            guard let parameters = LEAdvertisingParameters(intervalMilliseconds: 200) else {
                throw RuntimeError("advertising interval out of range")
            }
            opener.advertising = (advertisement, parameters)
        case .off(let reason):
            logger.info(reason)
        }
        let (host, events): (HCIHost, AsyncStream<[UInt8]>)
        do throws(HCIError) {
            (host, events) = try await opener.open()
        } catch {
            throw RuntimeError(ControllerOpener.openFailure(name, error))
        }
        if let advertisement = opener.advertising?.advertisement {
            logger.info("advertising \(advertisement.tag) at \(advertisement.measuredPower) dBm")
        }
        logger.info("scanning on \(name) (\(LiveScan.describe(host, scan)))")
        return .live(LiveScan(opener: opener, host: host, logger: logger, takesJobs: settings.gatt), events)
    }

    /// Whether this is a live scan (windows close by the wall clock; a watchdog watches for silence).
    public var isLive: Bool {
        if case .live = self { return true }
        return false
    }

    /// Events the controller had to drop because the agent fell behind.
    public var droppedEvents: Int {
        if case .live(let scan, _) = self { return scan.droppedEvents }
        return 0
    }

    /// Stops scanning and advertising and closes the controller (a replay has nothing to close).
    public func close() async {
        if case .live(let scan, _) = self { await scan.shutDown() }
    }

    public func run(into feed: inout SourceFeed<AgentPipeline.Input>) async {
        switch self {
        case .live(let scan, let stream) where scan.takesJobs: await scan.runWithJobs(firstStream: stream, into: &feed)
        case .live(let scan, let stream): await scan.run(firstStream: stream, into: &feed)
        case .replay(let replay): await replay.run(into: &feed)
        }
    }

    public func perform(_ effect: AgentPipeline.Effect) async {
        guard case .live(let scan, _) = self else { return }
        switch effect {
        case .restartScan: await scan.restart()
        case .stopSource: await scan.stop()
        case .runGATTJob(let job): scan.gattJobs.submit(job)
        case .cancelGATTJob(let id): scan.gattJobs.cancel(id)
        }
    }
}
