/// Who may change files: the editor writes the map and pictures beside it, so nobody else may.
///
/// A write (save, underlay upload) is allowed when it carries the token printed at start (the
/// `X-Whereabouts-Token` header or `?token=`), or when the listener is on loopback and the request is the editor's
/// own page on this machine: a loopback peer, a `Host` naming a loopback address (a DNS-rebinding page names its
/// own host), and no `Origin` but that host (another site's page in the same browser sends its own origin, even in
/// `no-cors` mode). Reading is not guarded: the dashboard shows the same map to anyone who can reach it.
public struct EditorAccess: Sendable {
    /// The token printed at start.
    public var token: String
    /// Whether the server listens on a loopback address only.
    public var listenerIsLoopback: Bool

    public init(token: String, listenerIsLoopback: Bool) {
        self.token = token
        self.listenerIsLoopback = listenerIsLoopback
    }

    /// Whether `request` may write.
    public func allowsWrite(_ request: EditorRequest) -> Bool {
        if carriesToken(request) { return true }
        guard listenerIsLoopback, request.isLoopbackPeer else { return false }
        if let host = request.host, !Self.isLoopbackHost(host) { return false }
        if let origin = request.origin {
            guard let host = request.host, origin == "http://" + host else { return false }
        }
        return true
    }

    /// Whether the request carries the right token, compared in time independent of where they differ.
    public func carriesToken(_ request: EditorRequest) -> Bool {
        guard !token.isEmpty else { return false }
        for offered in [request.token, request.queryValue("token")].compactMap(\.self)
        where Self.sameBytes(Array(offered.utf8), Array(token.utf8)) {
            return true
        }
        return false
    }

    static func sameBytes(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(left, right) { difference |= a ^ b }
        return difference == 0
    }

    /// `localhost`, `127.x.y.z` or `[::1]`, with or without a port.
    static func isLoopbackHost(_ host: String) -> Bool {
        var name = Substring(host.lowercased())
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            return name[name.index(after: name.startIndex)..<close] == "::1"
        }
        if let colon = name.lastIndex(of: ":") {
            guard UInt16(name[name.index(after: colon)...]) != nil else { return false }
            name = name[..<colon]
        }
        if name == "localhost" { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
