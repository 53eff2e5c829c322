import CommandLineSupport
import Glibc
import WhereaboutsJSON
import WhereaboutsSettings

/// `whereabouts-bench watch-process`: samples a running process's resident memory and CPU time from /proc until
/// it exits (or `--seconds` pass), then prints the figures.
///
/// VmHWM is the kernel's own peak; the last sample before the process exits is at most one interval old.
enum WatchProcessCommand {
    static let table: [Setting] = [.value("label"), .value("pid"), .value("interval"), .value("seconds")]

    static func run(_ settings: Settings) throws -> ExitStatus {
        guard let pidNumber = try settings.integer("pid"), let pid = Int32(exactly: pidNumber) else {
            throw UsageError("--pid PID is required")
        }
        let interval = try settings.number("interval") ?? 0.1
        let limit = try settings.number("seconds") ?? 600
        let label = settings.value("label") ?? "process"
        guard let first = ProcessSample(pid: pid) else { throw RuntimeError("no process \(pid)") }
        let start = Measure.monotonic()
        var last = first
        var residents: [Double] = [Double(first.residentKB)]
        var anonymousPeak = first.anonymousKB
        var fileAtPeak = first.fileKB
        while Measure.monotonic() - start < limit {
            usleep(useconds_t(interval * 1_000_000))
            guard let sample = ProcessSample(pid: pid) else { break }
            last = sample
            residents.append(Double(sample.residentKB))
            if sample.anonymousKB > anonymousPeak {
                anonymousPeak = sample.anonymousKB
                fileAtPeak = sample.fileKB
            }
        }
        let elapsed = Measure.monotonic() - start
        residents.sort()
        Measure.emit([
            ("figure", .string(label)),
            ("samples", .number(Double(residents.count))),
            ("vmrss_median_kb", .number(Measure.quantile(residents, 0.5) ?? 0)),
            ("vmrss_max_kb", .number(residents.last ?? 0)),
            ("vmhwm_kb", .number(Double(last.peakResidentKB))),
            ("rss_anon_max_kb", .number(Double(anonymousPeak))),
            ("rss_file_kb", .number(Double(fileAtPeak))),
            ("cpu_seconds", .number(last.cpuSeconds - first.cpuSeconds)),
            ("wall_seconds", .number(elapsed)),
            ("cpu_percent", .number(100 * (last.cpuSeconds - first.cpuSeconds) / max(elapsed, 1e-9))),
        ])
        return .success
    }
}
