import WhereaboutsCore

/// Turns raw HCI events into the sightings a filter selects, counting everything it drops.
///
/// It keeps the latest Eddystone-TLM telemetry per address (bounded) and attaches it to every later sighting from
/// that address. Values in, values out: the caller supplies the time.
public struct SightingDecoder: Sendable {
    /// What is published.
    public var filter: SightingFilter
    /// How events are read.
    public var parser: HCIEventParser
    /// What was dropped so far, by reason.
    public private(set) var counters = DropCounters()
    private var telemetryTable: TelemetryTable
    /// The beacon frames of the advert being decoded: one buffer, emptied and reused for every advert.
    private var frameBuffer: [BeaconFrame] = []

    /// Makes a decoder; `telemetryCapacity` bounds how many addresses' telemetry is kept.
    public init(filter: SightingFilter, parser: HCIEventParser = HCIEventParser(), telemetryCapacity: Int = 1024) {
        self.filter = filter
        self.parser = parser
        self.telemetryTable = TelemetryTable(capacity: telemetryCapacity)
    }

    /// Configured addresses (``SightingFilter/addresses``) heard as private random addresses, resolvable or not:
    /// such an address rotates, so it is never tracked. The shell says so once for each.
    public private(set) var privateAddressesHeard: Set<DeviceAddress> = []

    /// How many addresses' telemetry is held (at most the capacity given at creation).
    public var telemetryCount: Int { telemetryTable.count }

    /// The telemetry held for an address.
    public func telemetry(for address: DeviceAddress) -> BeaconTelemetry? {
        telemetryTable.peek(address)
    }

    /// Clears the drop counters, for example after reporting them.
    public mutating func resetCounters() {
        counters = DropCounters()
    }

    /// The sightings in one raw HCI event heard at `time` (Unix seconds).
    public mutating func sightings(
        in event: ArraySlice<UInt8>,
        framing: HCIFraming = .automatic,
        time: Double? = nil
    ) -> [BeaconSighting] {
        var cursor = parser.reportCursor(in: event, framing: framing, counters: &counters)
        var sightings: [BeaconSighting] = []
        while let report = cursor.next(in: event) {
            appendSightings(from: report, in: event, time: time, to: &sightings)
        }
        return sightings
    }

    /// The sightings in one raw HCI event held in an array; see `sightings(in:framing:time:)`.
    public mutating func sightings(in event: [UInt8], framing: HCIFraming = .automatic, time: Double? = nil)
        -> [BeaconSighting]
    {
        sightings(in: event[...], framing: framing, time: time)
    }

    /// The sightings in one advertising report heard at `time` (Unix seconds).
    public mutating func sightings(in report: AdvertisingReport, time: Double? = nil) -> [BeaconSighting] {
        var sightings: [BeaconSighting] = []
        appendSightings(from: AdvertisingReportFields(report), in: report.data, time: time, to: &sightings)
        return sightings
    }

    /// Appends the sightings in one report, whose data lies in `bytes`, or counts why there are none.
    private mutating func appendSightings(
        from report: AdvertisingReportFields,
        in bytes: ArraySlice<UInt8>,
        time: Double?,
        to sightings: inout [BeaconSighting]
    ) {
        if let reason = HCIEventParser.reportFault(report) {
            counters.record(reason)
            return
        }
        // Decoded into the one buffer kept for every advert; frames are copied out one by one below, so that
        // `self` can change while they are read.
        defer { if !frameBuffer.isEmpty { frameBuffer.removeAll(keepingCapacity: true) } }
        guard BeaconFrame.appendFrames(in: bytes[report.data], to: &frameBuffer, counters: &counters) else { return }
        // Telemetry is kept even from weak adverts: it describes the device, not where it is.
        for index in frameBuffer.indices {
            if case .eddystoneTLM(let telemetry) = frameBuffer[index] {
                telemetryTable.store(telemetry, for: report.address)
            }
        }
        guard filter.admits(rssi: report.rssi) else {
            counters.record(.belowRSSIFloor)
            return
        }
        let firstNew = sightings.endIndex
        var sawBeacon = false
        for index in frameBuffer.indices {
            let frame = frameBuffer[index]
            guard let tag = frame.tag else { continue }
            sawBeacon = true
            // One advert repeating a structure is one sighting.
            guard filter.selects(tag), !sightings[firstNew...].contains(where: { $0.tag == tag }) else { continue }
            sightings.append(sighting(tag, frame.measuredPowerAt1m, report, time))
        }
        guard sightings.endIndex == firstNew else { return }
        if !report.addressType.isStable(report.address), filter.addresses.contains(report.address) {
            // A configured address heard as a private (rotating) one: it will stop matching when it rotates.
            privateAddressesHeard.insert(report.address)
        }
        if filter.tracks(report.address, type: report.addressType) {
            sightings.append(sighting(report.address.tag, nil, report, time))
        } else {
            counters.record(sawBeacon ? .notSelected : .noBeacon)
        }
    }

    private mutating func sighting(
        _ tag: TagIdentity,
        _ measuredPower: Int?,
        _ report: AdvertisingReportFields,
        _ time: Double?
    ) -> BeaconSighting {
        BeaconSighting(
            tag: tag,
            rssi: report.rssi,
            measuredPower: measuredPower,
            address: report.address,
            addressType: report.addressType,
            time: time,
            telemetry: telemetryTable.telemetry(for: report.address)
        )
    }
}
