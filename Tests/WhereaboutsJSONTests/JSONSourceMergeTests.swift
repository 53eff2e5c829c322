import Foundation
import Testing
import WhereaboutsJSON

@Suite("JSONSourceMerge: edits keep the text of what they do not touch")
struct JSONSourceMergeTests {
    @Test("every JSON file of the repository merges with its own value to itself, byte for byte")
    func repositoryFilesRoundTrip() throws {
        let paths = repositoryJSONFiles()
        #expect(paths.contains("maps/demo-office.json"))
        #expect(paths.contains("maps/kolakowski-flat.json"))
        #expect(paths.count >= 15, "found only \(paths)")
        for path in paths {
            let original = try repositoryFile(path)
            let output = try JSONSourceMerge.merge(original: original, edited: try parse(original))
            #expect(output == original, "\(path) changed")
        }
    }

    @Test(
        "odd spacing, escapes, number spellings and the whitespace around the document survive a round trip",
        arguments: [
            "  \n{\"a\" :\t[ 1 ,2.0 ] , \"b\":{ } ,\"c\" : [ ]}\r\n\n", "[1e3, -0, -0.0, 2.50, 1E-2, 0.1e+1]",
            #"{"s": "caf\u00e9 \"q\" \/ \ud83d\ude00", "t": true, "f": false, "n": null}"#, "\"plain\"", " 12 ",
            "{\r\n\t\"a\": [\r\n\t\t1,\r\n\t\t2\r\n\t]\r\n}", "[[[[]]], {}, [{}], {\"a\": {\"b\": {}}}]",
        ]
    )
    func oddTextRoundTrips(original: String) throws {
        let bytes = Array(original.utf8)
        #expect(try JSONSourceMerge.merge(original: bytes, edited: parse(bytes)) == bytes)
    }

    @Test("one number changed in a 363-line map changes only its line")
    func oneNumberChangesOneLine() throws {
        let original = try repositoryFile("maps/kolakowski-flat.json")
        let edited = modified(try parse(original), [.key("floors"), .index(0), .key("outline"), .index(1), .index(0)]) {
            #expect($0 == 1.93)
            $0 = 1.95
        }
        let before = lines(text(original))
        let after = lines(text(try merged(original, edited)))
        #expect(before.count == 364)
        #expect(after.count == before.count)
        let changed = zip(before, after).filter { $0 != $1 }
        #expect(changed.count == 1)
        #expect(changed.first?.0 == "          1.93,")
        #expect(changed.first?.1 == "          1.95,")
    }

    @Test("a zone deleted from the middle of zones takes its lines and its comma with it, and only those")
    func zoneDeleted() throws {
        let original = try repositoryFile("maps/demo-office.json")
        let edited = modified(try parse(original), [.key("zones")]) { zones in
            guard case .array(var elements) = zones else { return }
            #expect(elements[2].object?["name"] == "Meeting Room A")
            elements.remove(at: 2)
            zones = .array(elements)
        }
        var expected = lines(text(original))
        let minor = try #require(expected.firstIndex(of: #"      "minor": 3,"#))
        let next = try #require(expected[minor...].firstIndex(of: "    {"))
        #expect(expected[minor - 2] == "    {")
        expected.removeSubrange((minor - 2)..<next)
        #expect(lines(text(try merged(original, edited))) == expected)
    }

    @Test("a point inserted in a polygon is written like its neighbours, multi-line, and nothing else changes")
    func pointInserted() throws {
        let original = try repositoryFile("maps/demo-office.json")
        let edited = modified(try parse(original), [.key("zones"), .index(0), .key("polygon")]) { polygon in
            guard case .array(var points) = polygon else { return }
            points.insert([12, 4.25], at: 1)
            polygon = .array(points)
        }
        let before = "\"name\": \"Lobby\",\n      \"polygon\": [\n        [\n          0,\n          0\n        ],\n"
        let after = before + "        [\n          12,\n          4.25\n        ],\n"
        let expected = try replacingFirst(before, with: after, in: text(original))
        #expect(text(try merged(original, edited)) == expected)
    }

    @Test("a member added to a pretty-printed object is appended at its siblings' indentation, pretty-printed")
    func memberAddedPretty() throws {
        let original = try repositoryFile("maps/demo-office.json")
        let underlay: JSONValue = ["file": "plan.png", "origin": [0, -1.5], "scale": 0.05, "rotation": 0]
        let edited = modified(try parse(original), [.key("floors"), .index(0)]) { floor in
            guard case .object(var members) = floor else { return }
            members["underlay"] = underlay
            floor = .object(members)
        }
        let end = "          20\n        ]\n      ]\n    },\n"
        let added =
            "          20\n        ]\n      ],\n      \"underlay\": {\n        \"file\": \"plan.png\",\n"
            + "        \"origin\": [\n          0,\n          -1.5\n        ],\n        \"scale\": 0.05,\n"
            + "        \"rotation\": 0\n      }\n    },\n"
        #expect(text(try merged(original, edited)) == (try replacingFirst(end, with: added, in: text(original))))
    }

    @Test("a member added to a one-line object stays on the line, spaced like its siblings")
    func memberAddedCompact() throws {
        #expect(
            try merged(#"{"a": 1, "b": [2, 3]}"#, ["a": 1, "b": [2, 3], "c": ["x": 1.5, "y": [true, nil]]])
                == #"{"a": 1, "b": [2, 3], "c": {"x": 1.5, "y": [true, null]}}"#)
        #expect(try merged(#"{"a":1}"#, ["a": 1, "b": [1, 2]]) == #"{"a":1,"b":[1,2]}"#)
        #expect(try merged(#"{ "a": 1 }"#, ["a": 1, "b": [1, 2]]) == #"{ "a": 1, "b": [1, 2] }"#)
    }

    @Test("a new member looks like the same member of a neighbouring element")
    func memberLikeItsCousin() throws {
        let original = """
            {
              "floors": [
                {
                  "major": 1,
                  "underlay": {"file": "a.png", "origin": [1, 2]}
                },
                {
                  "major": 2
                }
              ]
            }
            """
        let expected = """
            {
              "floors": [
                {
                  "major": 1,
                  "underlay": {"file": "a.png", "origin": [1, 2]}
                },
                {
                  "major": 2,
                  "underlay": {"file": "b.png", "origin": [3, 4]}
                }
              ]
            }
            """
        let edited = modified(try parse(Array(original.utf8)), [.key("floors"), .index(1)]) { floor in
            guard case .object(var members) = floor else { return }
            members["underlay"] = ["file": "b.png", "origin": [3, 4]]
            floor = .object(members)
        }
        #expect(try merged(original, edited) == expected)
    }

    @Test("an empty array filled in a pretty-printed document is pretty-printed at its member's indentation")
    func emptyArrayFilled() throws {
        let original = "{\n  \"floors\": [\n    {\n      \"major\": 1\n    }\n  ],\n  \"walls\": []\n}\n"
        let edited: JSONValue = [
            "floors": [["major": 1]], "walls": [["from": [0, 0], "to": [1, 0]]],
        ]
        let expected =
            "{\n  \"floors\": [\n    {\n      \"major\": 1\n    }\n  ],\n  \"walls\": [\n    {\n      \"from\": [\n"
            + "        0,\n        0\n      ],\n      \"to\": [\n        1,\n        0\n      ]\n    }\n  ]\n}\n"
        #expect(try merged(original, edited) == expected)
        #expect(try merged(expected, ["floors": [["major": 1]], "walls": []]) == original)
    }

    @Test("members the editor does not know, and their spellings, are kept while others change")
    func unknownKeysKept() throws {
        let original = """
            {
              "site": {"name": "A", "x_vendor": {"ids": [1e3, 2.0, -0], "note": "caf\\u00e9 \\"q\\""}},
              "zones": [
                {"name": "Z", "minor": 1, "x_colour": "#ff0000"}
              ]
            }

            """
        var edited = try parse(Array(original.utf8))
        modify(&edited, [.key("site"), .key("name")]) { $0 = "B" }
        modify(&edited, [.key("zones"), .index(0), .key("minor")]) { $0 = 2 }
        let expected = original.replacingOccurrences(of: #""A""#, with: #""B""#)
            .replacingOccurrences(of: #""minor": 1"#, with: #""minor": 2"#)
        #expect(try merged(original, edited) == expected)
    }

    @Test("unchanged objects keep their key order; the editor's order wins where it reorders")
    func keyOrder() throws {
        let original = "{\n  \"b\": 1,\n  \"a\": {\"y\": 2, \"x\": 3}\n}"
        #expect(
            try merged(original, ["b": 5, "a": ["y": 2, "x": 3]]) == "{\n  \"b\": 5,\n  \"a\": {\"y\": 2, \"x\": 3}\n}")
        #expect(
            try merged(original, ["a": ["y": 2, "x": 3], "b": 1]) == "{\n  \"a\": {\"y\": 2, \"x\": 3},\n  \"b\": 1\n}")
        #expect(
            try merged(original, ["b": 1, "a": ["x": 3, "y": 2]]) == "{\n  \"b\": 1,\n  \"a\": {\"x\": 3, \"y\": 2}\n}")
    }

    @Test("changed scalars are written as the writer writes them; their neighbours keep their spelling")
    func scalarsChanged() throws {
        #expect(try merged("[1.50, 1e3, -0.0, 2.0]", [1.25, 1000, 0, 2]) == "[1.25, 1e3, -0.0, 2.0]")
        #expect(try merged("  \n{\"a\" :\t[ 1 ,2 ] }\r\n\n", ["a": [1, 3]]) == "  \n{\"a\" :\t[ 1 ,3 ] }\r\n\n")
        #expect(try merged(#"{"s": "x", "n": 1}"#, ["s": "q\"\n", "n": nil]) == #"{"s": "q\"\n", "n": null}"#)
        #expect(try merged(#"{"a": [1, 2], "b": {"c": 1}}"#, ["a": [], "b": [:]]) == #"{"a": [], "b": {}}"#)
        #expect(try merged("[1, 2, 3]", [3]) == "[3]")
        #expect(try merged("[1, 2, 3]", [0, 1, 2, 3, 4]) == "[0, 1, 2, 3, 4]")
    }

    @Test("an element deleted between changed ends is found by the common subsequence; its neighbours keep spelling")
    func commonSubsequence() throws {
        #expect(
            try merged("[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]", [9, 2, 3, 5, 6, 8]) == "[9, 2.0, 3.0, 5.0, 6.0, 8]")
        // Of two elements that swap places, one is matched (the common subsequence has room for one) and the other
        // is written anew.
        #expect(try merged("[1.0, 2.0, 3.0]", [2, 1, 3]) == "[2.0, 1, 3.0]")
    }

    @Test("above the subsequence's size limit, elements between changed ends are matched by index and still correct")
    func indexFallback() throws {
        // 2,100 elements with both ends changed leave a middle of about 2,099 × 2,098 pairs, above the 4,000,000 limit.
        let count = 2_100
        let original = "[" + (0..<count).map { "\($0).0" }.joined(separator: ", ") + "]"
        var elements = (0..<count).map { JSONValue.number(Double($0)) }
        elements[0] = -1
        elements[count - 1] = -2
        elements.remove(at: 1_000)
        let output = try merged(original, .array(elements))
        // Before the deletion each element is paired with itself; after it, with its old neighbour, so rewritten.
        #expect(output.hasPrefix("[-1, 1.0, 2.0, "))
        #expect(output.contains(" 999.0, 1001, 1002, "))
        #expect(output.hasSuffix(", 2098, -2]"))
    }

    @Test("a tab-indented document with CRLF line breaks gets its new lines in its own style")
    func tabsAndCRLF() throws {
        #expect(
            try merged("{\r\n\t\"a\": 1\r\n}\r\n", ["a": 1, "b": [1]])
                == "{\r\n\t\"a\": 1,\r\n\t\"b\": [\r\n\t\t1\r\n\t]\r\n}\r\n")
    }

    @Test(
        "an original that is not JSON is refused, naming where it fails",
        arguments: ["", "{", "[1,]", #"{"a": 1, "a": 2}"#, "[1] x", "{'a': 1}", "NaN"]
    )
    func malformedOriginal(original: String) {
        let error = #expect(throws: JSONSourceMergeError.self) {
            try JSONSourceMerge.merge(original: Array(original.utf8), edited: [1])
        }
        guard case .some(.originalUnreadable) = error else {
            Issue.record("wrong error \(String(describing: error))")
            return
        }
        #expect(error?.description.hasPrefix("the original document is not JSON: ") == true)
    }

    @Test("an edited value JSON cannot say is refused, naming its path")
    func unrepresentableEdit() {
        let nan = #expect(throws: JSONSourceMergeError.self) {
            try JSONSourceMerge.merge(original: Array("{}".utf8), edited: ["a b": [1, .number(.infinity)]])
        }
        #expect(nan == .nonFiniteNumber(path: #"$["a b"][1]"#))
        let twice = JSONValue.object(JSONObject([("k", 1), ("k", 2)]))
        let duplicate = #expect(throws: JSONSourceMergeError.self) {
            try JSONSourceMerge.merge(original: Array("{}".utf8), edited: ["zones": [twice]])
        }
        #expect(duplicate == .duplicateKey("k", path: "$.zones[0]"))
    }

    private func replacingFirst(_ target: String, with replacement: String, in text: String) throws -> String {
        let range = try #require(text.range(of: target))
        return text.replacingCharacters(in: range, with: replacement)
    }
}
