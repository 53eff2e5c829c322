/// Why a Bluetooth controller could not be opened or driven. Each case names what is missing.
public enum HCIError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kernel has no Bluetooth support: opening an `AF_BLUETOOTH` socket fails with `EAFNOSUPPORT`
    /// ("Address family not supported by protocol"). Containers and some VMs are like this.
    case bluetoothUnsupported
    /// No controller by this name (`ENODEV`); `hciconfig` or `btmgmt info` list the ones present.
    case noSuchController(String)
    /// The controller exists but is powered down (`ENETDOWN`).
    case controllerDown(String)
    /// The process may not open or drive the controller (`EPERM`/`EACCES`): raw HCI needs the capabilities
    /// `CAP_NET_RAW` and `CAP_NET_ADMIN` (or root).
    case permissionDenied(operation: String)
    /// The controller answered a command with a non-zero HCI status (Core Vol 1 Part F).
    case commandFailed(opcode: UInt16, status: UInt8)
    /// Another system call failed.
    case systemCall(String, errno: Int32, message: String)
    /// The controller is already scanning through this handle.
    case alreadyScanning
    /// The handle was closed.
    case closed
    /// The controller behind a transport went away (its socket or file ended) while in use.
    case controllerVanished(String)
    /// The controller did not answer a command in time.
    case commandTimedOut(controller: String, opcode: UInt16)
    /// The exclusive user channel cannot be had (`EBUSY`/`EALREADY`): the controller is up, or bluetoothd or
    /// another program holds it.
    case controllerBusy(String)

    public var description: String {
        switch self {
        case .bluetoothUnsupported:
            "the kernel has no Bluetooth support (AF_BLUETOOTH: address family not supported, EAFNOSUPPORT)"
        case .noSuchController(let name): "no Bluetooth controller named \(name) (ENODEV)"
        case .controllerDown(let name): "Bluetooth controller \(name) is down (ENETDOWN); power it on first"
        case .permissionDenied(let operation):
            "not permitted to \(operation): raw HCI needs CAP_NET_RAW and CAP_NET_ADMIN (or root)"
        case .commandFailed(let opcode, let status):
            "the controller refused HCI command 0x\(hex(opcode, width: 4)) with status 0x\(hex(UInt16(status), width: 2))"
        case .systemCall(let call, let errno, let message): "\(call) failed: \(message) (errno \(errno))"
        case .alreadyScanning: "the controller is already scanning through this handle"
        case .closed: "the controller handle is closed"
        case .controllerVanished(let name): "Bluetooth controller \(name) went away (its connection ended)"
        case .controllerBusy(let name):
            "Bluetooth controller \(name) is in use: the user channel needs it down and free (stop bluetoothd, then "
                + "`btmgmt --index \(name.dropFirst(3)) power off` or `hciconfig \(name) down`)"
        case .commandTimedOut(let name, let opcode):
            "Bluetooth controller \(name) did not answer HCI command 0x\(hex(opcode, width: 4)) in time"
        }
    }
}

/// Lower-case hex, zero-padded.
private func hex(_ value: UInt16, width: Int) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
