/// Why a throwaway broker could not be prepared, started or restarted.
///
/// Every case carries enough text to explain the failure in a test report without rerunning it.
public enum BrokerFixtureError: Error, CustomStringConvertible {
    /// A required program is not installed; the test must fail, not skip.
    case toolMissing(name: String, package: String)
    /// A helper program (`openssl`, `mosquitto_passwd`) exited with an error.
    case toolFailed(command: String, output: String)
    /// A file in the broker's temporary directory could not be written.
    case fileNotWritten(path: String, reason: String)
    /// No free loopback port could be found or bound.
    case noFreePort(reason: String)
    /// mosquitto did not start listening; `log` holds its output.
    case brokerDidNotStart(port: Int, log: String)

    public var description: String {
        switch self {
        case .toolMissing(let name, let package):
            "'\(name)' was not found in PATH or /usr/sbin; install it (apt-get install \(package))"
        case .toolFailed(let command, let output):
            "'\(command)' failed: \(output)"
        case .fileNotWritten(let path, let reason):
            "could not write \(path): \(reason)"
        case .noFreePort(let reason):
            "no free loopback port: \(reason)"
        case .brokerDidNotStart(let port, let log):
            "mosquitto did not start listening on 127.0.0.1:\(port); its log:\n\(log)"
        }
    }
}
