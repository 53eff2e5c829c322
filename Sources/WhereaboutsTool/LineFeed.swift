import CommandLineSupport
import DetachedThread
import Synchronization

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
        try read(path) { line in
            if let line { continuation.yield(line) } else { continuation.finish() }
        }
        return stream
    }

    /// The same lines gathered for a loop that takes what has come at its own pace (the simulator's windows).
    static func queue(_ path: String) throws(RuntimeError) -> LineQueue {
        let queue = LineQueue()
        try read(path) { line in
            queue.state.withLock { state in
                if let line { state.lines.append(line) } else { state.ended = true }
            }
        }
        return queue
    }

    /// Lines that have come, taken in order.
    final class LineQueue: Sendable {
        fileprivate let state = Mutex<(lines: [String], ended: Bool)>(([], false))

        /// The lines that came since the last call.
        func take() -> [String] {
            state.withLock { state in
                defer { state.lines.removeAll() }
                return state.lines
            }
        }
    }

    /// Reads `path` on a thread of its own, handing each line to `sink` and then nil at the end.
    private static func read(_ path: String, sink: @escaping @Sendable (String?) -> Void) throws(RuntimeError) {
        let started = DetachedThread.start(name: "line-feed") {
            // Opening a FIFO blocks until a writer opens it: here, not in the caller.
            let descriptor = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                printError("whereabouts: cannot read \(path): \(FileAccess.systemMessage())")
                sink(nil)
                return
            }
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                pending += buffer[0..<count]
                while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    if let line = line(pending[..<end]) { sink(line) }
                    pending.removeSubrange(...end)
                }
            }
            if let line = line(pending[...]) { sink(line) }
            if descriptor != 0 { close(descriptor) }
            sink(nil)
        }
        guard started == 0 else { throw RuntimeError("cannot start a thread to read \(path)") }
    }

    private static func line(_ bytes: ArraySlice<UInt8>) -> String? {
        let line = String(decoding: bytes, as: UTF8.self).trimmingSpaces
        return line.isEmpty ? nil : line
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
