#if canImport(Glibc)
    import Glibc
#endif

/// IPv4 helpers over Glibc.
enum IPv4 {
    static func parse(_ text: String) -> in_addr? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return address
    }

    /// A peer's address, dotted, and whether it is on loopback (127.0.0.0/8).
    static func describe(_ address: sockaddr_in) -> (address: String, loopback: Bool) {
        var copy = address.sin_addr
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &copy, &text, socklen_t(text.count)) != nil else { return ("unknown", false) }
        let bytes = text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        let host = UInt32(bigEndian: address.sin_addr.s_addr)
        return (String(decoding: bytes, as: UTF8.self), host >> 24 == 127)
    }

    static func setNonBlocking(_ descriptor: Int32) -> Bool {
        let flags = fcntl(descriptor, F_GETFL)
        return flags >= 0 && fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0
    }

    static func message(_ number: Int32) -> String {
        guard let text = strerror(number) else { return "unknown error" }
        return String(cString: text)
    }
}
