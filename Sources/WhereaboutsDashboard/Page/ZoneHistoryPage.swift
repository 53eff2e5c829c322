import WhereaboutsCore
import WhereaboutsDrawing
import WhereaboutsWire

/// A zone's last hour as a page of its own: a step chart of the count (unknown stretches shaded) and its enter and
/// exit events. Drawn on the server, so it needs no script.
struct ZoneHistoryPage {
    let html: String

    init(zone: Zone, history: ZoneHistory, siteName: String, now: Double, renderer: MapRenderer) {
        let name = renderer.escape(zone.name)
        let chart = Self.chart(history, now: now)
        var rows = ""
        for crossing in history.crossings.reversed() {
            rows += "<tr><td>\(Self.clock(crossing.time)) UTC</td><td>\(renderer.escape(crossing.label))</td>"
            rows += "<td>\(crossing.kind == .enter ? "entered" : "left")</td></tr>\n"
        }
        let current: String
        switch history.samples.last {
        case nil: current = "not yet published"
        case let sample? where sample.state == .unknown: current = "unknown (its agents are silent)"
        case let sample?: current = "\(sample.count) tag\(sample.count == 1 ? "" : "s")"
        }

        html = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(name) · last hour · Whereabouts</title>
            <link rel="stylesheet" href="/app.css">
            </head>
            <body>
            <div class="history">
            <p><a href="/">← \(renderer.escape(siteName))</a></p>
            <h1>\(name), the last hour</h1>
            <p>Floor \(zone.floor), zone \(zone.minor). Now: <strong id="current">\(current)</strong>. \
            Grey stretches: unknown.</p>
            \(chart)
            <h2>Enter and exit</h2>
            <table id="crossings"><thead><tr><th>Time</th><th>Tag</th><th></th></tr></thead>
            <tbody>
            \(rows.isEmpty ? "<tr><td colspan=\"3\">none in the last hour</td></tr>\n" : rows)</tbody></table>
            </div>
            </body>
            </html>

            """
    }

    /// The step chart of the count over the hour before `now`, unknown stretches shaded, as an SVG element.
    static func chart(_ history: ZoneHistory, now: Double) -> String {
        let width = 680.0
        let height = 200.0
        let left = 40.0
        let right = 10.0
        let top = 10.0
        let bottom = 30.0
        let start = now - ZoneHistory.window
        let peak = max(history.samples.map(\.count).max() ?? 0, 1)
        let x = { (time: Double) -> Double in
            left + (max(time, start) - start) / ZoneHistory.window * (width - left - right)
        }
        let y = { (count: Int) -> Double in
            top + (height - top - bottom) * (1 - Double(count) / Double(peak))
        }

        var chart = #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \#(Int(width)) \#(Int(height))">"# + "\n"
        var line = ""
        for (index, sample) in history.samples.enumerated() {
            let from = x(sample.time)
            let to = index + 1 < history.samples.count ? x(history.samples[index + 1].time) : x(now)
            if sample.state == .unknown {
                chart += #"<rect class="chart-unknown" x="\#(Self.number(from))" y="\#(Self.number(top))" "#
                chart +=
                    #"width="\#(Self.number(max(to - from, 1)))" height="\#(Self.number(height - top - bottom))"/>"#
                chart += "\n"
                continue
            }
            let level = Self.number(y(sample.count))
            line += "M\(Self.number(from)),\(level) H\(Self.number(to)) "
        }
        if !line.isEmpty { chart += #"<path class="chart-line" d="\#(line)"/>"# + "\n" }
        let base = Self.number(height - bottom)
        chart +=
            #"<line class="chart-axis" x1="\#(Self.number(left))" y1="\#(base)" x2="\#(Self.number(width - right))" y2="\#(base)"/>"#
        chart += "\n"
        for minutes in stride(from: 60, through: 0, by: -15) {
            let position = Self.number(x(now - Double(minutes) * 60))
            let label = minutes == 0 ? "now" : "−\(minutes) min"
            chart += #"<text class="chart-label" x="\#(position)" y="\#(Self.number(height - 10))" "#
            chart += #"text-anchor="middle">\#(label)</text>"# + "\n"
        }
        for count in Set([0, peak]).sorted() {
            chart += #"<text class="chart-label" x="\#(Self.number(left - 6))" y="\#(Self.number(y(count) + 4))" "#
            chart += #"text-anchor="end">\#(count)</text>"# + "\n"
        }
        chart += "</svg>\n"
        return chart
    }

    /// `HH:MM:SS` of a Unix time, UTC.
    static func clock(_ time: Double) -> String {
        guard time.isFinite, time >= 0, time < 1e12 else { return "--:--:--" }
        let seconds = Int(time) % 86_400
        let parts = [seconds / 3600, seconds / 60 % 60, seconds % 60]
        return parts.map { $0 < 10 ? "0\($0)" : "\($0)" }.joined(separator: ":")
    }

    private static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        return String((value * 10).rounded() / 10)
    }
}
