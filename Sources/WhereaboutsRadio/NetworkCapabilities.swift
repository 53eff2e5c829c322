import Glibc

/// Which of the two capabilities raw HCI needs this process has: `CAP_NET_RAW` (the kernel refuses LE commands and
/// LE events on a raw HCI socket without it) and `CAP_NET_ADMIN` (which the agent's unit grants beside it), read
/// from the effective set in `/proc/self/status`, so that a refused permission can say which one is missing.
struct NetworkCapabilities: Sendable, Hashable {
    /// `CAP_NET_RAW` (capability 13).
    var raw: Bool
    /// `CAP_NET_ADMIN` (capability 12).
    var admin: Bool

    init(raw: Bool, admin: Bool) {
        self.raw = raw
        self.admin = admin
    }

    /// From the text of `/proc/PID/status`: its `CapEff:` line, 64 bits in hex. Nil without one.
    init?(status: String) {
        guard
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
            let mask = UInt64(line.dropFirst("CapEff:".count).trimmingPrefix(while: \.isWhitespace), radix: 16)
        else { return nil }
        raw = mask & (1 << 13) != 0
        admin = mask & (1 << 12) != 0
    }

    /// This process's, or nil when `/proc/self/status` cannot be read.
    static func current() -> NetworkCapabilities? {
        guard let file = fopen("/proc/self/status", "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            bytes += chunk[..<count]
            if count < chunk.count { break }
        }
        return NetworkCapabilities(status: String(decoding: bytes, as: UTF8.self))
    }

    /// Which are missing, and what to do.
    var explanation: String {
        let remedy =
            "run it as root, or grant both (AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN, as "
            + "whereabouts-agent.service does)"
        switch (raw, admin) {
        case (false, false): return "this process has neither CAP_NET_RAW nor CAP_NET_ADMIN: " + remedy
        case (false, true): return "this process lacks CAP_NET_RAW (it has CAP_NET_ADMIN): " + remedy
        case (true, false): return "this process lacks CAP_NET_ADMIN (it has CAP_NET_RAW): " + remedy
        case (true, true):
            return "this process has CAP_NET_RAW and CAP_NET_ADMIN, so something else refuses (a security module "
                + "such as AppArmor or SELinux, or a container)"
        }
    }
}
