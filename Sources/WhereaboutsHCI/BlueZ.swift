// Every call into libbluetooth lives here; the rest of the module sees Swift values.
import CBlueZ
import Glibc

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
    /// Larger than any HCI event (`HCI_MAX_EVENT_SIZE`, 260) plus the packet-type byte: one read is one packet.
    static let readBufferSize = 4096

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

    /// A filter that lets through what the host needs: Command Complete, Command Status and LE Meta events.
    static func hostEventFilter() -> hci_filter {
        var filter = hci_filter()
        hci_filter_clear(&filter)
        hci_filter_set_ptype(Int32(HCI_EVENT_PKT), &filter)
        hci_filter_set_event(Int32(EVT_CMD_COMPLETE), &filter)
        hci_filter_set_event(Int32(EVT_CMD_STATUS), &filter)
        hci_filter_set_event(Int32(EVT_LE_META_EVENT), &filter)
        return filter
    }

    static func setFilter(_ filter: hci_filter, on descriptor: Int32) -> Result<Void, Errno> {
        var filter = filter
        let result = setsockopt(
            descriptor,
            Int32(SOL_HCI),
            Int32(HCI_FILTER),
            &filter,
            socklen_t(MemoryLayout<hci_filter>.size)
        )
        return result < 0 ? .failure(Errno.current) : .success(())
    }

    /// The name BlueZ's list of Bluetooth SIG company identifiers gives `identifier` (`bt_compidtostr`), nil where
    /// it has none.
    static func companyName(_ identifier: UInt16) -> String? {
        guard let text = bt_compidtostr(Int32(identifier)) else { return nil }
        let name = String(cString: text)
        return name.isEmpty || name == "not assigned" ? nil : name
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

extension BlueZ {
    /// Opens the exclusive user channel (`HCI_CHANNEL_USER`) on a controller: a raw socket bound with the channel,
    /// carrying H4 packets both ways with no kernel host stack in between.
    static func openUserChannel(deviceID: Int32) -> Result<Int32, Errno> {
        let descriptor = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard descriptor >= 0 else { return .failure(Errno.current) }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = UInt16(truncatingIfNeeded: deviceID)
        address.hci_channel = UInt16(HCI_CHANNEL_USER)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
            }
        }
        guard bound == 0 else {
            let error = Errno.current
            Glibc.close(descriptor)
            return .failure(error)
        }
        return .success(descriptor)
    }
}
