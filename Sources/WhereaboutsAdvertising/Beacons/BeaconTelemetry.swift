/// What a beacon says about itself: battery voltage and temperature, each when known.
public struct BeaconTelemetry: Sendable, Hashable {
    /// Battery voltage, millivolts.
    public var batteryMillivolts: Int?
    /// Temperature, degrees Celsius.
    public var temperatureCelsius: Double?

    /// Makes telemetry from its values.
    public init(batteryMillivolts: Int?, temperatureCelsius: Double?) {
        self.batteryMillivolts = batteryMillivolts
        self.temperatureCelsius = temperatureCelsius
    }

    /// Reads Eddystone-TLM's fields: battery 0 and temperature 0x8000 mean "not supported". Nil if neither is known.
    init?(eddystoneBattery battery: UInt16, temperature: UInt16) {
        let millivolts: Int? = battery == 0 ? nil : Int(battery)
        let celsius: Double? = temperature == 0x8000 ? nil : Double(Int16(bitPattern: temperature)) / 256
        guard millivolts != nil || celsius != nil else { return nil }
        self.init(batteryMillivolts: millivolts, temperatureCelsius: celsius)
    }
}
