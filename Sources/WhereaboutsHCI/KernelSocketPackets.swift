import CBlueZ
import Glibc

/// Packet I/O on one of the kernel's HCI sockets (the shared raw socket or the exclusive user channel): one send or
/// one read is one H4-framed packet, and the controller's unregistering (unplugged) reads as its going away.
extension DescriptorWaiter {
    /// Sends `packet`; MSG_NOSIGNAL: a controller gone is an error, never a SIGPIPE.
    func sendPacket(_ packet: [UInt8], controller name: String) throws(HCIError) {
        guard !isWoken else { throw .closed }
        while true {
            let written = packet.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written >= 0 { return }
            let error = Errno.current
            if error.code == EINTR { continue }
            // EPIPE/ENODEV: the controller was unregistered (unplugged) under the socket.
            if error.code == EPIPE || error.code == ENODEV { throw .controllerVanished(name) }
            throw error.hciError("write", controller: name)
        }
    }

    /// The next packet; nil once the waiter was woken or the controller went away.
    func receivePacket(controller name: String) throws(HCIError) -> [UInt8]? {
        while true {
            switch waitReadable() {
            case .success(false): return nil
            case .success(true): break
            case .failure(let error): throw error.hciError("poll", controller: name)
            }
            switch BlueZ.read(descriptor) {
            case .packet(let packet): return packet
            case .again: continue
            case .failed(let code) where code == EPIPE || code == ENODEV: return nil
            case .failed(let code): throw Errno(code: code).hciError("read", controller: name)
            }
        }
    }
}
