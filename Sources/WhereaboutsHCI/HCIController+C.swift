// Every call into libbluetooth and the socket layer lives here; the rest of the module sees Swift values.
import CBlueZ
import Glibc
import WhereaboutsAdvertising

/// A saved HCI socket filter, opaque outside this file.
struct HCISocketFilter: Sendable {
    fileprivate var filter: hci_filter
}

/// What one read from the HCI socket gave.
enum HCIRead: Sendable {
    /// One packet, copied out of the read buffer.
    case packet([UInt8])
    /// Nothing to read right now, or interrupted: try again when readable.
    case again
    /// The socket failed; the errno.
    case failed(Int32)
}

/// Thin wrappers over libbluetooth: errno on failure, Swift values on success.
enum BlueZ {
    /// `HCI_MAX_EVENT_SIZE` plus the packet-type byte.
    static let readBufferSize = Int(HCI_MAX_EVENT_SIZE) + 1

    /// The controller's device id for a name such as `hci0` (`hci_devid`).
    static func deviceID(named name: String) -> Result<Int32, Errno> {
        let id = hci_devid(name)
        return id < 0 ? .failure(Errno.current) : .success(id)
    }

    /// Opens a raw HCI socket bound to the device (`hci_open_dev`).
    static func open(deviceID: Int32) -> Result<Int32, Errno> {
        let descriptor = hci_open_dev(deviceID)
        return descriptor < 0 ? .failure(Errno.current) : .success(descriptor)
    }

    static func close(_ descriptor: Int32) {
        _ = hci_close_dev(descriptor)
    }

    /// Sends a command and waits for its Command Complete (`hci_send_req`); gives the returned HCI status.
    static func send(_ command: HCICommand, on descriptor: Int32, timeoutMilliseconds: Int32) -> Result<UInt8, Errno> {
        var parameters = command.parameters
        var status: UInt8 = 0xFF
        let result = parameters.withUnsafeMutableBytes { parameterBytes in
            withUnsafeMutableBytes(of: &status) { statusBytes in
                var request = hci_request(
                    ogf: UInt16(command.group),
                    ocf: command.command,
                    event: 0,
                    cparam: parameterBytes.baseAddress,
                    clen: Int32(parameterBytes.count),
                    rparam: statusBytes.baseAddress,
                    rlen: Int32(statusBytes.count)
                )
                return hci_send_req(descriptor, &request, timeoutMilliseconds)
            }
        }
        return result < 0 ? .failure(Errno.current) : .success(status)
    }

    /// The socket's current filter.
    static func filter(of descriptor: Int32) -> Result<HCISocketFilter, Errno> {
        var filter = hci_filter()
        var length = socklen_t(MemoryLayout<hci_filter>.size)
        let result = getsockopt(descriptor, Int32(SOL_HCI), Int32(HCI_FILTER), &filter, &length)
        return result < 0 ? .failure(Errno.current) : .success(HCISocketFilter(filter: filter))
    }

    /// A filter that lets only LE Meta events through.
    static func leMetaEventFilter() -> HCISocketFilter {
        var filter = hci_filter()
        hci_filter_clear(&filter)
        hci_filter_set_ptype(Int32(HCI_EVENT_PKT), &filter)
        hci_filter_set_event(Int32(EVT_LE_META_EVENT), &filter)
        return HCISocketFilter(filter: filter)
    }

    static func setFilter(_ filter: HCISocketFilter, on descriptor: Int32) -> Result<Void, Errno> {
        var filter = filter.filter
        let result = setsockopt(
            descriptor,
            Int32(SOL_HCI),
            Int32(HCI_FILTER),
            &filter,
            socklen_t(MemoryLayout<hci_filter>.size)
        )
        return result < 0 ? .failure(Errno.current) : .success(())
    }

    /// Reads one packet; call only when the socket is readable.
    static func read(_ descriptor: Int32) -> HCIRead {
        var failure: Int32 = 0
        let packet = [UInt8](unsafeUninitializedCapacity: readBufferSize) { buffer, count in
            let result = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if result < 0 { failure = errno }
            count = max(0, result)
        }
        if failure == EAGAIN || failure == EWOULDBLOCK || failure == EINTR { return .again }
        if failure != 0 { return .failed(failure) }
        return packet.isEmpty ? .again : .packet(packet)
    }
}

/// An errno value with its message.
struct Errno: Error, Sendable, Hashable {
    var code: Int32

    static var current: Errno { Errno(code: errno) }

    var message: String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// The typed error for a failure of `call` on the controller `name`.
    func hciError(_ call: String, controller name: String) -> HCIError {
        switch code {
        case EAFNOSUPPORT: .bluetoothUnsupported
        case ENODEV: .noSuchController(name)
        case ENETDOWN: .controllerDown(name)
        case EPERM, EACCES: .permissionDenied(operation: "\(call) on \(name)")
        default: .systemCall(call, errno: code, message: message)
        }
    }
}
