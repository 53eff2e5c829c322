import CBlueZ
import Glibc
import Synchronization
import WhereaboutsAdvertising

/// Where a controller's HCI packets travel: the seam under ``HCIHost``, so that the same controller logic (reset,
/// scan parameters, scan enable, advertising beside the scan, restart) runs over the kernel's raw socket
/// (``RawSocketTransport``), an H4 byte stream (``H4StreamTransport``: a UART, a pty, or `btvirt`'s Unix sockets)
/// or a btsnoop file (``BtsnoopTransport``).
///
/// Packets are H4-framed both ways: the packet-type byte (0x01 command, 0x04 event, …) first.
public protocol HCITransport: Sendable {
    /// What the controller is called in messages (`hci0`, `h4:/tmp/bt-server-le`).
    var name: String { get }
    /// Whether someone else set the controller up and uses it too (the kernel and bluetoothd, for `hci0`): the
    /// host then neither resets it nor changes its event masks.
    var sharesController: Bool { get }
    /// Sends one packet.
    func write(_ packet: [UInt8]) throws(HCIError)
    /// Waits for the next packet; nil once the transport has ended (the controller went away, or a file ended).
    func read() throws(HCIError) -> [UInt8]?
    /// Ends the transport; a `read()` waiting in another thread returns nil.
    func close()
}

extension HCITransport {
    /// A controller on a byte stream or in a file is the host's alone.
    public var sharesController: Bool { false }
}

/// H4 over a byte stream: a Unix stream socket (`btvirt -s` serves one controller per connection) or a tty/pty
/// (put in raw mode; a UART's speed is left as it was set).
public final class H4StreamTransport: HCITransport {
    public let name: String
    private let waiter: DescriptorWaiter
    private let isSocket: Bool
    private let buffer = Mutex<[UInt8]>([])

    /// Connects to a Unix stream socket at `path`, or opens `path` read-write if it is not a socket (a pty).
    public init(path: String) throws(HCIError) {
        name = "h4:\(path)"
        var status = stat()
        guard stat(path, &status) == 0 else { throw Errno.current.hciError("stat \(path)", controller: name) }
        let descriptor: Int32
        isSocket = status.st_mode & S_IFMT == S_IFSOCK
        if isSocket {
            descriptor = try Self.connect(path, name: name)
        } else {
            descriptor = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
            guard descriptor >= 0 else { throw Errno.current.hciError("open \(path)", controller: name) }
            if isatty(descriptor) == 1 {
                // A terminal's line discipline would echo, translate and buffer bytes: H4 needs them raw.
                var settings = termios()
                guard tcgetattr(descriptor, &settings) == 0 else {
                    let error = Errno.current
                    Glibc.close(descriptor)
                    throw error.hciError("tcgetattr", controller: name)
                }
                cfmakeraw(&settings)
                guard tcsetattr(descriptor, TCSANOW, &settings) == 0 else {
                    let error = Errno.current
                    Glibc.close(descriptor)
                    throw error.hciError("tcsetattr", controller: name)
                }
            }
        }
        waiter = try DescriptorWaiter(descriptor: descriptor, controller: name)
    }

    private static func connect(_ path: String, name: String) throws(HCIError) -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Errno.current.hciError("socket(AF_UNIX)", controller: name) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(descriptor)
            throw .systemCall("connect", errno: ENAMETOOLONG, message: "socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let error = Errno.current
            Glibc.close(descriptor)
            throw error.hciError("connect to \(path)", controller: name)
        }
        return descriptor
    }

    public func write(_ packet: [UInt8]) throws(HCIError) {
        var offset = 0
        while offset < packet.count {
            guard !waiter.isWoken else { throw .closed }
            let written = packet[offset...].withUnsafeBytes {
                // MSG_NOSIGNAL: a peer gone is an error here, not a SIGPIPE that kills the process.
                isSocket
                    ? send(waiter.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                    : Glibc.write(waiter.descriptor, $0.baseAddress, $0.count)
            }
            if written < 0 {
                let error = Errno.current
                if error.code == EINTR { continue }
                if waiter.isWoken { throw .closed }
                if error.code == EPIPE || error.code == ECONNRESET || error.code == EIO {
                    throw .controllerVanished(name)
                }
                throw error.hciError("write", controller: name)
            }
            offset += written
        }
    }

    public func read() throws(HCIError) -> [UInt8]? {
        while true {
            let next: Result<[UInt8]?, H4Framing.Problem> = buffer.withLock { bytes in
                switch H4Framing.packetLength(bytes) {
                case .success(let length?):
                    let packet = Array(bytes[..<length])
                    bytes.removeFirst(length)
                    return .success(packet)
                case .success(nil): return .success(nil)
                case .failure(let problem): return .failure(problem)
                }
            }
            switch next {
            case .success(let packet?): return packet
            case .success(nil): break
            case .failure(let problem):
                throw .systemCall("read", errno: EPROTO, message: "\(name): \(problem.message)")
            }
            switch waiter.waitReadable() {
            case .success(false): return nil
            case .success(true): break
            case .failure(let error): throw error.hciError("poll", controller: name)
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(waiter.descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                let error = Errno.current
                if error.code == EINTR || error.code == EAGAIN { continue }
                // The peer reset the connection, or a pty's other side closed (EIO): the controller went away.
                if waiter.isWoken || error.code == ECONNRESET || error.code == EIO { return nil }
                throw error.hciError("read", controller: name)
            }
            if count == 0 { return nil }
            buffer.withLock { $0 += chunk[..<count] }
        }
    }

    public func close() {
        // The peer (btvirt drops the controller) learns at once; the descriptor is closed when the reader is done.
        if isSocket { shutdown(waiter.descriptor, Int32(SHUT_RDWR)) }
        waiter.wake()
    }
}

/// H4 packet boundaries in a byte stream.
enum H4Framing {
    struct Problem: Error { var message: String }

    /// The length of the first whole packet in `bytes`, nil if more bytes are needed.
    static func packetLength(_ bytes: [UInt8]) -> Result<Int?, Problem> {
        guard let type = bytes.first else { return .success(nil) }
        let header: Int
        let payload: (ArraySlice<UInt8>) -> Int
        switch type {
        case 0x01: (header, payload) = (3, { Int($0[$0.startIndex + 2]) })  // command: opcode(2) length(1)
        case 0x02: (header, payload) = (4, { Int($0[$0.startIndex + 2]) | Int($0[$0.startIndex + 3]) << 8 })  // ACL
        case 0x03: (header, payload) = (3, { Int($0[$0.startIndex + 2]) })  // SCO
        case 0x04: (header, payload) = (2, { Int($0[$0.startIndex + 1]) })  // event: code(1) length(1)
        case 0x05: (header, payload) = (4, { Int($0[$0.startIndex + 2]) | Int($0[$0.startIndex + 3] & 0x3F) << 8 })
        default: return .failure(Problem(message: "unknown H4 packet type 0x\(String(type, radix: 16))"))
        }
        guard bytes.count >= 1 + header else { return .success(nil) }
        let total = 1 + header + payload(bytes[1..<(1 + header)])
        return .success(bytes.count >= total ? total : nil)
    }
}

/// A btsnoop capture as a controller: every command is answered at once with success (Read Local Supported
/// Commands with an empty mask, so scanning is legacy), and once scanning is enabled the capture's events follow in
/// order; the end of the file is the controller going away. It runs the controller logic offline.
public final class BtsnoopTransport: HCITransport {
    public let name: String
    private let state: Mutex<(answers: [[UInt8]], events: ArraySlice<BtsnoopPacket>, scanning: Bool, closed: Bool)>

    /// Reads the whole capture at `path` (events only).
    public init(path: String, bytes: [UInt8]) throws(HCIError) {
        name = "btsnoop:\(path)"
        do {
            state = Mutex(
                (answers: [], events: try BtsnoopReader.events(in: bytes)[...], scanning: false, closed: false))
        } catch {
            throw .systemCall("read", errno: EINVAL, message: "\(path): \(error)")
        }
    }

    public func write(_ packet: [UInt8]) throws(HCIError) {
        guard packet.count >= 4, packet[0] == 0x01 else { return }
        var parameters: [UInt8] = [0x00]
        if packet[1] == 0x02, packet[2] == 0x10 { parameters += [UInt8](repeating: 0, count: 64) }
        let answer: [UInt8] = [0x04, 0x0E, UInt8(3 + parameters.count), 0x01, packet[1], packet[2]] + parameters
        // LE Set Scan Enable (0x200C) or LE Set Extended Scan Enable (0x2042), enabling.
        let enablesScan = packet[2] == 0x20 && (packet[1] == 0x0C || packet[1] == 0x42) && packet.count > 4
        state.withLock { state in
            state.answers.append(answer)
            if enablesScan { state.scanning = packet[4] == 0x01 }
        }
    }

    public func read() throws(HCIError) -> [UInt8]? {
        while true {
            let next = state.withLock { state -> [UInt8]?? in
                if state.closed { return .some(nil) }
                if !state.answers.isEmpty { return state.answers.removeFirst() }
                guard state.scanning else { return nil }  // nothing yet: wait for a command
                guard let packet = state.events.popFirst() else { return .some(nil) }
                return [0x04] + packet.event
            }
            if let next { return next }
            usleep(1000)
        }
    }

    public func close() { state.withLock { $0.closed = true } }
}
