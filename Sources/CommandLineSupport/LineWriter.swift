#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Appends lines to a file (a recording), each ``write(_:)`` as one `write(2)` with no buffering in between, so a
/// crash loses nothing already written and never leaves half of a batch's lines behind.
///
/// Opening a file to append repairs a torn last line (what a crash in the middle of a write, or a full disk, can
/// leave): the partial line is cut off, so the next run's first line does not merge with it, and
/// ``repairedBytes`` says how much was dropped. ``reopen()`` opens the path again (after logrotate moved the file).
public final class LineWriter {
    /// The file's path.
    public let path: String
    /// Bytes of a torn last line cut off when the file was (re)opened; 0 when it ended cleanly.
    public private(set) var repairedBytes = 0
    private var descriptor: Int32
    private let appending: Bool

    /// Opens `path` for appending, creating it if needed, and cuts off a torn last line.
    public init(appendingTo path: String) throws(RuntimeError) {
        self.path = path
        appending = true
        descriptor = -1
        try open()
    }

    /// Opens `path` for writing, replacing it.
    public init(replacing path: String) throws(RuntimeError) {
        self.path = path
        appending = false
        descriptor = -1
        try open()
    }

    /// Writes text as it is (include the newlines), in one system call when the kernel takes it all.
    public func write(_ text: String) throws(RuntimeError) {
        var text = text
        let failed = text.withUTF8 { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return true
                }
                offset += written
            }
            return false
        }
        if failed { throw RuntimeError("cannot write \(path): \(FileAccess.systemMessage())") }
    }

    /// Closes the file and opens the same path again, appending (for logrotate); repairs a torn last line.
    public func reopen() throws(RuntimeError) {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        try open()
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    private func open() throws(RuntimeError) {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (appending ? O_APPEND : O_TRUNC)
        descriptor = Glibc.open(path, flags, 0o644)
        guard descriptor >= 0 else {
            throw RuntimeError("cannot open \(path) for writing: \(FileAccess.systemMessage())")
        }
        repairedBytes = 0
        if appending { try repairTornLine() }
    }

    /// Cuts the file back to its last newline when it does not end with one.
    private func repairTornLine() throws(RuntimeError) {
        let reader = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { throw RuntimeError("cannot read \(path): \(FileAccess.systemMessage())") }
        defer { close(reader) }
        let size = lseek(reader, 0, SEEK_END)
        guard size > 0 else { return }
        var end = size
        var chunk = [UInt8](repeating: 0, count: 4096)
        // Look back for the last newline, a chunk at a time.
        while end > 0 {
            let start = max(end - off_t(chunk.count), 0)
            let length = Int(end - start)
            let read = chunk.withUnsafeMutableBytes { pread(reader, $0.baseAddress, length, start) }
            guard read == length else { throw RuntimeError("cannot read \(path): \(FileAccess.systemMessage())") }
            if let index = chunk[0..<length].lastIndex(of: UInt8(ascii: "\n")) {
                let keep = start + off_t(index) + 1
                if keep < size { try truncate(to: keep, size: size) }
                return
            }
            end = start
        }
        try truncate(to: 0, size: size)  // one torn line and nothing before it
    }

    private func truncate(to length: off_t, size: off_t) throws(RuntimeError) {
        guard ftruncate(descriptor, length) == 0 else {
            throw RuntimeError("cannot repair the torn last line of \(path): \(FileAccess.systemMessage())")
        }
        repairedBytes = Int(size - length)
    }
}
