public import WhereaboutsCore

/// A beacon frame found in advertising data.
public enum BeaconFrame: Sendable, Hashable {
    /// An Apple iBeacon: proximity UUID, major, minor and the calibrated power at 1 m (dBm, as sent).
    case iBeacon(uuid: BeaconUUID, major: UInt16, minor: UInt16, measuredPower: Int)
    /// An AltBeacon whose 20-byte id is read as UUID, major and minor; reference RSSI at 1 m (dBm, as sent).
    case altBeacon(uuid: BeaconUUID, major: UInt16, minor: UInt16, referenceRSSI: Int, manufacturer: UInt16)
    /// An Eddystone-UID frame: 10-byte namespace, 6-byte instance, calibrated power at 0 m (dBm, as sent).
    case eddystoneUID(namespace: [UInt8], instance: [UInt8], txPowerAt0m: Int)
    /// An unencrypted Eddystone-TLM frame. It names no beacon; it belongs to whoever sends it.
    case eddystoneTLM(BeaconTelemetry)

    /// The tag the frame names; nil for telemetry.
    public var tag: TagIdentity? {
        switch self {
        case .iBeacon(let uuid, let major, let minor, _): .iBeacon(uuid: uuid, major: major, minor: minor)
        case .altBeacon(let uuid, let major, let minor, _, _): .altBeacon(uuid: uuid, major: major, minor: minor)
        case .eddystoneUID(let namespace, let instance, _):
            EddystoneUID(namespace: namespace, instance: instance).map(TagIdentity.eddystone)
        case .eddystoneTLM: nil
        }
    }

    /// The expected RSSI at 1 m in dBm, when the frame carries a plausible one.
    ///
    /// Eddystone calibrates at 0 m; its spec puts 1 m at 41 dB less. Values outside −100…−20 dBm are taken for
    /// uncalibrated or vendor bytes (several sensors put their own data there) and give nil.
    public var measuredPowerAt1m: Int? {
        let power: Int
        switch self {
        case .iBeacon(_, _, _, let measuredPower): power = measuredPower
        case .altBeacon(_, _, _, let referenceRSSI, _): power = referenceRSSI
        case .eddystoneUID(_, _, let txPowerAt0m): power = txPowerAt0m - 41
        case .eddystoneTLM: return nil
        }
        return (-100 ... -20).contains(power) ? power : nil
    }

    /// Apple's company identifier.
    static let appleCompany: UInt16 = 0x004C
    /// The Eddystone service UUID.
    static let eddystoneService: UInt16 = 0xFEAA

    /// The beacon frames in advertising data, in order; drops are counted by reason.
    ///
    /// Returns nil when the AD structures themselves are malformed, so that nothing from a corrupt advert is
    /// believed. Short or truncated beacon structures are skipped and counted; the rest still count.
    public static func frames(in data: ArraySlice<UInt8>, counters: inout DropCounters) -> [BeaconFrame]? {
        var frames: [BeaconFrame] = []
        return appendFrames(in: data, to: &frames, counters: &counters) ? frames : nil
    }

    /// Appends the beacon frames in advertising data to `frames`, as `frames(in:counters:)` finds them; false,
    /// with nothing appended, when the AD structures are malformed.
    ///
    /// The decoder reuses one buffer for every advert rather than making an array for each.
    static func appendFrames(
        in data: ArraySlice<UInt8>,
        to frames: inout [BeaconFrame],
        counters: inout DropCounters
    ) -> Bool {
        let firstNew = frames.endIndex
        var skipped: [DropReason] = []
        let fault = ADStructure.walk(data) { type, body in
            switch type {
            case ADStructure.manufacturerSpecificData:
                manufacturerFrame(body, into: &frames, skipped: &skipped)
            case ADStructure.serviceData16:
                eddystoneFrame(body, into: &frames, skipped: &skipped)
            default:
                break
            }
        }
        if let fault {
            counters.record(fault.dropReason)
            frames.removeSubrange(firstNew...)
            return false
        }
        for reason in skipped { counters.record(reason) }
        return true
    }

    /// The beacon frames in advertising data held in an array; see `frames(in:counters:)`.
    public static func frames(in data: [UInt8], counters: inout DropCounters) -> [BeaconFrame]? {
        frames(in: data[...], counters: &counters)
    }

    /// iBeacon: `4C 00 02 15` + UUID (16) + major (2, big-endian) + minor (2) + power (1).
    /// AltBeacon: company (2) + `BE AC` + id (20) + reference RSSI (1) + reserved (1).
    private static func manufacturerFrame(
        _ body: ArraySlice<UInt8>,
        into frames: inout [BeaconFrame],
        skipped: inout [DropReason]
    ) {
        let start = body.startIndex
        guard body.count >= 2 else {
            skipped.append(.shortManufacturerData)
            return
        }
        let company = UInt16(body[start]) | UInt16(body[start + 1]) << 8
        if company == appleCompany {
            // Apple packs many message types here; only type 0x02 with length 0x15 is an iBeacon, nothing else.
            guard body.count >= 3, body[start + 2] == 0x02 else { return }
            guard body.count >= 4, body[start + 3] == 0x15 else {
                skipped.append(.truncatedIBeacon)
                return
            }
            guard body.count >= 25, let uuid = BeaconUUID(bytes: body[start + 4..<start + 20]) else {
                skipped.append(.truncatedIBeacon)
                return
            }
            frames.append(
                .iBeacon(
                    uuid: uuid,
                    major: bigEndian16(body, start + 20),
                    minor: bigEndian16(body, start + 22),
                    measuredPower: Int(Int8(bitPattern: body[start + 24]))
                )
            )
            return
        }
        guard body.count >= 4, body[start + 2] == 0xBE, body[start + 3] == 0xAC else { return }
        guard body.count >= 26, let uuid = BeaconUUID(bytes: body[start + 4..<start + 20]) else {
            skipped.append(.truncatedBeaconFrame)
            return
        }
        frames.append(
            .altBeacon(
                uuid: uuid,
                major: bigEndian16(body, start + 20),
                minor: bigEndian16(body, start + 22),
                referenceRSSI: Int(Int8(bitPattern: body[start + 24])),
                manufacturer: company
            )
        )
    }

    /// Eddystone service data: `AA FE` + frame type + frame.
    /// UID (0x00): TX power at 0 m (1) + namespace (10) + instance (6) [+ 2 reserved].
    /// TLM (0x20), version 0: battery mV (2, big-endian) + temperature (2, signed 8.8) + counters (8).
    private static func eddystoneFrame(
        _ body: ArraySlice<UInt8>,
        into frames: inout [BeaconFrame],
        skipped: inout [DropReason]
    ) {
        let start = body.startIndex
        guard body.count >= 2, UInt16(body[start]) | UInt16(body[start + 1]) << 8 == eddystoneService else { return }
        guard body.count >= 3 else {
            skipped.append(.truncatedBeaconFrame)
            return
        }
        switch body[start + 2] {
        case 0x00:
            guard body.count >= 20 else {
                skipped.append(.truncatedBeaconFrame)
                return
            }
            frames.append(
                .eddystoneUID(
                    namespace: Array(body[start + 4..<start + 14]),
                    instance: Array(body[start + 14..<start + 20]),
                    txPowerAt0m: Int(Int8(bitPattern: body[start + 3]))
                )
            )
        case 0x20:
            guard body.count >= 4 else {
                skipped.append(.truncatedBeaconFrame)
                return
            }
            // Version 1 is encrypted (eTLM): nothing to read without the key.
            guard body[start + 3] == 0x00 else { return }
            guard body.count >= 16 else {
                skipped.append(.truncatedBeaconFrame)
                return
            }
            let telemetry = BeaconTelemetry(
                eddystoneBattery: bigEndian16(body, start + 4),
                temperature: bigEndian16(body, start + 6)
            )
            if let telemetry { frames.append(.eddystoneTLM(telemetry)) }
        default:
            // URL, EID and vendor frames name no trackable tag.
            break
        }
    }
}

/// A big-endian 16-bit value at an index the caller has checked.
func bigEndian16(_ bytes: ArraySlice<UInt8>, _ index: Int) -> UInt16 {
    UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
}
