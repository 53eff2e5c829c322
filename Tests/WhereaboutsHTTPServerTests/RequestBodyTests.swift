import Foundation
import Glibc
import Testing
import WhereaboutsHTTPServer

/// The real server with request bodies allowed (the map editor's saves and uploads), against well-formed and
/// hostile requests. The default server (no bodies) is `HostileRequestTests`' and keeps refusing every body.
@Suite("HTTP server with request bodies")
struct RequestBodyTests {
    /// Limits small enough to reach: 1 KiB bodies, and the whole request within `requestTimeout` (long by default:
    /// a test thread that a loaded machine starves between its sends must not see its request timed out).
    static func configuration(requestTimeout: Double = 20) -> HTTPServerConfiguration {
        var configuration = HTTPServerConfiguration.testing()
        configuration.maximumBodyBytes = 1024
        configuration.requestTimeout = requestTimeout
        return configuration
    }

    /// Answers with the method, the peer and the body's length on the first line, then the body itself.
    static let echo: HTTPServer.RequestHandler = { request in
        let line = "\(request.head.method) \(request.peer) \(request.isLoopbackPeer) \(request.body.count)\n"
        return HTTPResponse(status: 200, headers: [], body: .complete(Array(line.utf8) + request.body))
    }

    func withBodyServer<Result: Sendable>(
        requestTimeout: Double = 20, _ body: @Sendable (HTTPServer) async throws -> Result
    ) async throws -> Result {
        try await withServer(Self.configuration(requestTimeout: requestTimeout), requestHandler: Self.echo, body)
    }

    /// The body of a response: what follows its head.
    func content(of response: String) -> String {
        guard let range = response.range(of: "\r\n\r\n") else { return "" }
        return String(response[range.upperBound...])
    }

    @Test("a POST and a PUT reach the handler with their whole body, the peer's address and that it is loopback")
    func postAndPut() async throws {
        try await withBodyServer { server in
            for method in ["POST", "PUT"] {
                let response = try RawClient.exchange(
                    port: server.port,
                    "\(method) /edit/api/save HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nhello world")
                #expect(status(of: response) == 200)
                #expect(content(of: response) == "\(method) 127.0.0.1 true 11\nhello world")
            }
            #expect(server.statistics.requests == 2)
        }
    }

    @Test("a body that arrives in pieces is answered once it is whole; bytes past its length are not part of it")
    func bodyInPieces() async throws {
        try await withBodyServer { server in
            let client = try RawClient(port: server.port)
            client.send("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 9\r\n\r\nabc")
            try await Task.sleep(for: .milliseconds(50))
            client.send("def")
            try await Task.sleep(for: .milliseconds(50))
            client.send("ghiEXTRA")
            let response = String(decoding: client.readToEnd().bytes, as: UTF8.self)
            #expect(content(of: response) == "POST 127.0.0.1 true 9\nabcdefghi")
        }
    }

    @Test("every byte value of a binary body arrives as sent")
    func binaryBody() async throws {
        try await withBodyServer { server in
            let bytes = (0..<1024).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
            let client = try RawClient(port: server.port)
            client.send(Array("PUT /u HTTP/1.1\r\nHost: t\r\nContent-Length: 1024\r\n\r\n".utf8) + bytes)
            let response = client.readToEnd().bytes
            let head = Array("PUT 127.0.0.1 true 1024\n".utf8)
            #expect(response.suffix(1024 + head.count).elementsEqual(head + bytes))
        }
    }

    @Test(
        "refused bodies: no length 411, over the limit 413 from the head alone, chunked 501, a bad length 400",
        arguments: [
            ("POST / HTTP/1.1\r\nHost: t\r\n\r\n", 411),
            ("PUT / HTTP/1.1\r\nHost: t\r\n\r\n", 411),
            ("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1025\r\n\r\n", 413),
            ("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999999999999999\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 501),
            ("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: +5\r\n\r\nhello", 400),
            ("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 5, 5\r\n\r\nhello", 400),
            ("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello", 400),
            ("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 0x5\r\n\r\nhello", 400),
            ("GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello", 400),
        ])
    func refused(request: String, expected: Int) async throws {
        try await withBodyServer { server in
            let response = try RawClient.exchange(port: server.port, request)
            #expect(status(of: response) == expected, "\(request.debugDescription) got \(response.prefix(40))")
            #expect(server.statistics.requests == 0)
        }
    }

    @Test("other methods get 405 with the four that are allowed", arguments: ["DELETE", "PATCH", "OPTIONS", "TRACE"])
    func otherMethods(method: String) async throws {
        try await withBodyServer { server in
            let response = try RawClient.exchange(port: server.port, "\(method) / HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(status(of: response) == 405)
            #expect(response.contains("Allow: GET, HEAD, POST, PUT\r\n"))
        }
    }

    @Test("a body that never completes is closed after the request timeout, and others are still served")
    func slowBody() async throws {
        try await withBodyServer(requestTimeout: 1) { server in
            let slow = try RawClient(port: server.port, timeout: 0.2)
            slow.send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n")
            let closed = try await slow.trickleUntilClosed()
            #expect(closed, "the slow body was never closed")
            #expect(server.statistics.bodyTimeouts == 1)
            #expect(server.statistics.requests == 0)
            let response = try RawClient.exchange(
                port: server.port, "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nok")
            #expect(content(of: response) == "POST 127.0.0.1 true 2\nok")
        }
    }

    @Test("Expect: 100-continue gets an interim 100 before the body is sent, then the answer")
    func expectContinue() async throws {
        try await withBodyServer { server in
            let client = try RawClient(port: server.port)
            client.send("PUT /u HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
            let interim = client.read(until: "\r\n\r\n")
            #expect(interim == "HTTP/1.1 100 Continue\r\n\r\n")
            client.send("data")
            let response = String(decoding: client.readToEnd().bytes, as: UTF8.self)
            #expect(status(of: response) == 200)
            #expect(content(of: response) == "PUT 127.0.0.1 true 4\ndata")
        }
    }

    @Test("a head-only handler's server still refuses every body and every method but GET and HEAD")
    func headOnlyDefault() async throws {
        try await withServer { server in
            let post = try RawClient.exchange(
                port: server.port, "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nok")
            #expect(status(of: post) == 400)
            let put = try RawClient.exchange(port: server.port, "PUT / HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(status(of: put) == 405)
            #expect(put.contains("Allow: GET, HEAD\r\n"))
        }
    }
}
