import Glibc

/// A small tmpfs mounted for one test, to be filled to its last byte: a real full disk that harms nothing else.
/// Mounting needs root (CAP_SYS_ADMIN); it is unmounted (lazily, so a file a child still holds open does not keep it)
/// and its mount point removed when the value goes.
public final class SmallFilesystem {
    /// Where it is mounted.
    public let path: String
    private var filler: String { path + "/filler" }

    /// Whether this process may mount one.
    public static var canMount: Bool { geteuid() == 0 }

    /// Mounts a tmpfs of `size` (as `mount -o size=` takes it: `256k`) at `path`, which must not exist.
    public init(at path: String, size: String) throws(BrokerFixtureError) {
        self.path = path
        guard mkdir(path, 0o700) == 0 else { throw Self.failure(path, "cannot create it") }
        guard mount("tmpfs", path, "tmpfs", 0, "size=\(size),mode=0700") == 0 else {
            let error = Self.failure(path, "cannot mount a tmpfs there")
            rmdir(path)
            throw error
        }
    }

    /// Writes a file until the filesystem refuses another byte (ENOSPC).
    public func fill() throws(BrokerFixtureError) {
        let file = open(filler, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw Self.failure(filler, "cannot create it") }
        defer { close(file) }
        let chunk = [UInt8](repeating: 0x55, count: 4096)
        var size = chunk.count
        while size > 0 {
            let written = chunk.withUnsafeBytes { write(file, $0.baseAddress, size) }
            if written < 0 {
                guard errno == ENOSPC else { throw Self.failure(filler, "filling it") }
                size /= 2  // down to the last byte
            }
        }
        var probe: UInt8 = 0
        guard write(file, &probe, 1) < 0, errno == ENOSPC else {
            throw .fileNotWritten(path: filler, reason: "the filesystem still takes bytes after filling")
        }
    }

    /// Deletes the filler: the space is there again.
    public func free() {
        unlink(filler)
    }

    deinit {
        umount2(path, Int32(MNT_DETACH))
        rmdir(path)
    }

    private static func failure(_ path: String, _ what: String) -> BrokerFixtureError {
        .fileNotWritten(path: path, reason: "\(what): \(String(cString: strerror(errno)))")
    }
}
