import Foundation
import Testing
import WhereaboutsJSON

/// The repository's root, two folders above this file.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// A file of the repository, by its path from the root.
func repositoryFile(_ path: String) throws -> [UInt8] {
    let data = try #require(FileManager.default.contents(atPath: repositoryRoot.appendingPathComponent(path).path))
    return Array(data)
}

/// Every JSON document in maps/ and the tests' fixtures, by path from the root, sorted.
func repositoryJSONFiles() -> [String] {
    var paths: [String] = []
    for folder in ["maps", "Tests"] {
        let base = repositoryRoot.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(atPath: base.path) else { continue }
        while let path = walker.nextObject() as? String {
            if path.hasSuffix(".json") { paths.append("\(folder)/\(path)") }
        }
    }
    return paths.sorted()
}

func parse(_ bytes: [UInt8]) throws -> JSONValue { try JSONParser().parse(bytes) }

func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// Merges and checks what every merge must give: text that parses to `edited`.
func merged(_ original: [UInt8], _ edited: JSONValue) throws -> [UInt8] {
    let output = try JSONSourceMerge.merge(original: original, edited: edited)
    #expect(try parse(output) == edited, "the merged text does not parse to the edited value:\n\(text(output))")
    return output
}

func merged(_ original: String, _ edited: JSONValue) throws -> String {
    text(try merged(Array(original.utf8), edited))
}

/// One step of a path into a value.
enum PathStep: CustomStringConvertible {
    case key(String)
    case index(Int)

    var description: String {
        switch self {
        case .key(let key): ".\(key)"
        case .index(let index): "[\(index)]"
        }
    }
}

/// Changes the value at `path` in place (it must exist).
func modify(_ value: inout JSONValue, _ path: some Collection<PathStep>, _ change: (inout JSONValue) -> Void) {
    guard let step = path.first else {
        change(&value)
        return
    }
    switch (value, step) {
    case (.object(var object), .key(let key)):
        guard var child = object[key] else {
            Issue.record("no member \(key)")
            return
        }
        modify(&child, path.dropFirst(), change)
        object[key] = child
        value = .object(object)
    case (.array(var elements), .index(let index)) where elements.indices.contains(index):
        modify(&elements[index], path.dropFirst(), change)
        value = .array(elements)
    default:
        Issue.record("no \(step) in \(value.kindName)")
    }
}

func modified(_ value: JSONValue, _ path: [PathStep], _ change: (inout JSONValue) -> Void) -> JSONValue {
    var copy = value
    modify(&copy, path, change)
    return copy
}

/// The lines of a text (a final newline gives a last empty line).
func lines(_ text: String) -> [String] {
    text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
}

/// A fixed-seed generator (SplitMix64): this module's tests need nothing from the engine.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
