/// A whole request as a handler that takes bodies sees it: the head, the body, and who sent it.
public struct HTTPRequest: Sendable {
    /// The request line and headers.
    public var head: HTTPRequestHead
    /// Exactly the `Content-Length` bytes after the head; empty for a request without a body.
    public var body: [UInt8]
    /// The peer's IPv4 address, dotted (`127.0.0.1`).
    public var peer: String
    /// Whether the peer is on this host's loopback network (127.0.0.0/8).
    public var isLoopbackPeer: Bool

    public init(head: HTTPRequestHead, body: [UInt8], peer: String, isLoopbackPeer: Bool) {
        self.head = head
        self.body = body
        self.peer = peer
        self.isLoopbackPeer = isLoopbackPeer
    }
}
