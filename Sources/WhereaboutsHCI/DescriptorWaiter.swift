import Glibc
import Synchronization

/// A descriptor a reader waits on in `poll`, which another thread can wake for good.
///
/// It lets a transport's `close()` end a read blocked in another thread without closing the descriptor under it
/// (a closed descriptor's number is reused at once, by any other open). The descriptor is closed when the waiter
/// goes, after its reader has let go of it.
final class DescriptorWaiter: Sendable {
    /// The descriptor read from.
    let descriptor: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let woken = Atomic<Bool>(false)
    private let closeDescriptor: @Sendable (Int32) -> Void

    /// Takes over `descriptor` (closed with `closeDescriptor` at the end, and at once if this fails).
    init(
        descriptor: Int32, controller name: String,
        closeDescriptor: @escaping @Sendable (Int32) -> Void = { _ = Glibc.close($0) }
    ) throws(HCIError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            let error = Errno.current
            closeDescriptor(descriptor)
            throw error.hciError("pipe", controller: name)
        }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        self.descriptor = descriptor
        self.closeDescriptor = closeDescriptor
        wakeRead = ends[0]
        wakeWrite = ends[1]
    }

    /// Whether ``wake()`` was called.
    var isWoken: Bool { woken.load(ordering: .acquiring) }

    /// Waits until the descriptor is readable, has hung up or failed (true: the read says which), or the waiter was
    /// woken (false).
    func waitReadable() -> Result<Bool, Errno> {
        while true {
            if isWoken { return .success(false) }
            var descriptors = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let result = poll(&descriptors, 2, -1)
            if result < 0 {
                if errno == EINTR { continue }
                return .failure(Errno.current)
            }
            if descriptors[1].revents != 0 || isWoken { return .success(false) }
            if descriptors[0].revents != 0 { return .success(true) }
        }
    }

    /// Wakes the reader, now and for every later wait.
    func wake() {
        guard !woken.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = Glibc.write(wakeWrite, &byte, 1)
    }

    deinit {
        closeDescriptor(descriptor)
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
    }
}
