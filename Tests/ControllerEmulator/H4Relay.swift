import Foundation
import Glibc
import Synchronization

/// A relay between H4 clients (agents) and one btvirt controller socket, doing what btvirt cannot and watching what
/// the host sends.
///
/// Each client that connects to ``path`` gets a new connection to the emulator (a new controller on its air). On
/// the way to the client, the relay can give LE advertising reports a real RSSI (btvirt always says 127, "not
/// available") and can set the extended-scanning bits in the supported commands (btvirt never sets them). On the
/// way to the controller it records every command. It can also send commands of its own to the controller and
/// swallow their answers (``pulseAdvertising()``: btvirt reports an advertiser once, when it enables advertising),
/// and it can cut every connection, as a controller that vanishes.
public final class H4Relay: Sendable {
    /// Where clients connect: `--device h4:PATH`.
    public let path: String
    /// The emulator's socket each client is relayed to.
    public let upstream: String
    private let listener: Int32
    private let settings: Mutex<Settings>
    private let record = Mutex(Record())

    /// What the relay changes on the way to the client.
    public struct Settings: Sendable {
        /// The RSSI written into every LE advertising report, dBm; nil leaves btvirt's 127.
        public var rssi: Int8?
        /// Whether Read Local Supported Commands answers say LE Set Extended Scan Parameters and Enable are there.
        public var claimsExtendedScanning: Bool

        public init(rssi: Int8? = nil, claimsExtendedScanning: Bool = false) {
            self.rssi = rssi
            self.claimsExtendedScanning = claimsExtendedScanning
        }
    }

    private struct Record {
        var commands: [UInt16] = []
        var reports = 0
        var accepted = 0
        /// Clients closed at once because the upstream socket refused the relay.
        var refusedUpstream = 0
        var connections: [ObjectIdentifier: Connection] = [:]
        /// Answers to the relay's own commands still to be swallowed, by opcode.
        var swallow: [UInt16: Int] = [:]
        var stopped = false
    }

    /// Listens at `path` and relays each client to `upstream`.
    public init(listeningAt path: String, upstream: String, settings: Settings = Settings()) throws {
        self.path = path
        self.upstream = upstream
        self.settings = Mutex(settings)
        listener = try UnixSocket.listening(at: path)
        Thread { [self] in acceptLoop() }.start()
    }

    deinit {
        stop()
        close(listener)
        unlink(path)
    }

    // MARK: - What the test sees and does

    /// The opcodes of every command clients sent, in order.
    public var commands: [UInt16] { record.withLock { $0.commands } }
    /// LE advertising reports passed to clients.
    public var reportsForwarded: Int { record.withLock { $0.reports } }
    /// Clients accepted so far.
    public var accepted: Int { record.withLock { $0.accepted } }
    /// Clients closed at once because the upstream socket refused the relay.
    public var refusedUpstream: Int { record.withLock { $0.refusedUpstream } }
    /// Clients connected now.
    public var openConnections: Int { record.withLock { $0.connections.count } }
    /// Whether answers to the relay's own commands are still awaited.
    public var injectionsPending: Bool { record.withLock { $0.swallow.values.contains { $0 > 0 } } }

    /// Turns the clients' advertising off and on again, behind their backs: btvirt then reports the advert to every
    /// scanner once more. The answers are swallowed; wait for ``injectionsPending`` to clear before the next pulse.
    public func pulseAdvertising() {
        let connections = record.withLock { record in
            record.swallow[0x200A, default: 0] += 2 * record.connections.count
            return Array(record.connections.values)
        }
        for connection in connections {
            _ = connection.send(toController: [0x01, 0x0A, 0x20, 0x01, 0x00])
            _ = connection.send(toController: [0x01, 0x0A, 0x20, 0x01, 0x01])
        }
    }

    /// Cuts every client's connection, as a controller that vanished; new clients are still relayed.
    public func dropConnections() {
        let connections = record.withLock { Array($0.connections.values) }
        for connection in connections { connection.shutDown() }
    }

    /// Stops accepting and cuts every connection.
    public func stop() {
        let first = record.withLock { record in
            defer { record.stopped = true }
            return !record.stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        dropConnections()
    }

    // MARK: - Relaying

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            record.withLock { $0.accepted += 1 }
            guard let controller = UnixSocket.connected(to: upstream) else {
                // No emulator behind: the client's controller is gone at once.
                record.withLock { $0.refusedUpstream += 1 }
                close(client)
                continue
            }
            let connection = Connection(client: client, controller: controller)
            let key = ObjectIdentifier(connection)
            let stopped = record.withLock { record in
                if !record.stopped { record.connections[key] = connection }
                return record.stopped
            }
            if stopped {
                connection.shutDown()
                return
            }
            let ended = Atomic<Int>(0)
            let finish: @Sendable () -> Void = { [self] in
                connection.shutDown()
                if ended.add(1, ordering: .acquiringAndReleasing).newValue == 2 {
                    _ = record.withLock { $0.connections.removeValue(forKey: key) }
                }
            }
            Thread { [self] in
                pump(from: connection.client) { packet in
                    if packet[0] == 0x01, packet.count >= 3 {
                        record.withLock { $0.commands.append(UInt16(packet[1]) | UInt16(packet[2]) << 8) }
                    }
                    return connection.send(toController: packet)
                }
                finish()
            }.start()
            Thread { [self] in
                pump(from: connection.controller) { packet in
                    guard let changed = toClient(packet) else { return true }
                    return UnixSocket.writeAll(connection.client, changed)
                }
                finish()
            }.start()
        }
    }

    /// Reads H4 packets from `descriptor` and hands each to `forward` until the stream ends or `forward` fails.
    private func pump(from descriptor: Int32, _ forward: ([UInt8]) -> Bool) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            while let length = Self.packetLength(buffer) {
                let packet = Array(buffer[..<length])
                buffer.removeFirst(length)
                guard forward(packet) else { return }
            }
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            buffer += chunk[..<count]
            // A byte that starts no H4 packet: the stream is broken; drop the connection.
            if let type = buffer.first, !(1...5).contains(type) { return }
        }
    }

    /// The packet as the client gets it, or nil to swallow it.
    private func toClient(_ packet: [UInt8]) -> [UInt8]? {
        guard packet.count >= 4, packet[0] == 0x04 else { return packet }
        var packet = packet
        let settings = settings.withLock { $0 }
        switch packet[1] {
        case 0x0E where packet.count >= 6, 0x0F where packet.count >= 7:
            let opcode =
                packet[1] == 0x0E
                ? UInt16(packet[4]) | UInt16(packet[5]) << 8 : UInt16(packet[5]) | UInt16(packet[6]) << 8
            let swallowed = record.withLock { record in
                guard let count = record.swallow[opcode], count > 0 else { return false }
                record.swallow[opcode] = count - 1
                return true
            }
            if swallowed { return nil }
            // Read Local Supported Commands: status at 6, the 64-octet mask from 7; octet 37 bits 5 and 6.
            if opcode == 0x1002, settings.claimsExtendedScanning, packet.count >= 7 + 64, packet[6] == 0 {
                packet[7 + 37] |= 0b0110_0000
            }
        case 0x3E where packet.count >= 5 && packet[4] == 1:
            // One report: legacy (0x02) RSSI last; extended (0x0D) RSSI 13 bytes into the report.
            if packet[3] == 0x02 || packet[3] == 0x0D {
                record.withLock { $0.reports += 1 }
                if let rssi = settings.rssi {
                    let index = packet[3] == 0x02 ? packet.count - 1 : 5 + 13
                    if index < packet.count { packet[index] = UInt8(bitPattern: rssi) }
                }
            }
        default:
            break
        }
        return packet
    }

    /// The length of the first whole H4 packet in `bytes`, nil if more bytes are needed (or none start a packet).
    static func packetLength(_ bytes: [UInt8]) -> Int? {
        guard let type = bytes.first else { return nil }
        let header: Int
        switch type {
        case 0x01, 0x03: header = 3
        case 0x02, 0x05: header = 4
        case 0x04: header = 2
        default: return nil
        }
        guard bytes.count >= 1 + header else { return nil }
        let payload: Int
        switch type {
        case 0x04: payload = Int(bytes[2])
        case 0x01, 0x03: payload = Int(bytes[3])
        default: payload = Int(bytes[3]) | Int(bytes[4]) << 8
        }
        let total = 1 + header + payload
        return bytes.count >= total ? total : nil
    }

    /// One client and its controller.
    final class Connection: Sendable {
        let client: Int32
        let controller: Int32
        /// Whole packets only: the client's commands and the relay's own are written one at a time.
        private let controllerWrites = Mutex(())

        init(client: Int32, controller: Int32) {
            self.client = client
            self.controller = controller
        }

        func send(toController packet: [UInt8]) -> Bool {
            controllerWrites.withLock { _ in UnixSocket.writeAll(controller, packet) }
        }

        /// Ends both directions; the descriptors are closed when the pumps have let go.
        func shutDown() {
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(controller, Int32(SHUT_RDWR))
        }

        deinit {
            close(client)
            close(controller)
        }
    }
}
