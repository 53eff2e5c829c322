/// Notices when a scan that was hearing adverts goes silent, so the shell can restart it.
///
/// A known BlueZ failure: the controller stays up, the socket stays open, and advertising reports simply stop.
/// The watchdog is armed once ``Configuration/minimumReports`` reports have been heard since the scan (re)started;
/// an armed watchdog that then hears nothing for the current timeout asks for a restart. After a restart it stays
/// armed and the timeout doubles (up to ``Configuration/maximumTimeout``), so a controller that stays dead is
/// retried less and less often; any report brings the timeout back to its base. A quiet room that never armed it
/// never causes a restart. Time is an input (monotonic seconds).
public struct ScanWatchdog: Sendable {
    /// When to act.
    public struct Configuration: Sendable, Hashable {
        /// Silence that triggers a restart, seconds.
        public var timeout: Double
        /// The longest silence waited for between restarts of a scan that stays silent, seconds.
        public var maximumTimeout: Double
        /// Reports needed after a (re)start before silence counts as a failure.
        public var minimumReports: Int

        /// A configuration; the defaults restart after 30 s of silence following at least 10 reports.
        public init(timeout: Double = 30, maximumTimeout: Double = 600, minimumReports: Int = 10) {
            self.timeout = max(timeout, 1)
            self.maximumTimeout = max(maximumTimeout, self.timeout)
            self.minimumReports = max(minimumReports, 1)
        }
    }

    /// The configuration in force.
    public let configuration: Configuration
    /// Restarts requested so far.
    public private(set) var restarts = 0
    private var lastActivity: Double
    private var reportsSinceStart = 0
    private var armed = false
    private var currentTimeout: Double

    /// A watchdog for a scan started at `now`.
    public init(configuration: Configuration = Configuration(), now: Double) {
        self.configuration = configuration
        lastActivity = now
        currentTimeout = configuration.timeout
    }

    /// Records `count` advertising reports heard at `now`.
    public mutating func heard(_ count: Int = 1, now: Double) {
        guard count > 0 else { return }
        lastActivity = now
        reportsSinceStart += count
        currentTimeout = configuration.timeout
        if reportsSinceStart >= configuration.minimumReports { armed = true }
    }

    /// Whether the scan should be restarted now; if so, counts the restart and starts timing again from `now`.
    public mutating func shouldRestart(now: Double) -> Bool {
        guard armed, now - lastActivity >= currentTimeout else { return false }
        restarts += 1
        lastActivity = now
        reportsSinceStart = 0
        currentTimeout = min(currentTimeout * 2, configuration.maximumTimeout)
        return true
    }
}
