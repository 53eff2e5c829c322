import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsHCI

/// How to reach one controller and what to run on it, so that it can be opened again after it went away: the
/// transport, the scan, and the iBeacon to advertise beside it (if any).
struct ControllerOpener: Sendable {
    /// The controller's name in messages (`hci0`, `h4:/run/btvirt/bt-server-le`).
    var name: String
    var scan: LEScanParameters
    var advertising: (advertisement: IBeaconAdvertisement, parameters: LEAdvertisingParameters)?
    var makeTransport: @Sendable () throws(HCIError) -> any HCITransport

    /// Opens the transport, readies the controller, starts scanning, then advertising. On failure the controller
    /// is closed again and the error says which step failed.
    func open() async throws(HCIError) -> (host: HCIHost, events: AsyncStream<[UInt8]>) {
        let host = HCIHost(transport: try makeTransport())
        do throws(HCIError) {
            try await host.initialize()
            let events = try await host.startScanning(scan)
            if let advertising {
                try await host.startAdvertising(advertising.advertisement, parameters: advertising.parameters)
            }
            return (host, events)
        } catch {
            host.close()
            throw error
        }
    }
}

extension ControllerOpener {
    /// The controller's name and how to reach it, for a live source (nil for a btsnoop replay). With
    /// `userChannel` (the agent's `--gatt`) an `hciN` adapter is opened on the exclusive user channel: on the shared
    /// raw socket the kernel's own host would take every connection and its ACL data.
    static func transport(for source: AgentSettings.Source, userChannel: Bool = false)
        -> (name: String, make: @Sendable () throws(HCIError) -> any HCITransport)?
    {
        switch source {
        case .hci(let device) where userChannel:
            (device, { () throws(HCIError) in try UserChannelTransport(device: device) })
        case .hci(let device): (device, { () throws(HCIError) in try RawSocketTransport(device: device) })
        case .h4(let path): ("h4:\(path)", { () throws(HCIError) in try H4StreamTransport(path: path) })
        case .btsnoop: nil
        }
    }

    /// Why the controller `name` could not be opened, naming it; for a refused permission, also which of the two
    /// capabilities raw HCI needs this process lacks.
    static func openFailure(_ name: String, _ error: HCIError) -> String {
        var message = "cannot open Bluetooth controller \(name): \(error)"
        if case .permissionDenied = error, let capabilities = NetworkCapabilities.current() {
            message += "; " + capabilities.explanation
        }
        return message
    }
}
