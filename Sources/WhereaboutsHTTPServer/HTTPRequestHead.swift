/// A request's line and headers, as the server accepted them.
public struct HTTPRequestHead: Sendable, Equatable {
    /// The method, as sent: `GET` or `HEAD`, or with request bodies allowed
    /// (``HTTPServerConfiguration/maximumBodyBytes``) also `POST` and `PUT`. The server hands a `HEAD` to its
    /// handler as a `GET` and sends the answer's head only.
    public var method: String
    /// The path, from the request target up to any `?`.
    public var path: String
    /// What followed the `?`, if anything.
    public var query: String?
    /// `HTTP/1.0` or `HTTP/1.1`.
    public var version: String
    /// The header fields in order; names as sent.
    public var headers: [(name: String, value: String)]

    /// The first value of a header, by case-insensitive name.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    public static func == (lhs: HTTPRequestHead, rhs: HTTPRequestHead) -> Bool {
        lhs.method == rhs.method && lhs.path == rhs.path && lhs.query == rhs.query && lhs.version == rhs.version
            && lhs.headers.elementsEqual(rhs.headers) { $0.name == $1.name && $0.value == $1.value }
    }
}

/// Reads a request head from the bytes received so far, strictly (RFC 9112), within fixed limits.
///
/// Refused: a request line over ``maximumRequestLineBytes`` (414), a head over ``maximumHeadBytes`` or with more than
/// ``maximumHeaderCount`` fields (431), anything but `METHOD SP /target SP HTTP/1.x` (400; 505 for another version),
/// bare CR or LF, folded or nameless headers, control bytes, a missing or repeated `Host` in HTTP/1.1, any body
/// (`Content-Length` other than 0, or `Transfer-Encoding`), and methods other than GET and HEAD (405).
///
/// With ``maximumBodyBytes`` above 0, `POST` and `PUT` are accepted too, with a body of exactly `Content-Length`
/// bytes: one that names no length gets 411, one over the limit 413 (from the head, before any body is read), a
/// length that is not plain digits or is given twice 400, and `Transfer-Encoding` (chunked bodies) 501. A `GET` or
/// `HEAD` still has no body.
public struct HTTPRequestParser: Sendable {
    /// The outcome for the bytes so far.
    public enum Outcome: Sendable, Equatable {
        /// Not a whole head yet, and nothing wrong so far.
        case incomplete
        /// A whole, acceptable head. Its body, if any, is the ``HTTPRequestParser/bodyLength(of:)`` bytes after
        /// the head's ``HTTPRequestParser/headLength(of:)`` bytes.
        case complete(HTTPRequestHead)
        /// A request to refuse with this status.
        case refused(status: Int)
    }

    public var maximumRequestLineBytes: Int
    public var maximumHeadBytes: Int
    public var maximumHeaderCount: Int
    /// The largest request body accepted; 0 accepts none (GET only).
    public var maximumBodyBytes: Int

    public init(
        maximumRequestLineBytes: Int = 2048, maximumHeadBytes: Int = 8192, maximumHeaderCount: Int = 64,
        maximumBodyBytes: Int = 0
    ) {
        self.maximumRequestLineBytes = maximumRequestLineBytes
        self.maximumHeadBytes = maximumHeadBytes
        self.maximumHeaderCount = maximumHeaderCount
        self.maximumBodyBytes = max(maximumBodyBytes, 0)
    }

    /// The bytes of the head in `bytes` (request line, headers and the empty line), when it is all there.
    public static func headLength(of bytes: [UInt8]) -> Int? {
        var index = 0
        while index + 3 < bytes.count {
            if bytes[index] == cr, bytes[index + 1] == lf, bytes[index + 2] == cr, bytes[index + 3] == lf {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    /// The length of an accepted request's body: its `Content-Length`, or 0.
    public static func bodyLength(of request: HTTPRequestHead) -> Int {
        request.header("Content-Length").flatMap { Int($0) } ?? 0
    }

    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")

    /// Examines the bytes received so far on a connection.
    public func parse(_ bytes: [UInt8]) -> Outcome {
        // The end of the head: the first empty line.
        let end = Self.headLength(of: bytes).map { $0 - 4 }
        let firstLineEnd = bytes.firstIndex(of: Self.lf)
        if (firstLineEnd ?? bytes.count) > maximumRequestLineBytes + 1 { return .refused(status: 414) }
        guard let end else {
            if bytes.count > maximumHeadBytes { return .refused(status: 431) }
            // A bare LF or stray CR is wrong however the head ends.
            if Self.hasBareLineBreak(bytes[...]) { return .refused(status: 400) }
            return .incomplete
        }
        if end + 4 > maximumHeadBytes { return .refused(status: 431) }
        let head = bytes[..<end]
        if Self.hasBareLineBreak(head) { return .refused(status: 400) }
        var lines: [ArraySlice<UInt8>] = []
        var start = head.startIndex
        var position = head.startIndex
        while position < head.endIndex {
            if head[position] == Self.cr {
                lines.append(head[start..<position])
                position += 2
                start = position
            } else {
                position += 1
            }
        }
        lines.append(head[start..<head.endIndex])
        guard let requestLine = lines.first else { return .refused(status: 400) }
        guard lines.count - 1 <= maximumHeaderCount else { return .refused(status: 431) }
        let parts = requestLine.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, let method = Self.token(parts[0]), let target = Self.target(parts[1]) else {
            return .refused(status: 400)
        }
        let version = String(decoding: parts[2], as: UTF8.self)
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            return .refused(status: version.hasPrefix("HTTP/") ? 505 : 400)
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")),
                let name = Self.token(line[line.startIndex..<colon]),
                let value = Self.fieldValue(line[(colon + 1)...])
            else { return .refused(status: 400) }
            headers.append((name, value))
        }
        let request = HTTPRequestHead(
            method: method, path: target.path, query: target.query, version: version, headers: headers)
        let hosts = headers.filter { $0.name.lowercased() == "host" }.count
        if hosts > 1 || (version == "HTTP/1.1" && hosts == 0) { return .refused(status: 400) }
        if let refusal = refusal(ofBody: request) { return .refused(status: refusal) }
        return .complete(request)
    }

    /// The status to refuse a request with for its method and body, or nil when both are acceptable.
    private func refusal(ofBody request: HTTPRequestHead) -> Int? {
        let lengths = request.headers.filter { $0.name.lowercased() == "content-length" }.map(\.value)
        let transferEncoding = request.header("Transfer-Encoding") != nil
        // HEAD is GET without the body in the answer: no body in the request either.
        let bodiless = request.method == "GET" || request.method == "HEAD"
        guard maximumBodyBytes > 0 else {
            if transferEncoding || lengths.contains(where: { $0 != "0" }) { return 400 }
            return bodiless ? nil : 405
        }
        guard bodiless || request.method == "POST" || request.method == "PUT" else { return 405 }
        if transferEncoding { return 501 }
        guard lengths.count <= 1 else { return 400 }
        guard let text = lengths.first else { return bodiless ? nil : 411 }
        // Plain digits only (no sign, no spaces, no list), and few enough of them to be a number.
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let length = Int(text)
        else { return 400 }
        if bodiless { return length == 0 ? nil : 400 }
        return length > maximumBodyBytes ? 413 : nil
    }

    private static func hasBareLineBreak(_ bytes: ArraySlice<UInt8>) -> Bool {
        var previous: UInt8 = 0
        for byte in bytes {
            if byte == lf && previous != cr { return true }
            if previous == cr && byte != lf { return true }
            previous = byte
        }
        return false
    }

    /// An RFC 9110 token (method or header name).
    private static func token(_ bytes: ArraySlice<UInt8>) -> String? {
        guard !bytes.isEmpty, bytes.count <= 256 else { return nil }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                continue
            default:
                guard "!#$%&'*+-.^_`|~".utf8.contains(byte) else { return nil }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// An origin-form target: `/` then visible ASCII, split at the first `?`; no fragment.
    private static func target(_ bytes: ArraySlice<UInt8>) -> (path: String, query: String?)? {
        guard bytes.first == UInt8(ascii: "/") else { return nil }
        for byte in bytes where byte < 0x21 || byte > 0x7E || byte == UInt8(ascii: "#") { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let mark = text.firstIndex(of: "?") else { return (text, nil) }
        return (String(text[..<mark]), String(text[text.index(after: mark)...]))
    }

    /// A field value without the optional whitespace around it; control bytes other than tab refused.
    private static func fieldValue(_ bytes: ArraySlice<UInt8>) -> String? {
        for byte in bytes where (byte < 0x20 && byte != 0x09) || byte == 0x7F { return nil }
        var trimmed = bytes
        while let first = trimmed.first, first == 0x20 || first == 0x09 { trimmed = trimmed.dropFirst() }
        while let last = trimmed.last, last == 0x20 || last == 0x09 { trimmed = trimmed.dropLast() }
        return String(decoding: trimmed, as: UTF8.self)
    }
}
