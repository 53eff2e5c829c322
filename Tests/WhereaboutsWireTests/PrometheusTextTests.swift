import Testing
import WhereaboutsWire

/// The Prometheus text exposition format (0.0.4) as ``PrometheusText`` writes it: names, HELP and TYPE lines, label
/// escaping against identifiers that come from elsewhere, and histograms.
@Suite("Prometheus text")
struct PrometheusTextTests {
    /// Reads a label value back as Prometheus's parser does (`\\`, `\"` and `\n` unescaped; the value ends at the
    /// first unescaped quote), from just after its opening quote; returns the value and what follows its closing
    /// quote. Nil when the line ends first: the value broke out of its quotes or its line.
    static func readLabelValue(_ text: Substring) -> (value: String, rest: Substring)? {
        var value = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character == "\n" { return nil }
            if character == "\"" { return (value, text[text.index(after: index)...]) }
            if character == "\\" {
                index = text.index(after: index)
                guard index < text.endIndex else { return nil }
                switch text[index] {
                case "n": value += "\n"
                case "\\": value += "\\"
                case "\"": value += "\""
                default: value += "\\" + String(text[index])
                }
            } else {
                value.append(character)
            }
            index = text.index(after: index)
        }
        return nil
    }

    @Test("a family starts with its HELP and TYPE lines, then its samples, one line each")
    func familyLines() {
        var out = PrometheusText()
        out.family("whereabouts_tags_tracked", .gauge, help: "Tags with a current position.")
        out.sample("whereabouts_tags_tracked", 12)
        out.family("whereabouts_readings_total", .counter, help: "Readings, per agent.")
        out.sample("whereabouts_readings_total", labels: [("agent", "hall-east")], 1200)
        #expect(
            out.text == """
                # HELP whereabouts_tags_tracked Tags with a current position.
                # TYPE whereabouts_tags_tracked gauge
                whereabouts_tags_tracked 12
                # HELP whereabouts_readings_total Readings, per agent.
                # TYPE whereabouts_readings_total counter
                whereabouts_readings_total{agent="hall-east"} 1200

                """)
    }

    @Test(
        "hostile label values stay inside their quotes and their line, and read back as they were",
        arguments: [
            "a\"b", "back\\slash", "line\nfeed", "\"} 1\nwhereabouts_forged 9\n#", "trailing\\", "\\\"", "ünïcødé ✓",
            "",
        ])
    func labelEscaping(value: String) throws {
        var out = PrometheusText()
        out.sample("m", labels: [("agent", value), ("reason", "x")], 1)
        let text = out.text
        #expect(text.filter { $0 == "\n" }.count == 1, "one sample, one line")
        #expect(text.hasPrefix("m{agent=\"") && text.hasSuffix(",reason=\"x\"} 1\n"))
        let read = try #require(Self.readLabelValue(text.dropFirst("m{agent=\"".count)))
        #expect(read.value == value)
        #expect(read.rest.hasPrefix(",reason=\"x\"}"))
    }

    @Test("control characters other than a line feed become U+FFFD in label values and HELP text")
    func controlCharacters() {
        #expect(PrometheusText.escapedLabelValue("a\rb\u{0}c\u{7F}d\u{2028}") == "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}")
        #expect(PrometheusText.escapedHelp("one\\two\nthree\r") == "one\\\\two\\nthree\u{FFFD}")
        var out = PrometheusText()
        out.family("m", .gauge, help: "a\nb")
        #expect(out.text == "# HELP m a\\nb\n# TYPE m gauge\n")
    }

    @Test("metric and label names keep only the characters the format allows")
    func names() {
        #expect(PrometheusText.metricName("whereabouts_ok:rate") == "whereabouts_ok:rate")
        #expect(PrometheusText.metricName("bad name{x=\"1\"}") == "bad_name_x__1__")
        #expect(PrometheusText.metricName("9lives") == "_9lives")
        #expect(PrometheusText.metricName("") == "_")
        #expect(PrometheusText.metricName("é") == "_", "one character, one underscore")
        #expect(PrometheusText.labelName("le:x") == "le_x", "no colon in a label name")
        var out = PrometheusText()
        out.sample("m", labels: [("a\"b", "v")], 1)
        #expect(out.text == "m{a_b=\"v\"} 1\n")
    }

    @Test("numbers: whole ones without a fraction, others exactly, and the special values as the format spells them")
    func numbers() {
        #expect(PrometheusText.number(0) == "0")
        #expect(PrometheusText.number(-3) == "-3")
        #expect(PrometheusText.number(1200) == "1200")
        #expect(PrometheusText.number(0.005) == "0.005")
        #expect(PrometheusText.number(2.5) == "2.5")
        #expect(Double(PrometheusText.number(1e-5)) == 1e-5)
        #expect(Double(PrometheusText.number(1_796_565_987.0713618)) == 1_796_565_987.0713618)
        #expect(PrometheusText.number(.infinity) == "+Inf")
        #expect(PrometheusText.number(-.infinity) == "-Inf")
        #expect(PrometheusText.number(.nan) == "NaN")
    }

    @Test("a histogram's buckets are cumulative, end with +Inf equal to the count, then the sum and the count")
    func histogram() {
        var histogram = Histogram(bounds: [0.1, 0.01, 1, 1])
        #expect(histogram.bounds == [0.01, 0.1, 1], "sorted, repeats left out")
        for value in [0.005, 0.01, 0.05, 0.1, 0.5, 3, 7] { histogram.observe(value) }
        histogram.observe(.nan)
        histogram.observe(.infinity)
        #expect(histogram.counts == [2, 2, 1, 2], "a value equal to a bound is in that bound's bucket")
        #expect(histogram.cumulativeCounts == [2, 4, 5, 7])
        #expect(histogram.count == 7, "non-finite values are not counted")
        var out = PrometheusText()
        out.family("lat_seconds", .histogram, help: "Latency.")
        out.samples(of: histogram, "lat_seconds", labels: [("agent", "a")])
        let lines = out.text.split(separator: "\n").map(String.init)
        #expect(
            Array(lines.dropFirst(2)) == [
                "lat_seconds_bucket{agent=\"a\",le=\"0.01\"} 2", "lat_seconds_bucket{agent=\"a\",le=\"0.1\"} 4",
                "lat_seconds_bucket{agent=\"a\",le=\"1\"} 5", "lat_seconds_bucket{agent=\"a\",le=\"+Inf\"} 7",
                "lat_seconds_sum{agent=\"a\"} \(PrometheusText.number(0.005 + 0.01 + 0.05 + 0.1 + 0.5 + 3 + 7))",
                "lat_seconds_count{agent=\"a\"} 7",
            ])
        #expect(lines[1] == "# TYPE lat_seconds histogram")
    }

    @Test("an empty histogram has every bucket at 0 and the default bounds run from 5 ms to 10 s")
    func emptyHistogram() {
        let histogram = Histogram()
        #expect(histogram.bounds.first == 0.005 && histogram.bounds.last == 10)
        #expect(histogram.cumulativeCounts == Array(repeating: 0, count: histogram.bounds.count + 1))
        var out = PrometheusText()
        out.samples(of: histogram, "h")
        #expect(out.text.contains("h_bucket{le=\"+Inf\"} 0\nh_sum 0\nh_count 0\n"))
    }
}
