/// Where a server listens and the limits it keeps. Times in seconds, sizes in bytes.
public struct HTTPServerConfiguration: Sendable {
    /// The IPv4 address to bind: loopback unless told otherwise.
    public var host: String = "127.0.0.1"
    /// The port; 0 lets the kernel pick one (read it back from ``HTTPServer/port``).
    public var port: UInt16 = 8080
    /// Open connections at most, streams included; beyond it a new connection gets 503 and is closed.
    public var maximumConnections = 64
    /// Connections the kernel may complete before the server accepts them (capped by `net.core.somaxconn`). Large,
    /// so that a burst is answered (503 beyond the limit) rather than left retrying its SYN for seconds.
    public var listenBacklog = 1024
    /// Open event streams at most; beyond it a request for one gets 503.
    public var maximumStreams = 32
    /// The longest request line.
    public var maximumRequestLineBytes = 2048
    /// The longest request head (request line and headers).
    public var maximumHeadBytes = 8192
    /// The most header fields.
    public var maximumHeaderCount = 64
    /// Time from accepting a connection to having its whole request head; then it is closed (slowloris).
    public var headerTimeout = 10.0
    /// The largest request body, in bytes; 0 (the default) takes none: only GET is served, and a request with a
    /// body is refused (400). Above 0, POST and PUT are served too, with `Content-Length` bodies up to this size.
    public var maximumBodyBytes = 0
    /// Time from accepting a connection to having its whole request, head and body; then it is closed (a body that
    /// trickles in). The head must still arrive within ``headerTimeout``.
    public var requestTimeout = 30.0
    /// Time a response may take to leave without any progress; then the connection is closed.
    public var writeTimeout = 10.0
    /// Bytes a stream may have waiting for its reader; a reader that falls further behind is dropped.
    public var maximumStreamBacklog = 256 * 1024
    /// Bytes of broadcasts waiting for the server's thread; beyond it every stream is dropped (they reconnect).
    public var maximumPendingBroadcast = 4 * 1024 * 1024
    /// The kernel's send buffer per connection, so that the kernel, too, holds only a bounded amount per reader.
    public var socketSendBuffer = 64 * 1024
    /// How often an idle stream gets a comment line, seconds.
    public var keepAliveInterval = 15.0
    /// The comment line sent to idle streams.
    public var keepAlive: [UInt8] = Array(": keep-alive\n\n".utf8)

    public init() {}

    /// Reads `HOST:PORT` (an IPv4 address or `localhost`, and a port 0...65535).
    public init(listen text: String) throws(HTTPServerError) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            throw .invalidAddress(text)
        }
        let host = String(text[..<colon])
        self.host = host == "localhost" ? "127.0.0.1" : host
        self.port = port
        guard IPv4.parse(self.host) != nil else { throw .invalidAddress(text) }
    }
}
