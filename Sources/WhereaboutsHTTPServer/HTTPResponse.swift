/// What a handler answers: a complete response, or the start of an event stream that stays open.
public struct HTTPResponse: Sendable {
    /// What follows the headers.
    public enum Body: Sendable, Equatable {
        /// A whole body: the server adds `Content-Length`, sends it and closes the connection.
        case complete([UInt8])
        /// The first bytes of a stream: the connection stays open and receives every ``HTTPServer/broadcast(_:)``.
        case stream(initial: [UInt8])
    }

    /// The status code.
    public var status: Int
    /// Header fields, in order. The server adds `Content-Length` and `Connection: close`, and drops any field
    /// whose name or value could break the framing (line breaks, control bytes, names that are not tokens).
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Body

    public init(status: Int, headers: [(name: String, value: String)], body: Body) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The status line's reason phrase.
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 303: "See Other"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status"
        }
    }

    /// The head and, for a complete body, the body, as bytes on the wire; `headOnly` (for HEAD) leaves out the body
    /// but keeps its `Content-Length`.
    func encoded(headOnly: Bool = false) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for (name, value) in headers where Self.isSafe(name: name) && Self.isSafe(value: value) {
            let lower = name.lowercased()
            if lower == "content-length" || lower == "connection" || lower == "transfer-encoding" { continue }
            head += "\(name): \(value)\r\n"
        }
        switch body {
        case .complete(let bytes):
            head += "Content-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
            return headOnly ? Array(head.utf8) : Array(head.utf8) + bytes
        case .stream(let initial):
            head += "Connection: close\r\n\r\n"
            return headOnly ? Array(head.utf8) : Array(head.utf8) + initial
        }
    }

    /// A short plain-text response for a refused request; a 405 lists the `allowed` methods.
    static func refusal(_ status: Int, allowed: String = "GET, HEAD") -> HTTPResponse {
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "text/plain; charset=utf-8"), ("Content-Security-Policy", "default-src 'none'"),
            ("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-store"),
        ]
        if status == 405 { headers.append(("Allow", allowed)) }
        if status == 503 { headers.append(("Retry-After", "1")) }
        return HTTPResponse(
            status: status, headers: headers, body: .complete(Array("\(status) \(reason(status))\n".utf8)))
    }

    private static func isSafe(name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
            }
    }

    private static func isSafe(value: String) -> Bool {
        value.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F }
    }
}
