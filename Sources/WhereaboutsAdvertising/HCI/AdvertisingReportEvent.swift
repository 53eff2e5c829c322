/// Writes HCI LE Advertising Report events, as a controller sends them: for the simulator, captures and tests.
///
/// The bytes are what ``HCIEventParser`` reads: `0x3E`, the parameter length, subevent `0x02`, one report (event
/// type, address type, address least significant byte first, data length, data, RSSI). No H4 packet-type byte
/// (``HCIFraming/bare``).
public enum AdvertisingReportEvent {
    /// One legacy report of a non-connectable advert (`ADV_NONCONN_IND`, what beacons send); nil when `data`
    /// exceeds the 31 bytes a legacy advert carries.
    public static func legacy(
        address: DeviceAddress, addressType: AddressType, data: [UInt8], rssi: Int8
    ) -> [UInt8]? {
        guard data.count <= 31 else { return nil }
        var event: [UInt8] = [0x3E, 0, 0x02, 0x01, 0x03, addressType.rawValue]
        event += address.wireBytes
        event.append(UInt8(data.count))
        event += data
        event.append(UInt8(bitPattern: rssi))
        event[1] = UInt8(event.count - 2)
        return event
    }
}
