import WhereaboutsCore
import WhereaboutsWire

/// What `whereabouts watch` prints: a header with the locator's status and figures, each floor's zones with who is
/// in them, and the last events, all read from a ``DashboardState`` (the same topic parsing, map checks and bounds
/// as the live page).
public enum TerminalBoard {
    /// How many recent events are printed.
    public static let eventCount = 6
    /// How many names are printed per zone before `+N`.
    public static let namesPerZone = 6

    /// The board for `state`, `elapsed` seconds into a watch that lasts `duration` (a progress bar) or until stopped.
    /// Given the clock (`now`, Unix seconds), it says when what it shows is not current (``DashboardSource``) and
    /// how old it is, as the page does.
    public static func text(_ state: DashboardState, elapsed: Double, duration: Double?, now: Double? = nil) -> String {
        let source = now.map { state.source(now: $0) }
        var lines = [header(state, elapsed: elapsed, duration: duration)]
        if let source, let now, !source.isLive, source != .locatorUnknown {
            lines[0] += " · " + source.sentence + (source.since.map { " (\(age(now - $0)) ago)" } ?? "")
        }
        let map = state.map
        for floor in map.floors {
            lines.append("")
            lines.append("Floor \(floor.major) · \(floor.name)")
            for zone in map.zones(onFloor: floor.major) {
                lines.append(zoneLine(zone, occupancy: state.occupancy(of: zone.key), state: state, source: source))
            }
        }
        // The events as the page lists them: the label and the map's zone name it was given at ingest.
        let events = state.events.suffix(eventCount)
        if !events.isEmpty {
            lines.append("")
            lines.append("Recent events")
            for shown in events.reversed() {
                lines.append("  \(shown.label) \(shown.event.kind == .enter ? "entered" : "left") \(shown.zoneName)")
            }
        }
        return lines.map(printable).joined(separator: "\n") + "\n"
    }

    /// `line` with every control character (an escape sequence's ESC or CSI, a line break) and every bidirectional
    /// override shown as U+FFFD: names come from the broker, and a terminal would act on them where the page shows
    /// them as text.
    private static func printable(_ line: String) -> String {
        var safe = ""
        safe.unicodeScalars.reserveCapacity(line.unicodeScalars.count)
        for scalar in line.unicodeScalars {
            let value = scalar.value
            let control =
                value < 0x20 || (0x7F...0x9F).contains(value) || (0x2028...0x202E).contains(value)
                || (0x2066...0x2069).contains(value)
            safe.unicodeScalars.append(control ? "\u{FFFD}" : scalar)
        }
        return safe
    }

    private static func header(_ state: DashboardState, elapsed: Double, duration: Double?) -> String {
        var header = "Whereabouts · \(state.map.site.name) · \(clockText(elapsed))"
        if let duration, duration > 0 {
            let fraction = min(elapsed / duration, 1)
            let filled = Int(fraction * 30)
            header +=
                " [\(String(repeating: "#", count: filled))\(String(repeating: "-", count: 30 - filled))] \(Int(fraction * 100)) %"
        }
        header += " · locator \(state.locator?.rawValue ?? "unknown")"
        if let metrics = state.locatorMetrics {
            header +=
                " · \(metrics.readingsAccepted) readings, \(metrics.readingsRejected.values.reduce(0, +)) rejected"
            header += ", \(metrics.tagsTracked) tags, \(metrics.agentsOnline)/\(state.map.agents.count) agents"
        }
        return header
    }

    private static func zoneLine(
        _ zone: Zone, occupancy: ZoneOccupancy?, state: DashboardState, source: DashboardSource?
    ) -> String {
        let name = zone.name.padding(toLength: 22)
        guard let occupancy else { return "  \(name)     –  (not yet published)" }
        let count = occupancy.state == .unknown ? "  ?" : String(occupancy.count).leftPadding(toLength: 3)
        let who = occupancy.tags.prefix(namesPerZone).map { $0.name ?? state.label(for: $0.id) }.joined(separator: ", ")
        let more = occupancy.tags.count > namesPerZone ? " +\(occupancy.tags.count - namesPerZone)" : ""
        var unknown = ""
        if occupancy.state == .unknown {
            if case .simulationEnded = source {
                unknown = "  (unknown: the simulation ended)"
            } else {
                unknown = "  (unknown: its agents are silent)"
            }
        }
        return "  \(name) \(count)  \(who)\(more)\(unknown)"
    }

    /// `12 s`, `3 min`, `2 h`: an age as the page writes it.
    static func age(_ seconds: Double) -> String {
        let whole = max(Int(seconds), 0)
        if whole < 120 { return "\(whole) s" }
        if whole < 7200 { return "\(whole / 60) min" }
        return "\(whole / 3600) h"
    }

    /// `m:ss`.
    static func clockText(_ seconds: Double) -> String {
        let whole = Int(seconds)
        return "\(whole / 60):" + String(whole % 60).leftPadding(toLength: 2, with: "0")
    }
}

extension String {
    fileprivate func padding(toLength length: Int) -> String {
        count >= length ? String(prefix(length)) : self + String(repeating: " ", count: length - count)
    }

    fileprivate func leftPadding(toLength length: Int, with pad: Character = " ") -> String {
        count >= length ? self : String(repeating: pad, count: length - count) + self
    }
}
