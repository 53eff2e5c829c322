import CommandLineSupport
import DetachedThread

#if canImport(Glibc)
    import Glibc
#endif

/// Lines read as they come from standard input, a FIFO or a file someone appends to, for commands steered at run
/// time (`whereabouts survey`'s points, `whereabouts sim --waypoints`).
///
/// A read blocks, so it runs on a thread of its own, which only copies the bytes into lines and hands them over.
/// The stream ends at the end of the input (the FIFO's last writer closed it), or when the input cannot be read.
enum LineFeed {
    /// Lines of `path` ("-" for standard input), without their line ends; blank lines are skipped.
    static func lines(_ path: String) throws(RuntimeError) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let started = DetachedThread.start(name: "line-feed") {
            // Opening a FIFO blocks until a writer opens it: here, not in the caller.
            let descriptor = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                printError("whereabouts: cannot read \(path): \(FileAccess.systemMessage())")
                continuation.finish()
                return
            }
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                pending += buffer[0..<count]
                while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    yield(pending[..<end], to: continuation)
                    pending.removeSubrange(...end)
                }
            }
            yield(pending[...], to: continuation)
            if descriptor != 0 { close(descriptor) }
            continuation.finish()
        }
        guard started == 0 else { throw RuntimeError("cannot start a thread to read \(path)") }
        return stream
    }

    private static func yield(_ bytes: ArraySlice<UInt8>, to continuation: AsyncStream<String>.Continuation) {
        let line = String(decoding: bytes, as: UTF8.self).trimmingSpaces
        if !line.isEmpty { continuation.yield(line) }
    }

    /// A line of numbers separated by spaces, tabs or commas (`x y [floor]`); nil when one is not a number.
    static func numbers(_ line: String) -> [Double]? {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," })
        let numbers = words.compactMap { Double($0) }
        return numbers.count == words.count && numbers.allSatisfy(\.isFinite) ? numbers : nil
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and carriage returns.
    fileprivate var trimmingSpaces: String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        return String(drop(while: blank).reversed().drop(while: blank).reversed())
    }
}
