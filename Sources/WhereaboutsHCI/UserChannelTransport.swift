import CBlueZ
import Glibc

/// The exclusive HCI user channel on a controller such as `hci0` (`HCI_CHANNEL_USER`): the kernel steps aside and
/// this host owns the controller, connections and ACL data included, as it does over H4.
///
/// That is what a GATT central needs on a real board: on the shared raw socket (``RawSocketTransport``) the
/// kernel's own host stack would take the connections. The kernel grants the channel only while the controller is
/// down and no one else holds it: stop bluetoothd (or keep it off this adapter), then `btmgmt --index 0 power off`.
/// The host resets and sets up the controller itself (``sharesController`` is false). Opening needs
/// `CAP_NET_ADMIN`; each failure is an ``HCIError`` naming what is missing.
public final class UserChannelTransport: HCITransport {
    public let name: String
    private let waiter: DescriptorWaiter

    /// Opens the user channel on `device` (`hci0`).
    public init(device: String) throws(HCIError) {
        name = device
        let deviceID: Int32
        switch BlueZ.deviceID(named: device) {
        case .success(let id): deviceID = id
        case .failure(let error): throw error.hciError("hci_devid", controller: device)
        }
        let descriptor: Int32
        switch BlueZ.openUserChannel(deviceID: deviceID) {
        case .success(let opened): descriptor = opened
        case .failure(let error) where error.code == EBUSY || error.code == EALREADY:
            throw .controllerBusy(device)
        case .failure(let error): throw error.hciError("bind(HCI_CHANNEL_USER)", controller: device)
        }
        waiter = try DescriptorWaiter(descriptor: descriptor, controller: device)
    }

    public func write(_ packet: [UInt8]) throws(HCIError) {
        try waiter.sendPacket(packet, controller: name)
    }

    public func read() throws(HCIError) -> [UInt8]? {
        try waiter.receivePacket(controller: name)
    }

    public func close() { waiter.wake() }
}
