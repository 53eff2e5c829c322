/// The latest telemetry per device address, in bounded memory.
///
/// Two generations: new entries go to `current`; when it holds half the capacity it becomes `previous` and the
/// old `previous` is forgotten. A hit in `previous` moves back to `current`. So at most `capacity` addresses are
/// held, recently used ones survive, and MAC address churn cannot grow memory.
struct TelemetryTable: Sendable, Hashable {
    /// The most addresses held.
    let capacity: Int
    private var current: [DeviceAddress: BeaconTelemetry] = [:]
    private var previous: [DeviceAddress: BeaconTelemetry] = [:]

    init(capacity: Int) {
        self.capacity = max(capacity, 2)
    }

    /// How many addresses are held.
    var count: Int { current.count + previous.count }

    /// Records the latest telemetry from an address.
    mutating func store(_ telemetry: BeaconTelemetry, for address: DeviceAddress) {
        previous[address] = nil
        current[address] = telemetry
        rotateIfFull()
    }

    /// The latest telemetry from an address, if still held.
    mutating func telemetry(for address: DeviceAddress) -> BeaconTelemetry? {
        if let telemetry = current[address] { return telemetry }
        guard let telemetry = previous.removeValue(forKey: address) else { return nil }
        current[address] = telemetry
        rotateIfFull()
        return telemetry
    }

    /// Peeks without refreshing.
    func peek(_ address: DeviceAddress) -> BeaconTelemetry? {
        current[address] ?? previous[address]
    }

    private mutating func rotateIfFull() {
        guard current.count >= capacity / 2 else { return }
        previous = current
        current = [:]
    }
}
