/// Builds HCI LE advertising events for tests, with lengths that add up unless a test says otherwise.
enum EventBuilder {
    static let address: [UInt8] = [0x43, 0x3E, 0xA2, 0xC9, 0x6B, 0x6A]  // 6A:6B:C9:A2:3E:43, least significant first

    /// One legacy report: evt_type, addr_type, addr, len, data, rssi.
    static func legacyReport(
        data: [UInt8],
        rssi: Int8 = -60,
        address: [UInt8] = address,
        addressType: UInt8 = 0x01,
        lengthByte: UInt8? = nil
    ) -> [UInt8] {
        var bytes: [UInt8] = [0x00, addressType]
        bytes += address
        bytes.append(lengthByte ?? UInt8(data.count))
        bytes += data
        bytes.append(UInt8(bitPattern: rssi))
        return bytes
    }

    /// One extended report; `eventType` 0x0013 is a legacy-PDU advert with complete data.
    static func extendedReport(
        data: [UInt8],
        rssi: Int8 = -70,
        eventType: UInt16 = 0x0013,
        address: [UInt8] = address,
        addressType: UInt8 = 0x00,
        txPower: Int8 = 127,
        lengthByte: UInt8? = nil
    ) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(eventType & 0xFF), UInt8(eventType >> 8), addressType]
        bytes += address
        // Primary PHY, secondary PHY, SID, TX power, RSSI, periodic interval (2), direct address type and address.
        bytes += [0x01, 0x00, 0xFF, UInt8(bitPattern: txPower), UInt8(bitPattern: rssi), 0x00, 0x00, 0x00]
        bytes += [0, 0, 0, 0, 0, 0]
        bytes.append(lengthByte ?? UInt8(data.count))
        bytes += data
        return bytes
    }

    /// An H4 LE Meta event: 04 3E plen subevent num_reports reports.
    static func event(
        subevent: UInt8 = 0x02,
        count: UInt8? = nil,
        reports: [[UInt8]],
        plenAdjustment: Int = 0
    ) -> [UInt8] {
        let body = [subevent, count ?? UInt8(reports.count)] + reports.flatMap { $0 }
        return [0x04, 0x3E, UInt8(truncatingIfNeeded: body.count + plenAdjustment)] + body
    }

    /// The iBeacon AD structure for the fixture's site beacon, e2c56db5-… major 100 minor 0, −59 dBm.
    static let iBeacon: [UInt8] = hex("1aff4c000215 e2c56db5dffb48d2b060d0f5a71096e0 0064 0000 c5")

    /// An Eddystone-UID AD structure: namespace 00…09, instance a0…a5, 0 m power −18 dBm.
    static let eddystoneUID: [UInt8] =
        [0x17, 0x16, 0xAA, 0xFE, 0x00, 0xEE] + Array(0..<10) + [0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0x00, 0x00]

    /// An unencrypted Eddystone-TLM AD structure: 3000 mV, 23.5 °C, counters.
    static let eddystoneTLM: [UInt8] =
        [0x11, 0x16, 0xAA, 0xFE, 0x20, 0x00, 0x0B, 0xB8, 0x17, 0x80] + [0, 0, 0, 1, 0, 0, 0, 2]
}
