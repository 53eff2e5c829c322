import Foundation
import Glibc

/// A plain HTTP/1.0 GET to a server on 127.0.0.1, for tests that read an endpoint (the locator's metrics, the
/// Prometheus API): one request per connection, read until the server closes it, with a receive timeout.
public enum LoopbackHTTP {
    /// A response: status, header fields (names in lower case) and body.
    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: [UInt8]

        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// GETs `target` (a path with its query, already percent-encoded) from `127.0.0.1:port`.
    public static func get(port: Int, _ target: String, timeout: Int = 10) throws(BrokerFixtureError) -> Response {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw .toolFailed(command: "GET \(target)", output: "socket: \(errno)") }
        defer { close(socketDescriptor) }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socketDescriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            throw .toolFailed(command: "GET 127.0.0.1:\(port)\(target)", output: "connect: errno \(errno)")
        }
        let request = Array("GET \(target) HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(socketDescriptor, $0.baseAddress, $0.count, 0) }) == request.count else {
            throw .toolFailed(command: "GET \(target)", output: "send: errno \(errno)")
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socketDescriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { break }
            guard count > 0 else { throw .toolFailed(command: "GET \(target)", output: "recv: errno \(errno)") }
            received += buffer[0..<count]
        }
        return try parse(received, target: target)
    }

    /// Percent-encodes a query parameter's value (everything but the unreserved characters).
    public static func encode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    private static func parse(_ bytes: [UInt8], target: String) throws(BrokerFixtureError) -> Response {
        let separator = Array("\r\n\r\n".utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else {
            throw .toolFailed(command: "GET \(target)", output: "no response head in \(bytes.count) bytes")
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw .toolFailed(command: "GET \(target)", output: "bad status line: \(lines.first ?? "")")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return Response(status: status, headers: headers, body: Array(bytes[(end + separator.count)...]))
    }
}
