/// Where a server listens and the limits it keeps. Times in seconds, sizes in bytes.
public struct HTTPServerConfiguration: Sendable {
    /// The IPv4 address to bind: loopback unless told otherwise.
    public var host: String = "127.0.0.1"
    /// The port; 0 lets the kernel pick one (read it back from ``HTTPServer/port``).
    public var port: UInt16 = 8080
    /// Request connections open at most (streams have their own budget, ``maximumStreams``). A newcomer that finds
    /// them all taken pushes out the oldest connection that has not finished its request (or only lingers for the
    /// peer's close), which is told 503; only when every one is being answered is the newcomer refused (503).
    public var maximumConnections = 256
    /// Request connections open at most from one peer address: a newcomer from an address at its limit pushes out
    /// that address's own oldest unfinished connection, so that one address cannot take every slot.
    public var maximumConnectionsPerAddress = 192
    /// Connections the kernel may complete before the server accepts them (capped by `net.core.somaxconn`). Large,
    /// so that a burst is answered rather than left retrying its SYN for seconds.
    public var listenBacklog = 1024
    /// Open event streams at most, apart from the request connections, so that streams never starve page loads.
    /// Beyond it (or beyond ``maximumStreamsPerAddress``) a request for a stream pushes out the stream furthest
    /// behind (a reader that stopped reading), or gets 503 when every stream is keeping up.
    public var maximumStreams = 64
    /// Open event streams at most from one peer address.
    public var maximumStreamsPerAddress = 48
    /// The longest request line.
    public var maximumRequestLineBytes = 2048
    /// The longest request head (request line and headers).
    public var maximumHeadBytes = 8192
    /// The most header fields.
    public var maximumHeaderCount = 64
    /// Seconds a connection that has sent nothing waits in the kernel before the server takes it (`TCP_DEFER_ACCEPT`;
    /// the kernel rounds up to its SYN-ACK retries, 1 s then 3 s); 0 takes every connection at once. An idle flood
    /// then costs the server's loop nothing and cannot push anyone out: the kernel hands a connection over when its
    /// first bytes arrive, and a silent one after the wait (the first-byte timeout then closes it) or never.
    public var deferAccept = 2.0
    /// Time from accepting a connection to its first byte; then it is closed. Short: a client that means to ask
    /// asks at once, and one that sends nothing must not hold a slot for the whole ``headerTimeout``.
    public var firstByteTimeout = 2.0
    /// Time from accepting a connection to having its whole request head; then it is closed (slowloris).
    public var headerTimeout = 5.0
    /// The largest request body, in bytes; 0 (the default) takes none: only GET and HEAD are served, and a request with a
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
    /// Where refusals are reported (connections given up or refused, requests refused, timeouts): one line at once,
    /// then at most one line per ``refusalLogInterval`` summing up the rest. Called on the server's thread. Every
    /// refusal is counted in ``HTTPServer/statistics`` whether or not it is logged.
    public var log: (@Sendable (String) -> Void)? = nil
    /// Seconds between refusal log lines, at least.
    public var refusalLogInterval = 10.0
    /// How long the server stops taking connections after the process ran out of file descriptors (`EMFILE`) with
    /// nothing to give up, so that it waits instead of spinning on a listener that stays readable.
    public var descriptorShortagePause = 0.1

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
