import Foundation
import Glibc

/// A pseudo-terminal whose far end is one btvirt controller: a host opening ``path`` talks H4 to the emulator as
/// it would over a UART.
public final class PtyBridge: Sendable {
    /// The terminal to open (`/dev/pts/N`).
    public let path: String
    private let master: Int32
    private let heldSlave: Int32
    private let controller: Int32

    /// Makes the terminal and connects its far end to `upstream`.
    public init(upstream: String) throws {
        // posix_openpt and friends are not visible to Swift here; /dev/ptmx with its two ioctls is what they do.
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, Self.setLock, &unlock) == 0, ioctl(master, Self.getNumber, &number) == 0
        else {
            throw EmulatorError("no pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        path = "/dev/pts/\(number)"
        // Held open so the master never sees the terminal hang up between the host's opens.
        heldSlave = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        // The terminal is left cooked (echo, CR/LF translation): putting it in raw mode is the host's job.
        guard let controller = UnixSocket.connected(to: upstream) else {
            throw EmulatorError("cannot connect to \(upstream)")
        }
        self.controller = controller
        let (master, controllerSocket) = (master, controller)
        Thread { Self.copy(from: master, to: controllerSocket) }.start()
        Thread { Self.copy(from: controllerSocket, to: master) }.start()
    }

    /// TIOCSPTLCK and TIOCGPTN (asm-generic ioctl numbers).
    private static let setLock: UInt = 0x4004_5431
    private static let getNumber: UInt = 0x8004_5430

    private static func copy(from source: Int32, to destination: Int32) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            var offset = 0
            while offset < count {
                let written = chunk[offset..<count].withUnsafeBytes { write(destination, $0.baseAddress, $0.count) }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    deinit {
        // The copying threads end when their reads fail (the socket shut down, the terminal hung up); the master
        // and the socket are left to the process's end (a test's two), so no thread reads a reused descriptor number.
        shutdown(controller, Int32(SHUT_RDWR))
        close(heldSlave)
    }
}
