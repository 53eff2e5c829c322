public import WhereaboutsAdvertising
import WhereaboutsCore

/// The text `whereabouts-agent --check` prints: the controller, what it listens for, each tag as first heard, and
/// the verdict with what to look at when nothing was heard. Values in, lines out.
public enum CheckReport {
    /// The controller: name, address, versions and maker, how it scans, the LE features that matter.
    public static func controller(_ identity: ControllerIdentity, activeScan: Bool) -> [String] {
        var lines = ["controller \(identity.name)"]
        lines.append(
            "  address:      " + (identity.address.map { "\($0) (public)" } ?? "unknown (Read BD_ADDR refused)"))
        if let version = identity.version {
            lines.append(
                "  version:      HCI \(coreName(version.hciVersion)) (revision 0x\(hex(version.hciRevision, 4))), "
                    + "LMP \(coreName(version.lmpVersion)) (subversion 0x\(hex(version.lmpSubversion, 4)))")
            let company = "0x\(hex(version.manufacturer, 4))"
            lines.append("  manufacturer: " + (identity.manufacturerName.map { "\($0) (\(company))" } ?? company))
        } else {
            lines.append("  version:      unknown (Read Local Version Information refused)")
        }
        let mode = activeScan ? "active" : "passive"
        lines.append(
            "  scanning:     "
                + (identity.extendedScanning
                    ? "extended LE commands (LE Set Extended Scan Parameters/Enable), \(mode)"
                    : "legacy LE commands (LE Set Scan Parameters/Enable), \(mode)"))
        if let features = identity.leFeatures {
            let named = [LEFeatures.Feature.extendedAdvertising, .codedPHY, .llPrivacy].map {
                "\($0.name) " + (features.has($0) ? "yes" : "no")
            }
            lines.append("  LE features:  " + named.joined(separator: ", ") + " (mask 0x\(hex(features.bits, 16)))")
        } else {
            lines.append("  LE features:  unknown (LE Read Local Supported Features refused: not an LE controller?)")
        }
        return lines
    }

    /// What the check listens for, and for how long.
    public static func listening(_ filter: SightingFilter, count: Int, timeout: Double) -> String {
        "listening up to \(seconds(timeout)) s for \(plural(count, "beacon")) the agent would publish: "
            + describe(filter)
    }

    /// What the agent publishes, in words.
    public static func describe(_ filter: SightingFilter) -> String {
        var parts: [String] = []
        if filter.selectsAllBeacons {
            parts.append("every beacon (--constraint any)")
        } else if !filter.constraints.isEmpty {
            parts.append(
                "iBeacons and AltBeacons under " + filter.constraints.map(\.description).joined(separator: ", "))
        }
        if !filter.namedTags.isEmpty {
            parts.append("the tags " + filter.namedTags.sorted().map(\.description).joined(separator: ", "))
        }
        if !filter.addresses.isEmpty {
            parts.append("the devices at " + filter.addresses.sorted().map(\.description).joined(separator: ", "))
        }
        var text = parts.isEmpty ? "nothing" : parts.joined(separator: "; ")
        if let floor = filter.minimumRSSI { text += ", at \(floor) dBm or stronger" }
        return text
    }

    /// One tag, as first heard; `number` counts from 1.
    public static func heard(_ heard: BeaconCheck.Heard, number: Int) -> String {
        let sighting = heard.first
        return "beacon \(number): \(sighting.tag), RSSI \(sighting.rssi) dBm, "
            + (sighting.measuredPower.map { "measured power \($0) dBm" } ?? "no measured power")
            + ", from \(sighting.address) (\(sighting.addressType)), after \(seconds(heard.after)) s"
    }

    /// The verdict after `elapsed` seconds: what was heard, the other adverts, and on failure what to check.
    public static func verdict(_ check: BeaconCheck, elapsed: Double, activeScan: Bool) -> [String] {
        var lines: [String] = []
        if check.passed {
            lines.append(
                "heard \(plural(check.heard.count, "beacon")) the agent would publish in \(seconds(elapsed)) s "
                    + "(\(plural(check.publishedAdverts, "advert"))):")
            for tag in check.heard {
                let range = tag.rssiRange
                let rssi = range.count == 1 ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)"
                lines.append("  \(tag.first.tag): \(plural(tag.adverts, "advert")), RSSI \(rssi) dBm")
            }
        } else {
            lines.append("no beacon the agent would publish was heard in \(seconds(elapsed)) s")
        }
        lines += others(check)
        if check.passed {
            lines.append("OK: \(check.heard.count == 1 ? "a tag" : "tags") the agent would publish heard")
        } else {
            lines += hints(check, activeScan: activeScan)
        }
        return lines
    }

    /// The other adverts: how many, why, and the beacons outside the filter (the most heard first).
    static func others(_ check: BeaconCheck) -> [String] {
        var lines = [
            "other adverts (not published): \(check.otherAdverts)"
                + (check.reasons.total > 0 ? " (\(check.reasons))" : "")
        ]
        let foreign = check.foreign.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        if !foreign.isEmpty {
            let shown = foreign.prefix(5).map { "\($0.key) (\(plural($0.value, "advert")))" }
            lines.append(
                "  beacons outside the filter: " + shown.joined(separator: ", ")
                    + (foreign.count > 5 ? " and \(foreign.count - 5) more" : ""))
        }
        return lines
    }

    /// What to look at when nothing the agent would publish was heard.
    static func hints(_ check: BeaconCheck, activeScan: Bool) -> [String] {
        var lines = [
            "check:",
            "  - the site: the agent publishes \(describe(check.filter)) (WHEREABOUTS_SITE, WHEREABOUTS_CONSTRAINTS)"
                + (check.foreign.isEmpty
                    ? "" : "; the beacons above carry other identities (--constraint any shows every beacon)"),
            "  - the tags: near (a few metres), switched on, battery charged"
                + (activeScan ? "" : "; some send their iBeacon only in the scan response: try --active"),
        ]
        let reasons = check.reasons
        if reasons[.belowRSSIFloor] > 0 {
            let floor = check.filter.minimumRSSI.map { " \($0) dBm" } ?? ""
            lines.append("  - the RSSI floor (--rssi-floor\(floor)): weaker adverts: \(reasons[.belowRSSIFloor])")
        }
        if reasons[.rssiUnavailable] > 0 {
            lines.append(
                "  - the adapter: \(plural(reasons[.rssiUnavailable], "advert")) came without an RSSI (127, "
                    + "not available), which the agent never publishes")
        }
        if check.otherAdverts == 0 {
            // Nothing at all: the adapter is the likeliest cause, so it comes first.
            lines.insert(
                "  - the adapter: it heard no advert at all. Is it unblocked (rfkill list) and powered "
                    + "(bluetoothctl show)? Is it the right one (--device; btmgmt info lists them)? A USB dongle "
                    + "beside a USB 3 port hears less: try a USB 2 port or an extension cable", at: 1)
        }
        return lines
    }

    /// "5.0 (9)", or "9" for a number the table does not know.
    static func coreName(_ version: UInt8) -> String {
        LocalVersion.coreSpecification(version).map { "\($0) (\(version))" } ?? "\(version)"
    }

    /// Seconds with one decimal.
    static func seconds(_ value: Double) -> String {
        guard value.isFinite else { return "\(value)" }
        return "\((value * 10).rounded() / 10)"
    }

    /// "1 beacon", "2 beacons".
    static func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

    /// Lower-case hex, zero-padded to `width` digits.
    static func hex<Value: BinaryInteger>(_ value: Value, _ width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
