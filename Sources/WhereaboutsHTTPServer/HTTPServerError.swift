/// Why a server could not start.
public enum HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The listen address is not `IPv4:port`.
    case invalidAddress(String)
    /// A system call failed: its name and `errno`.
    case system(call: String, errno: Int32)
    /// The server was already run once.
    case alreadyRun

    public var description: String {
        switch self {
        case .invalidAddress(let text): "not an IPv4 address and port: \"\(text)\""
        case .system(let call, let number): "\(call) failed (errno \(number): \(IPv4.message(number)))"
        case .alreadyRun: "the server has already run"
        }
    }
}
