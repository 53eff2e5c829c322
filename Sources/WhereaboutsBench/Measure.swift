import Glibc
import WhereaboutsJSON

/// Clocks and process figures for the benchmarks.
enum Measure {
    /// CPU seconds this thread has used: what "per core" means here, unaffected by other load on the machine.
    static func threadCPUTime() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Seconds on the monotonic clock.
    static func monotonic() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// The `p` quantile (0…1) of sorted values, nearest rank.
    static func quantile(_ sorted: [Double], _ p: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let rank = Int((Double(sorted.count) * p).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    /// Prints a result object as one line of JSON on standard output.
    static func emit(_ members: [(key: String, value: JSONValue)]) {
        print(JSONWriter().string(.object(JSONObject(members))))
    }
}

/// What /proc says of a process: resident memory and CPU time.
struct ProcessSample {
    /// Resident set now, kB.
    var residentKB: Int
    /// Peak resident set, kB.
    var peakResidentKB: Int
    /// The part of the resident set that is the process's own (heap, stacks): RssAnon, kB.
    var anonymousKB: Int
    /// The part that is mapped files, mostly shared libraries shared with other processes: RssFile, kB.
    var fileKB: Int
    /// User plus system CPU time, seconds.
    var cpuSeconds: Double

    /// Reads /proc/<pid>/status and /proc/<pid>/stat; nil once the process is gone.
    init?(pid: Int32) {
        guard let status = Self.read("/proc/\(pid)/status"), let stat = Self.read("/proc/\(pid)/stat") else {
            return nil
        }
        func kilobytes(_ key: String) -> Int? {
            for line in status.split(separator: "\n") where line.hasPrefix(key + ":") {
                return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            }
            return nil
        }
        guard let resident = kilobytes("VmRSS"), let peak = kilobytes("VmHWM"), let anonymous = kilobytes("RssAnon"),
            let file = kilobytes("RssFile")
        else { return nil }
        // The command name may hold spaces; the fields after its closing parenthesis are fixed.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, utime 14, stime 15 (1-based), so indices 11 and 12 here.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        residentKB = resident
        peakResidentKB = peak
        anonymousKB = anonymous
        fileKB = file
        cpuSeconds = (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    private static func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
