import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsCore

let siteUUID = BeaconUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0")
let otherUUID = BeaconUUID("11111111-2222-3333-4444-555555555555")

/// A site iBeacon tag with this minor (major 1).
func tag(_ minor: UInt16, major: UInt16 = 1) -> TagIdentity {
    guard let siteUUID else { preconditionFailure("bad test UUID") }
    return .iBeacon(uuid: siteUUID, major: major, minor: minor)
}

/// A sighting of `tag(minor)` at `rssi`.
func sighting(
    _ minor: UInt16, rssi: Int, power: Int? = -59, telemetry: BeaconTelemetry? = nil
) -> BeaconSighting {
    guard let address = DeviceAddress(value: 0x00_11_22_33_44_00 | UInt64(minor & 0xFF)) else {
        preconditionFailure("bad test address")
    }
    return BeaconSighting(
        tag: tag(minor), rssi: rssi, measuredPower: power, address: address, addressType: .publicDevice,
        telemetry: telemetry)
}
