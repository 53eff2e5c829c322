/// A broker address from `mqtt://host:port` or `mqtts://host:port` (port optional: 1883 and 8883).
public struct BrokerAddress: Sendable, Hashable, CustomStringConvertible {
    /// Why a text is not a broker address; the description says so in words.
    public enum Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// Neither `mqtt://` nor `mqtts://`.
        case scheme(String)
        /// The port is not a number from 1 to 65535.
        case port(String)
        /// There is no host, or it contains a `/`.
        case host(String)

        public var description: String {
            switch self {
            case .scheme(let text): "the broker must be mqtt://host[:port] or mqtts://host[:port], not \"\(text)\""
            case .port(let text): "the broker port in \"\(text)\" must be a number from 1 to 65535"
            case .host(let text): "no host in broker address \"\(text)\""
            }
        }
    }

    /// The host name or address.
    public var host: String
    /// The TCP port.
    public var port: Int
    /// Whether to use TLS.
    public var usesTLS: Bool

    /// Parses the address, or explains why not.
    public init(_ text: String) throws(Problem) {
        let tls: Bool
        let rest: Substring
        if text.hasPrefix("mqtts://") {
            tls = true
            rest = text.dropFirst(8)
        } else if text.hasPrefix("mqtt://") {
            tls = false
            rest = text.dropFirst(7)
        } else {
            throw .scheme(text)
        }
        var host = String(rest)
        var port = tls ? 8883 : 1883
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            host = String(rest[..<colon])
            guard let value = Int(rest[rest.index(after: colon)...]), (1...65535).contains(value) else {
                throw .port(text)
            }
            port = value
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains("/") else { throw .host(text) }
        self.host = host
        self.port = port
        usesTLS = tls
    }

    public var description: String { "\(usesTLS ? "mqtts" : "mqtt")://\(host):\(port)" }
}
