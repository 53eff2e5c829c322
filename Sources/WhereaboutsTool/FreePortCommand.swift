import CommandLineSupport
import WhereaboutsSettings

#if canImport(Glibc)
    import Glibc
#endif

/// `whereabouts free-port`: prints a TCP port on 127.0.0.1 that is free right now (for scripts that start a
/// private broker; the machine may be shared, so no port is assumed free).
enum FreePortCommand {
    static let interface = CommandInterface(
        program: "whereabouts free-port", synopsis: "whereabouts free-port", sections: [])

    static func run(_ settings: Settings) throws -> ExitStatus {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw RuntimeError("socket: \(FileAccess.systemMessage())") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw RuntimeError("bind: \(FileAccess.systemMessage())") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { throw RuntimeError("getsockname: \(FileAccess.systemMessage())") }
        print(UInt16(bigEndian: address.sin_port))
        return .success
    }
}
