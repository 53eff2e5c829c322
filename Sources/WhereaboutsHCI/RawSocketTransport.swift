import CBlueZ
import Glibc

/// The kernel's raw HCI socket on a controller such as `hci0`.
///
/// The kernel (and bluetoothd) manage that controller and share it: the host must not reset it or change its event
/// masks (``sharesController``). The socket's filter passes Command Complete, Command Status and LE Meta events.
/// Opening it needs Bluetooth in the kernel and the capabilities `CAP_NET_RAW` and `CAP_NET_ADMIN`; each failure
/// is an ``HCIError`` naming what is missing.
public final class RawSocketTransport: HCITransport {
    public let name: String
    public var sharesController: Bool { true }
    private let waiter: DescriptorWaiter

    /// Opens the controller `device` (`hci0`).
    public init(device: String) throws(HCIError) {
        name = device
        let deviceID: Int32
        switch BlueZ.deviceID(named: device) {
        case .success(let id): deviceID = id
        case .failure(let error): throw error.hciError("hci_devid", controller: device)
        }
        let descriptor: Int32
        switch BlueZ.open(deviceID: deviceID) {
        case .success(let opened): descriptor = opened
        case .failure(let error): throw error.hciError("hci_open_dev", controller: device)
        }
        if case .failure(let error) = BlueZ.setFilter(BlueZ.hostEventFilter(), on: descriptor) {
            BlueZ.close(descriptor)
            throw error.hciError("setsockopt(HCI_FILTER)", controller: device)
        }
        waiter = try DescriptorWaiter(descriptor: descriptor, controller: device) { BlueZ.close($0) }
    }

    public func write(_ packet: [UInt8]) throws(HCIError) {
        try waiter.sendPacket(packet, controller: name)
    }

    public func read() throws(HCIError) -> [UInt8]? {
        try waiter.receivePacket(controller: name)
    }

    public func close() { waiter.wake() }
}
