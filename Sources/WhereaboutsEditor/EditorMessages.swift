/// A request as the editor sees it: no socket, just what the server read and where it came from.
public struct EditorRequest: Sendable {
    /// `GET`, `POST`, `PUT`, …
    public var method: String
    /// The path, without the query.
    public var path: String
    /// The query after `?`, undecoded, or nil.
    public var query: String?
    /// The body (empty for a GET).
    public var body: [UInt8]
    /// The `X-Whereabouts-Token` header, if any.
    public var token: String?
    /// The `Host` header, if any: a write by the loopback rule must name a loopback host (no DNS rebinding).
    public var host: String?
    /// The `Origin` header, if any: a write by the loopback rule must come from the editor's own page.
    public var origin: String?
    /// Whether the peer's address is a loopback one (127.0.0.0/8).
    public var isLoopbackPeer: Bool

    public init(
        method: String, path: String, query: String? = nil, body: [UInt8] = [], token: String? = nil,
        host: String? = nil, origin: String? = nil, isLoopbackPeer: Bool
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.body = body
        self.token = token
        self.host = host
        self.origin = origin
        self.isLoopbackPeer = isLoopbackPeer
    }

    /// The query's value for `name`, percent-decoded (`+` as a space); nil when absent or badly encoded.
    public func queryValue(_ name: String) -> String? {
        guard let query else { return nil }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard Self.percentDecoded(parts[0]) == name else { continue }
            return parts.count == 2 ? Self.percentDecoded(parts[1]) : ""
        }
        return nil
    }

    /// `%XX` escapes and `+` decoded; nil when an escape is malformed or the result is not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// The editor's answer, before the server frames it.
public struct EditorResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Headers, in order (the server adds the framing ones).
    public var headers: [(String, String)]
    /// The body.
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of the first header called `name` (any case).
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}
