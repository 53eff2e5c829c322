/// One accepted socket and where its exchange stands. The poll loop's own: only the server's thread touches it.
final class HTTPConnection {
    enum Phase: Equatable {
        /// Waiting for the request head, until the deadline.
        case readingHead
        /// Head accepted; waiting for the body's `length` bytes after the head's `headLength`, until the deadline.
        case readingBody(head: HTTPRequestHead, headLength: Int, length: Int)
        /// Sending a response, then closing.
        case responding
        /// Response sent and our side shut; reading until the peer closes (so that no reset cuts the response).
        case lingering
        /// An open event stream.
        case streaming
    }

    /// A number no other connection of this server had (descriptors are reused; this is not).
    let id: Int
    let descriptor: Int32
    /// The peer's address, dotted, and whether it is on loopback.
    let peer: (address: String, loopback: Bool)
    let accepted: Double
    var phase = Phase.readingHead
    var received: [UInt8] = []
    var output = OutputQueue()
    var discarded = 0
    var deadline: Double
    var lastProgress: Double

    init(id: Int, descriptor: Int32, peer: (address: String, loopback: Bool), now: Double, firstByteTimeout: Double) {
        self.id = id
        self.descriptor = descriptor
        self.peer = peer
        accepted = now
        deadline = now + firstByteTimeout
        lastProgress = now
    }

    /// The phase without its data: cheap to compare, where comparing phases would copy a request head.
    enum Stage { case readingHead, readingBody, responding, lingering, streaming }

    var stage: Stage {
        switch phase {
        case .readingHead: .readingHead
        case .readingBody: .readingBody
        case .responding: .responding
        case .lingering: .lingering
        case .streaming: .streaming
        }
    }

    var pending: Int { output.pending }

    /// Queues bytes to send. A connection that had nothing to send starts its write timeout now: the time it
    /// sat idle is not a reader failing to keep up (a stream quiet for longer than the timeout was dropped at its
    /// next broadcast, before the poll loop had even tried to write it).
    func enqueue(_ bytes: [UInt8], now: Double) {
        if output.pending == 0 { lastProgress = now }
        output.append(bytes)
    }
}
