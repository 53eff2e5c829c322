import WhereaboutsAdvertising
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
