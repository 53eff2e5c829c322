public import WhereaboutsAdvertising
import WhereaboutsCore

/// What a provisionable beacon advertises (an ``IBeaconAdvertisement``), as our configuration characteristic carries
/// it: the iBeacon proximity UUID, major, minor and measured power, in 21 bytes.
///
/// Layout (docs/agent.md, "GATT"): the advert's own iBeacon payload, which is what the beacon will then send: bytes
/// 0-15 the proximity UUID in printed order, 16-17 major and 18-19 minor big-endian, 20 the measured power at 1 m in
/// dBm (signed). A write of any other length is refused with "invalid attribute value length" (0x0D).
public struct BeaconConfiguration: Sendable, Hashable {
    /// The configuration service, 57484552-4541-424F-5554-530000000001 ("WHEREABOUTS" in ASCII, then 1).
    public static let service = AttributeUUID(high: 0x5748_4552_4541_424F, low: 0x5554_5300_0000_0001)
    /// The configuration characteristic, the same with 2: read and write (with response).
    public static let characteristic = AttributeUUID(high: 0x5748_4552_4541_424F, low: 0x5554_5300_0000_0002)
    /// The value's length.
    public static let length = 21

    /// What the beacon is to advertise.
    public var advertisement: IBeaconAdvertisement

    public init(_ advertisement: IBeaconAdvertisement) {
        self.advertisement = advertisement
    }

    /// Reads the characteristic's value; nil unless it is 21 bytes.
    public init?(value: [UInt8]) {
        guard value.count == Self.length, let uuid = BeaconUUID(bytes: value[0..<16]) else { return nil }
        self.init(
            IBeaconAdvertisement(
                uuid: uuid, major: UInt16(value[16]) << 8 | UInt16(value[17]),
                minor: UInt16(value[18]) << 8 | UInt16(value[19]), measuredPower: Int8(bitPattern: value[20])))
    }

    /// The characteristic's value: the last 21 bytes of the advertising data, its iBeacon payload.
    public var value: [UInt8] { Array(advertisement.advertisingData.suffix(Self.length)) }
}

extension AttributeUUID {
    /// A 128-bit UUID from its two 64-bit halves, most significant first.
    init(high: UInt64, low: UInt64) {
        self.init(
            bytes: (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64($0))) }
                + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64($0))) })
    }
}
