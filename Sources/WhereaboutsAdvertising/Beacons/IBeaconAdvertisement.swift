public import WhereaboutsCore

/// What an iBeacon transmitter sends: the advertising data for a UUID, major, minor and measured power.
public struct IBeaconAdvertisement: Sendable, Hashable {
    /// The proximity UUID (the site).
    public var uuid: BeaconUUID
    /// The major (the floor, by our convention).
    public var major: UInt16
    /// The minor.
    public var minor: UInt16
    /// The calibrated RSSI at 1 m, dBm.
    public var measuredPower: Int8

    /// Makes an advertisement.
    public init(uuid: BeaconUUID, major: UInt16, minor: UInt16, measuredPower: Int8 = -59) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    /// The 30 bytes of advertising data: a flags structure (LE General Discoverable, no BR/EDR), then the iBeacon
    /// manufacturer data `1A FF 4C 00 02 15` + UUID + major + minor (big-endian) + power.
    public var advertisingData: [UInt8] {
        var bytes: [UInt8] = [
            0x02, ADStructure.flags, 0x06, 0x1A, ADStructure.manufacturerSpecificData, 0x4C, 0x00, 0x02, 0x15,
        ]
        bytes += uuid.bytes
        bytes += [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF)]
        bytes.append(UInt8(bitPattern: measuredPower))
        return bytes
    }

    /// The tag a scanner will see.
    public var tag: TagIdentity { .iBeacon(uuid: uuid, major: major, minor: minor) }
}
