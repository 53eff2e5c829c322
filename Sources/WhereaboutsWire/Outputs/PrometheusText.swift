/// Writes metrics in the Prometheus text exposition format, version 0.0.4: what Prometheus, its agents and the
/// OpenTelemetry collector scrape.
///
/// ```
/// # HELP whereabouts_readings_total Readings the engine took, per agent.
/// # TYPE whereabouts_readings_total counter
/// whereabouts_readings_total{agent="hall-east"} 1200
/// ```
///
/// A family is started with ``family(_:_:help:)`` (its `HELP` and `TYPE` lines), then its samples follow. Nothing
/// written here can break a line or a quoted string, whatever the caller passes:
/// - label values are escaped as the format says (`\` as `\\`, `"` as `\"`, a line feed as `\n`), and any other
///   control character, which the format would carry raw but which other readers take for a line break, becomes
///   U+FFFD;
/// - `HELP` text has `\` and line feeds escaped, control characters replaced;
/// - metric and label names keep only `[A-Za-z0-9_:]` (`:` not in label names), anything else becoming `_`, and
///   gain a leading `_` where they would start with a digit.
public struct PrometheusText: Sendable {
    /// The `Content-Type` of a scrape's answer in this format.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// A family's type, as its `TYPE` line names it.
    public enum Kind: String, Sendable, Hashable {
        case counter, gauge, histogram
    }

    /// The text so far.
    public private(set) var text = ""

    public init() {}

    /// Starts a family: its `HELP` and `TYPE` lines.
    public mutating func family(_ name: String, _ kind: Kind, help: String) {
        let name = Self.metricName(name)
        text += "# HELP \(name) \(Self.escapedHelp(help))\n# TYPE \(name) \(kind.rawValue)\n"
    }

    /// One sample line: `name{label="value",…} value`.
    public mutating func sample(_ name: String, labels: [(String, String)] = [], _ value: Double) {
        text += Self.metricName(name)
        if !labels.isEmpty {
            text += "{"
            for (index, label) in labels.enumerated() {
                if index > 0 { text += "," }
                text += "\(Self.labelName(label.0))=\"\(Self.escapedLabelValue(label.1))\""
            }
            text += "}"
        }
        text += " \(Self.number(value))\n"
    }

    /// One sample of a whole number.
    public mutating func sample(_ name: String, labels: [(String, String)] = [], _ value: Int) {
        sample(name, labels: labels, Double(value))
    }

    /// A histogram's samples (after its family's lines): `name_bucket` for each bound and `+Inf`, cumulative, then
    /// `name_sum` and `name_count`.
    public mutating func samples(
        of histogram: Histogram, _ name: String, labels: [(String, String)] = []
    ) {
        let cumulative = histogram.cumulativeCounts
        for (index, count) in cumulative.enumerated() {
            let bound = index < histogram.bounds.count ? Self.number(histogram.bounds[index]) : "+Inf"
            sample(name + "_bucket", labels: labels + [("le", bound)], count)
        }
        sample(name + "_sum", labels: labels, histogram.sum)
        sample(name + "_count", labels: labels, histogram.count)
    }

    // MARK: - Escaping

    /// A label value between its quotes.
    public static func escapedLabelValue(_ value: String) -> String {
        var escaped = ""
        escaped.unicodeScalars.reserveCapacity(value.unicodeScalars.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(isControl(scalar) ? "\u{FFFD}" : scalar)
            }
        }
        return escaped
    }

    /// `HELP` text: the rest of its line.
    public static func escapedHelp(_ help: String) -> String {
        var escaped = ""
        for scalar in help.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(isControl(scalar) ? "\u{FFFD}" : scalar)
            }
        }
        return escaped
    }

    /// A metric name: `[A-Za-z_:][A-Za-z0-9_:]*`.
    public static func metricName(_ name: String) -> String {
        identifier(name, allowsColon: true)
    }

    /// A label name: `[A-Za-z_][A-Za-z0-9_]*`.
    public static func labelName(_ name: String) -> String {
        identifier(name, allowsColon: false)
    }

    /// A sample value or bucket bound: a whole number without a fraction, `+Inf`, `-Inf`, `NaN`, or Swift's
    /// shortest form that reads back exactly (`0.005`, `1e-05`), which Prometheus's parser takes.
    public static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    private static func identifier(_ name: String, allowsColon: Bool) -> String {
        var result = ""
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: ":") where allowsColon:
                result += ":"
            case 0x80..<0xC0:
                continue  // the rest of a multi-byte character: one `_` stands for it
            default:
                result += "_"
            }
        }
        if let first = result.utf8.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) {
            result = "_" + result
        }
        return result.isEmpty ? "_" : result
    }
}
