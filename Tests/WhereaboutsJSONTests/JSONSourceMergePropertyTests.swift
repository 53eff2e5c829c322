import Testing

@testable import WhereaboutsJSON

@Suite("JSONSourceMerge: seeded random edits of the real maps")
struct JSONSourceMergePropertyTests {
    /// The demo office and the Kolakowski flat as they are (pretty-printed), and the demo office on one line.
    static func documents() throws -> [[UInt8]] {
        let demo = try repositoryFile("maps/demo-office.json")
        let compact = Array(JSONWriter().string(try parse(demo)).utf8)
        return [demo, try repositoryFile("maps/kolakowski-flat.json"), compact]
    }

    @Test("one random change, insertion, deletion or swap keeps all text outside its container and its other children")
    func singleEdits() throws {
        var random = SeededGenerator(state: 46)
        let documents = try Self.documents()
        for iteration in 0..<240 {
            let original = documents[iteration % documents.count]
            let root = JSONSourceNode(value: try parse(original), span: try JSONSourceSpan.scan(original))
            let paths = containerPaths(root.value, [])
            let path = paths[Int.random(in: 0..<paths.count, using: &random)]
            let container = try #require(node(root, at: path))
            let edit = RandomEdit.make(container.value, root: root.value, using: &random)
            let edited = modified(root.value, path) { $0 = edit.value }
            let output = try merged(original, edited)
            let context = "iteration \(iteration), \(edit.name) at $\(path.map(\.description).joined())"
            // Everything outside the edited container is as it was.
            let range = container.span.range
            #expect(output.prefix(range.lowerBound) == original.prefix(range.lowerBound), "\(context)")
            #expect(output.suffix(original.count - range.upperBound) == original.suffix(from: range.upperBound))
            // So is every child of it that the edit did not touch, and its key.
            let outputRoot = JSONSourceNode(value: try parse(output), span: try JSONSourceSpan.scan(output))
            let outputContainer = try #require(node(outputRoot, at: path))
            for (before, after) in edit.kept {
                let span = try #require(outputContainer.child(after)).span.range
                let originals = (0..<(container.childCount ?? 0)).filter {
                    container.child($0)?.value == container.child(before)?.value
                }
                // Equal neighbours may swap places in the matching; any of their texts will do.
                let texts = originals.compactMap { container.child($0).map { original[$0.span.range] } }
                #expect(texts.contains(output[span]), "\(context): child \(before) became \(text(Array(output[span])))")
                if case .object = container.value {
                    #expect(output[outputContainer.span.keys[after]] == original[container.span.keys[before]])
                }
            }
        }
    }

    @Test("chains of random edits, each merged over the last save, parse to the edits and merge to themselves")
    func chainedEdits() throws {
        var random = SeededGenerator(state: 0x46_4A53)
        for (documentIndex, document) in try Self.documents().enumerated() {
            var current = document
            var value = try parse(document)
            for iteration in 0..<60 {
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let paths = containerPaths(value, [])
                    let path = paths[Int.random(in: 0..<paths.count, using: &random)]
                    value = modified(value, path) { container in
                        container = RandomEdit.make(container, root: value, using: &random).value
                    }
                }
                let output = try merged(current, value)
                let again = try JSONSourceMerge.merge(original: output, edited: value)
                #expect(again == output, "document \(documentIndex), iteration \(iteration): a save is not stable")
                current = output
            }
        }
    }
}

/// The paths of every array and object in `value`, itself first.
func containerPaths(_ value: JSONValue, _ path: [PathStep]) -> [[PathStep]] {
    switch value {
    case .array(let elements):
        return [path] + elements.enumerated().flatMap { containerPaths($1, path + [.index($0)]) }
    case .object(let object):
        return [path] + object.members.flatMap { containerPaths($0.value, path + [.key($0.key)]) }
    default:
        return []
    }
}

/// The original node at `path`.
func node(_ root: JSONSourceNode, at path: [PathStep]) -> JSONSourceNode? {
    var node: JSONSourceNode? = root
    for step in path {
        switch step {
        case .key(let key): node = node?.member(key)
        case .index(let index): node = node?.child(index)
        }
    }
    return node
}

/// The value at `path`, if there is one.
func value(in root: JSONValue, at path: [PathStep]) -> JSONValue? {
    var value: JSONValue? = root
    for step in path {
        switch step {
        case .key(let key): value = value?.object?[key]
        case .index(let index): value = value?.array.flatMap { $0.indices.contains(index) ? $0[index] : nil }
        }
    }
    return value
}

/// One random edit of a container's children, and which children it leaves untouched.
struct RandomEdit {
    var name: String
    /// The container after the edit.
    var value: JSONValue
    /// (index before, index after) of each child the edit did not touch.
    var kept: [(Int, Int)]

    static func make(_ container: JSONValue, root: JSONValue, using random: inout SeededGenerator) -> RandomEdit {
        switch container {
        case .array(let elements): array(elements, root: root, using: &random)
        case .object(let object): self.object(object, root: root, using: &random)
        default: RandomEdit(name: "nothing", value: container, kept: [])
        }
    }

    static func array(_ elements: [JSONValue], root: JSONValue, using random: inout SeededGenerator) -> RandomEdit {
        var elements = elements
        let count = elements.count
        let new = randomValue(near: elements.randomElement(using: &random), root: root, using: &random)
        let operation = count == 0 ? 1 : Int.random(in: 0..<3, using: &random)
        switch operation {
        case 0:
            let index = Int.random(in: 0..<count, using: &random)
            elements[index] = new
            return RandomEdit(
                name: "change", value: .array(elements), kept: (0..<count).filter { $0 != index }.map { ($0, $0) })
        case 1:
            let index = Int.random(in: 0...count, using: &random)
            elements.insert(new, at: index)
            return RandomEdit(
                name: "insert", value: .array(elements), kept: (0..<count).map { ($0, $0 < index ? $0 : $0 + 1) })
        default:
            let index = Int.random(in: 0..<count, using: &random)
            elements.remove(at: index)
            let kept = (0..<count).filter { $0 != index }.map { ($0, $0 < index ? $0 : $0 - 1) }
            return RandomEdit(name: "delete", value: .array(elements), kept: kept)
        }
    }

    static func object(_ object: JSONObject, root: JSONValue, using random: inout SeededGenerator) -> RandomEdit {
        var members = object.members
        let count = members.count
        let operation = count == 0 ? 1 : Int.random(in: 0..<4, using: &random)
        let name: String
        switch operation {
        case 0:
            let index = Int.random(in: 0..<count, using: &random)
            members[index].value = randomValue(near: members[index].value, root: root, using: &random)
            name = "change"
        case 1:
            let value = randomValue(near: members.randomElement(using: &random)?.value, root: root, using: &random)
            var key = "x_new"
            while members.contains(where: { $0.key == key }) { key += "_" }
            members.insert((key, value), at: Int.random(in: 0...count, using: &random))
            name = "insert"
        case 2:
            members.remove(at: Int.random(in: 0..<count, using: &random))
            name = "delete"
        default:
            members.swapAt(Int.random(in: 0..<count, using: &random), Int.random(in: 0..<count, using: &random))
            name = "swap"
        }
        // Members are matched by key: every member whose value the edit left alone is kept.
        let kept = object.members.indices.compactMap { before -> (Int, Int)? in
            guard let after = members.firstIndex(where: { $0.key == object.members[before].key }),
                members[after].value == object.members[before].value
            else { return nil }
            return (before, after)
        }
        return RandomEdit(name: name, value: .object(JSONObject(members)), kept: kept)
    }

    /// A scalar, a small structure, a copy of some part of the document, or `sample` with one number changed.
    static func randomValue(near sample: JSONValue?, root: JSONValue, using random: inout SeededGenerator) -> JSONValue
    {
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return .number(Double(Int.random(in: -50_000...50_000, using: &random)) / 100)
        case 1: return .number(Double(Int.random(in: -10...100, using: &random)))
        case 2:
            let pieces = ["Room ", "\"", "\\", "\n", "é", "🗝️", "\u{01}", "/", "x"]
            return .string(
                (0..<Int.random(in: 0...5, using: &random)).map { _ in pieces.randomElement(using: &random) ?? "" }
                    .joined())
        case 3: return [.bool(Bool.random(using: &random)), nil, [1.5, [:]]]
        case 4:
            let paths = containerPaths(root, [])
            return WhereaboutsJSONTests.value(in: root, at: paths[Int.random(in: 0..<paths.count, using: &random)])
                ?? nil
        default:
            guard var value = sample else { return .bool(Bool.random(using: &random)) }
            perturb(&value, using: &random)
            return value
        }
    }

    /// Changes the first number found depth first (or the value itself, when it has none).
    static func perturb(_ value: inout JSONValue, using random: inout SeededGenerator) {
        switch value {
        case .number(let number): value = .number(number + Double(Int.random(in: 1...99, using: &random)) / 10)
        case .array(var elements) where !elements.isEmpty:
            perturb(&elements[Int.random(in: 0..<elements.count, using: &random)], using: &random)
            value = .array(elements)
        case .object(var object) where !object.members.isEmpty:
            perturb(&object.members[Int.random(in: 0..<object.members.count, using: &random)].value, using: &random)
            value = .object(object)
        default: value = .string("changed")
        }
    }
}
