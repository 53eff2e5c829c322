import Testing
import WhereaboutsJSON

@Suite("JSON parser and writer")
struct JSONParserTests {
    let parser = JSONParser()

    @Test("parses every kind of value, keeping member order")
    func values() throws {
        let value = try parser.parse(
            #"{"b": [1, -2.5, 3e2, true, false, null], "a": "x\"\\\/\n\u00e9\ud83d\ude00", "c": {}}"#)
        let object = try #require(value.object)
        #expect(object.keys == ["b", "a", "c"])
        #expect(object["b"] == [1, -2.5, 300, true, false, nil])
        #expect(object["a"]?.string == "x\"\\/\né😀")
        #expect(object["c"] == .object(JSONObject()))
    }

    @Test(
        "refuses what is not JSON",
        arguments: [
            "", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "-", "1e", "NaN", "Infinity", "'a'", "{a:1}", "[1 2]",
            "\"\u{01}\"", "\"\\x\"", "\"\\ud800\"", "tru", "nul", "{\"a\":1}x", "1e999", "{\"a\":1,\"a\":2}",
        ]
    )
    func refuses(text: String) {
        #expect(throws: JSONParseError.self) { try parser.parse(text) }
    }

    @Test("limits on size and depth hold, and the size check reads nothing")
    func limits() {
        let small = JSONParser(maximumBytes: 10, maximumDepth: 3)
        let error = #expect(throws: JSONParseError.self) { try small.parse("[1,2,3,4,5,6]") }
        #expect(error?.reason == .tooLarge(limit: 10))
        #expect((try? small.parse("[[[1]]]")) != nil)
        #expect(throws: JSONParseError.self) { try small.parse("[[[[1]]]]") }
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONParseError.self) { try parser.parse(deep) }
    }

    @Test("invalid UTF-8 inside a string is refused")
    func invalidUTF8() {
        #expect(throws: JSONParseError.self) { try parser.parse([0x22, 0xC3, 0x28, 0x22]) }
    }

    @Test("overflowing numbers can be kept as infinities for a validator to name")
    func overflow() throws {
        let keeping = JSONParser(keepsOverflowingNumbers: true)
        let value = try keeping.parse("[1e999]")
        #expect(value.array?.first == .number(.infinity))
        #expect(value.array?.first?.double == nil)
    }

    @Test("the writer is deterministic and round-trips")
    func writer() throws {
        let value: JSONValue = [
            "z": 1, "a": [1.5, -0.25, 1e-7, 12_345_678_901], "s": "q\"\n\u{01}", "n": nil, "t": true,
        ]
        let text = JSONWriter().string(value)
        #expect(text == #"{"z":1,"a":[1.5,-0.25,1e-07,12345678901],"s":"q\"\n\u0001","n":null,"t":true}"#)
        #expect(try parser.parse(text) == value)
        let pretty = JSONWriter(pretty: true).string(value)
        #expect(try parser.parse(pretty) == value)
        #expect(JSONWriter().string(.number(.nan)) == "null")
    }

    @Test("strings are escaped character by character, wherever the escapes fall in them; integers of every size")
    func escapesAndIntegers() throws {
        // The writer copies the runs between escapes whole; a plain escaper, one character at a time, is the
        // reference.
        func reference(_ text: String) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case "\u{0}"..."\u{1F}":
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        let pieces = [
            "a", "plain run of text ", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1F}", "ü", "🗝️", "\u{7F}", "",
        ]
        var state: UInt64 = 7
        var wrong: [String] = []
        for _ in 0..<2_000 {
            var text = ""
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            for step in 0..<Int(state >> 60) {
                text += pieces[Int((state >> UInt64(4 * step % 56)) % UInt64(pieces.count))]
            }
            let written = JSONWriter().string(.string(text))
            if written != reference(text) { wrong.append(written) }
            #expect(try parser.parse(written) == .string(text))
        }
        #expect(wrong.isEmpty, "\(wrong.count) differ, first \(wrong.prefix(3))")
        for integer in [0, 7, -7, 10, -10, 999_999_999_999_999, -999_999_999_999_999, 1 << 40, -(1 << 40)] {
            #expect(JSONWriter().string(.number(Double(integer))) == String(integer))
        }
    }

    @Test("numbers of three decimals, written without description, are written as description writes them")
    func thousandths() {
        // A fixed-seed generator of its own: this module's tests need nothing from the engine.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var numbers: [Double] = [
            0.001, -0.001, 0.005, 0.01, 0.1, 0.125, 1.5, -2.25, 999_999_999_999.999, -999_999_999_999.999,
            999_999_999_999.5, 1e12 - 0.001, 1e12 + 0.5, 1_796_138_315.764, 0.000_5, 0.000_1, 1e-7, 1.0 / 3, .pi,
            123.456_7, 1e15 + 0.5, .leastNonzeroMagnitude, 4_503_599_627_370_495.5,
        ]
        for magnitude in [1e3, 1e6, 1e9, 1e12, 1e15, 1e18] {
            for _ in 0..<5_000 {
                let k = Double(Int64(bitPattern: next()) % Int64(magnitude))
                numbers.append(k / 1000)
                // And numbers a little off three decimals, which must not take the short way.
                numbers.append((k / 1000).nextUp)
                numbers.append(Double(bitPattern: next() >> 2) * (next() % 2 == 0 ? 1 : -1))
            }
        }
        var wrong: [String] = []
        for number in numbers where number.isFinite && number.rounded() != number {
            let written = JSONWriter().string(.number(number))
            if written != number.description { wrong.append("\(number.description) written \(written)") }
        }
        #expect(wrong.isEmpty, "\(wrong.count) differ, first \(wrong.prefix(3))")
    }

    @Test("integers are read exactly and integrality is checked")
    func integers() throws {
        #expect(try parser.parse("65535").integer == 65535)
        #expect(try parser.parse("-127").integer == -127)
        #expect(try parser.parse("2.5").integer == nil)
        #expect(try parser.parse("\"2\"").integer == nil)
    }
}
