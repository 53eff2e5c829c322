#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Appends lines to a file (a recording), flushing after each write so a crash loses nothing already written.
public final class LineWriter {
    private let file: UnsafeMutablePointer<FILE>
    /// The file's path.
    public let path: String

    /// Opens `path` for appending, creating it if needed.
    public init(appendingTo path: String) throws(RuntimeError) {
        guard let file = fopen(path, "a") else {
            throw RuntimeError("cannot open \(path) for appending: \(FileAccess.systemMessage())")
        }
        self.file = file
        self.path = path
    }

    /// Opens `path` for writing, replacing it.
    public init(replacing path: String) throws(RuntimeError) {
        guard let file = fopen(path, "w") else {
            throw RuntimeError("cannot create \(path): \(FileAccess.systemMessage())")
        }
        self.file = file
        self.path = path
    }

    /// Writes text as it is (include the newline).
    public func write(_ text: String) throws(RuntimeError) {
        var text = text
        let written = text.withUTF8 { fwrite($0.baseAddress, 1, $0.count, file) }
        guard written == text.utf8.count else {
            throw RuntimeError("cannot write \(path): \(FileAccess.systemMessage())")
        }
    }

    /// Flushes buffered text to the file.
    public func flush() {
        fflush(file)
    }

    deinit {
        fclose(file)
    }
}

/// A broker address from `mqtt://host:port` or `mqtts://host:port` (port optional: 1883 and 8883).
public struct BrokerAddress: Sendable, Hashable, CustomStringConvertible {
    /// The host name or address.
    public var host: String
    /// The TCP port.
    public var port: Int
    /// Whether to use TLS.
    public var usesTLS: Bool

    /// Parses the address, or explains why not.
    public init(_ text: String) throws(UsageError) {
        let tls: Bool
        let rest: Substring
        if text.hasPrefix("mqtts://") {
            tls = true
            rest = text.dropFirst(8)
        } else if text.hasPrefix("mqtt://") {
            tls = false
            rest = text.dropFirst(7)
        } else {
            throw UsageError("the broker must be mqtt://host[:port] or mqtts://host[:port], not \"\(text)\"")
        }
        var host = String(rest)
        var port = tls ? 8883 : 1883
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            host = String(rest[..<colon])
            guard let value = Int(rest[rest.index(after: colon)...]), (1...65535).contains(value) else {
                throw UsageError("the broker port in \"\(text)\" must be a number from 1 to 65535")
            }
            port = value
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains("/") else { throw UsageError("no host in broker address \"\(text)\"") }
        self.host = host
        self.port = port
        usesTLS = tls
    }

    public var description: String { "\(usesTLS ? "mqtts" : "mqtt")://\(host):\(port)" }
}
