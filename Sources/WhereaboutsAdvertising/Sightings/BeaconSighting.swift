public import WhereaboutsCore

/// One tag heard once: what the agent publishes as a reading.
public struct BeaconSighting: Sendable, Hashable {
    /// Who was heard.
    public var tag: TagIdentity
    /// Received signal strength, dBm.
    public var rssi: Int
    /// The tag's calibrated RSSI at 1 m in dBm, when it sends a plausible one.
    public var measuredPower: Int?
    /// The address the advert came from.
    public var address: DeviceAddress
    /// The kind of that address.
    public var addressType: AddressType
    /// When it was heard, Unix seconds, if the caller knows.
    public var time: Double?
    /// The latest battery and temperature the same address sent in an Eddystone-TLM frame, if any.
    public var telemetry: BeaconTelemetry?

    /// Makes a sighting from its fields.
    public init(
        tag: TagIdentity,
        rssi: Int,
        measuredPower: Int?,
        address: DeviceAddress,
        addressType: AddressType,
        time: Double? = nil,
        telemetry: BeaconTelemetry? = nil
    ) {
        self.tag = tag
        self.rssi = rssi
        self.measuredPower = measuredPower
        self.address = address
        self.addressType = addressType
        self.time = time
        self.telemetry = telemetry
    }
}
