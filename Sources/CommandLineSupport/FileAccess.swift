#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Whole-file reads and writes over the C library, without pulling in Foundation.
public enum FileAccess {
    /// Reads a whole file.
    ///
    /// - Throws: ``RuntimeError`` naming the path and the system's reason.
    public static func read(_ path: String, limit: Int = 256 << 20) throws(RuntimeError) -> [UInt8] {
        guard let file = fopen(path, "rb") else { throw RuntimeError("cannot open \(path): \(systemMessage())") }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if count > 0 { bytes.append(contentsOf: chunk[0..<count]) }
            if bytes.count > limit { throw RuntimeError("\(path) is larger than \(limit) bytes") }
            if count < chunk.count {
                if ferror(file) != 0 { throw RuntimeError("cannot read \(path): \(systemMessage())") }
                return bytes
            }
        }
    }

    /// Reads a whole regular file of at most `limit` bytes (settings files, and state files the process keeps); nil
    /// when there is none. It is opened without blocking, so that a FIFO at the path cannot hang the caller.
    ///
    /// - Throws: ``RuntimeError`` naming the path and the reason when the file exists but cannot be read, is not a
    ///   regular file, or is larger than `limit`.
    public static func readStateFile(_ path: String, limit: Int) throws(RuntimeError) -> [UInt8]? {
        let file = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard file >= 0 else {
            if errno == ENOENT { return nil }
            throw RuntimeError("cannot open \(path): \(systemMessage())")
        }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0 else { throw RuntimeError("cannot read \(path): \(systemMessage())") }
        guard status.st_mode & S_IFMT == S_IFREG else { throw RuntimeError("\(path) is not a regular file") }
        guard Int(status.st_size) <= limit else {
            throw RuntimeError("\(path) holds \(status.st_size) bytes, more than \(limit)")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(file, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw RuntimeError("cannot read \(path): \(systemMessage())")
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            guard bytes.count <= limit else { throw RuntimeError("\(path) grew past \(limit) bytes while read") }
        }
    }

    /// Writes a whole file, replacing it atomically (write to a temporary name, then rename). `durable` also
    /// forces the new file and then its directory to the disk, so that a power cut leaves the old file or the new
    /// one, never an empty one.
    public static func write(
        _ bytes: some Collection<UInt8>, to path: String, durable: Bool = false
    ) throws(RuntimeError) {
        let temporary = path + ".tmp"
        guard let file = fopen(temporary, "wb") else {
            throw RuntimeError("cannot create \(temporary): \(systemMessage())")
        }
        let data = Array(bytes)
        let written = data.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        let synced = !durable || (fflush(file) == 0 && fsync(fileno(file)) == 0)
        let closed = fclose(file)
        guard written == data.count, synced, closed == 0 else {
            let message = systemMessage()
            unlink(temporary)
            throw RuntimeError("cannot write \(path): \(message)")
        }
        guard rename(temporary, path) == 0 else {
            let message = systemMessage()
            unlink(temporary)
            throw RuntimeError("cannot replace \(path): \(message)")
        }
        if durable { syncDirectory(of: path) }
    }

    /// Writes a whole file as ``write(_:to:durable:)`` does, unless it already holds exactly `bytes`; returns whether
    /// it wrote.
    ///
    /// For state a process saves on a timer: the same bytes written again only wear the disk (a board's SD card) and
    /// touch the file. The comparison is with the file itself, not with what this process last wrote, so that a file
    /// removed or changed meanwhile is written again. A file that cannot be read back is written.
    @discardableResult
    public static func writeIfChanged(
        _ bytes: [UInt8], to path: String, durable: Bool = false
    ) throws(RuntimeError) -> Bool {
        if let current = try? readStateFile(path, limit: bytes.count), current == bytes { return false }
        try write(bytes, to: path, durable: durable)
        return true
    }

    /// The directory a path is in: `.` for a bare name.
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Forces a directory's entries (a rename in it) to the disk; best effort.
    public static func syncDirectory(of path: String) {
        let directory = open(directory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return }
        _ = fsync(directory)
        close(directory)
    }

    /// The text of the current `errno`.
    public static func systemMessage() -> String {
        guard let text = strerror(errno) else { return "error \(errno)" }
        return String(cString: text)
    }
}

/// Writes a line to standard error.
public func printError(_ text: String) {
    writeAll(text + "\n", to: 2)
}

/// Writes text to standard output at once (no buffering), e.g. a screen redraw.
public func writeOut(_ text: String) {
    writeAll(text, to: 1)
}

// write(2) on the descriptor: unbuffered, and no shared FILE* that Swift 6 would flag as unsafe state.
private func writeAll(_ text: String, to descriptor: Int32) {
    var text = text
    text.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}

extension ExitStatus {
    /// Ends the process with this status.
    public func exitProcess() -> Never {
        exit(rawValue)
    }
}
