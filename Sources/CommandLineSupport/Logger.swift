#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A small stderr logger shaped like swift-log's: a label, a level, one line per event.
///
/// Executables make one and pass it down; libraries do not log.
public struct Logger: Sendable {
    /// How much to say.
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case debug = 0
        case info = 1
        case warning = 2
        case error = 3

        /// Parses `debug`, `info`, `warning` or `error`.
        public init?(_ text: String) {
            guard let level = Self.allCases.first(where: { "\($0)" == text }) else { return nil }
            self = level
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Names the program in every line.
    public var label: String
    /// The least severe level printed.
    public var level: Level

    public init(label: String, level: Level = .info) {
        self.label = label
        self.level = level
    }

    /// Logs a line at `level`.
    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        guard level >= self.level else { return }
        printError("\(WallClock.timestamp()) \(label) \(level): \(message())")
    }

    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}

/// The wall clock, for the shells (the pure modules take time as a parameter).
public enum WallClock {
    /// Unix time in seconds.
    public static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Seconds on a clock that never jumps, for measuring intervals and deadlines: `CLOCK_BOOTTIME`, which, unlike
    /// `CLOCK_MONOTONIC`, also counts the time the system spent suspended, so a lease judged on it ends while the
    /// machine sleeps. (A virtual machine a hypervisor froze may or may not see that time, depending on its clock
    /// source.) The MQTT client's sending deadline is on the same clock.
    public static func monotonic() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_BOOTTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// The current UTC time as `2026-11-30T12:00:00.123Z`.
    public static func timestamp() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int = 2) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(width - text.count, 0)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))T"
            + "\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec)).\(pad(Int32(spec.tv_nsec / 1_000_000), 3))Z"
    }
}

/// Reads settings from the environment.
public enum Environment {
    /// The value of an environment variable, if set and not empty.
    public static func value(_ name: String) -> String? {
        guard let raw = getenv(name) else { return nil }
        let text = String(cString: raw)
        return text.isEmpty ? nil : text
    }
}

/// A wall clock that may run faster than real time from an origin, so that an accelerated simulator and the
/// locator agree on what time it is: `origin + (wall − origin) × scale`.
public struct ScaledClock: Sendable {
    /// How many seconds pass per real second.
    public let scale: Double
    /// Where the scaled time and the wall clock coincide (Unix seconds).
    public let origin: Double

    public init() {
        scale = 1
        origin = WallClock.now()
    }

    /// Validates a scale and origin given on the command line (nil means the default).
    public init(scale: Double?, origin: Double?) throws(UsageError) {
        let scale = scale ?? 1
        guard scale > 0, scale <= 1000 else { throw UsageError("the time scale must be above 0 and at most 1000") }
        let now = WallClock.now()
        let origin = origin ?? now
        guard abs(origin - now) < 86_400 else { throw UsageError("the time origin must be within a day of now") }
        self.scale = scale
        self.origin = origin
    }

    /// The scaled time now.
    public func now() -> Double {
        origin + (WallClock.now() - origin) * scale
    }

    /// How many real seconds until the scaled clock reads `time` (zero or negative when it has passed).
    public func realSeconds(until time: Double) -> Double {
        (time - now()) / scale
    }
}
