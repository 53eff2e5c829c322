#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Appends lines to a file (a recording), flushing after each write so a crash loses nothing already written.
public final class LineWriter {
    private let file: UnsafeMutablePointer<FILE>
    /// The file's path.
    public let path: String

    /// Opens `path` for appending, creating it if needed.
    public init(appendingTo path: String) throws(RuntimeError) {
        guard let file = fopen(path, "a") else {
            throw RuntimeError("cannot open \(path) for appending: \(FileAccess.systemMessage())")
        }
        self.file = file
        self.path = path
    }

    /// Opens `path` for writing, replacing it.
    public init(replacing path: String) throws(RuntimeError) {
        guard let file = fopen(path, "w") else {
            throw RuntimeError("cannot create \(path): \(FileAccess.systemMessage())")
        }
        self.file = file
        self.path = path
    }

    /// Writes text as it is (include the newline).
    public func write(_ text: String) throws(RuntimeError) {
        var text = text
        let written = text.withUTF8 { fwrite($0.baseAddress, 1, $0.count, file) }
        guard written == text.utf8.count else {
            throw RuntimeError("cannot write \(path): \(FileAccess.systemMessage())")
        }
    }

    /// Flushes buffered text to the file.
    public func flush() {
        fflush(file)
    }

    deinit {
        fclose(file)
    }
}
