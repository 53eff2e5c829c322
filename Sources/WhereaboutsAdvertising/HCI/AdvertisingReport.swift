/// One advertisement as the controller reported it, before any beacon decoding.
public struct AdvertisingReport: Sendable, Hashable {
    /// Which HCI event carried the report.
    public enum Format: Sendable, Hashable {
        /// LE Advertising Report (subevent 0x02).
        case legacy
        /// LE Extended Advertising Report (subevent 0x0D).
        case extended
    }

    /// Which HCI event carried the report.
    public var format: Format
    /// The event type: one byte for legacy reports (ADV_IND = 0 …), the 16-bit property bits for extended ones.
    public var eventType: UInt16
    /// The kind of address.
    public var addressType: AddressType
    /// The advertiser's address.
    public var address: DeviceAddress
    /// Received signal strength, dBm.
    public var rssi: Int
    /// The advertiser's transmit power in dBm, when an extended report carries it.
    public var txPower: Int?
    /// The advertising data (AD structures). It shares storage with, and its indices point into, the event.
    public var data: ArraySlice<UInt8>

    /// Makes a report from its fields.
    public init(
        format: Format,
        eventType: UInt16,
        addressType: AddressType,
        address: DeviceAddress,
        rssi: Int,
        txPower: Int? = nil,
        data: ArraySlice<UInt8>
    ) {
        self.format = format
        self.eventType = eventType
        self.addressType = addressType
        self.address = address
        self.rssi = rssi
        self.txPower = txPower
        self.data = data
    }

    /// Makes a report from the fields the parser read and the event they were read from.
    init(_ fields: AdvertisingReportFields, in event: ArraySlice<UInt8>) {
        self.init(
            format: fields.format,
            eventType: fields.eventType,
            addressType: fields.addressType,
            address: fields.address,
            rssi: fields.rssi,
            txPower: fields.txPower,
            data: event[fields.data]
        )
    }

    /// For extended reports, the data status bits 5–6: 0 complete, 1 incomplete with more to come, 2 truncated.
    public var dataStatus: UInt8 {
        Self.dataStatus(format: format, eventType: eventType)
    }

    /// The data status of a report of this format and event type; see `dataStatus`.
    static func dataStatus(format: Format, eventType: UInt16) -> UInt8 {
        format == .extended ? UInt8(truncatingIfNeeded: eventType >> 5) & 0b11 : 0
    }
}
