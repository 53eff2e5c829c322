import Glibc

/// Reads a broker password from a file, the way executables take secrets (not on the command line).
public enum MQTTPasswordFile {
    /// Why a password file could not be used.
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The file could not be opened or read; `errno` is the system error.
        case unreadable(path: String, errno: Int32)
        /// The file is larger than 4096 bytes, which no password is.
        case tooLarge(path: String)
        /// The file is empty, or holds only a newline.
        case empty(path: String)
        /// The file is not UTF-8 text.
        case notText(path: String)

        public var description: String {
            switch self {
            case .unreadable(let path, let code):
                "cannot read password file \(path): \(String(cString: strerror(code)))"
            case .tooLarge(let path): "password file \(path) is larger than 4096 bytes"
            case .empty(let path): "password file \(path) is empty"
            case .notText(let path): "password file \(path) is not UTF-8 text"
            }
        }
    }

    /// The file's contents with one trailing newline (`\n` or `\r\n`) removed, as editors and `echo` add one.
    public static func read(path: String) throws(Failure) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, errno: errno) }
        defer { close(descriptor) }
        let limit = 4096
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, errno: errno)
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
            guard bytes.count <= limit else { throw .tooLarge(path: path) }
        }
        if bytes.last == UInt8(ascii: "\n") {
            bytes.removeLast()
            if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        }
        guard !bytes.isEmpty else { throw .empty(path: path) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notText(path: path) }
        return text
    }
}
