/// Why ``JSONSourceMerge`` could not merge.
public enum JSONSourceMergeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The original document is not JSON (as ``JSONParser`` reads it, with its default limits).
    case originalUnreadable(JSONParseError)
    /// The edited value holds a number JSON cannot carry (NaN or an infinity) at this path (`$.zones[1].name`).
    case nonFiniteNumber(path: String)
    /// The edited value holds an object that names this key twice, at this path.
    case duplicateKey(String, path: String)

    public var description: String {
        switch self {
        case .originalUnreadable(let error): "the original document is not JSON: \(error)"
        case .nonFiniteNumber(let path): "\(path): a number JSON cannot carry (NaN or infinite)"
        case .duplicateKey(let key, let path): "\(path): the key \"\(key)\" appears twice"
        }
    }
}

/// Writes an edited JSON value back over the text it was read from, keeping the text of everything not edited.
///
/// The map editor saves whole documents; people keep their map files under version control, with their own key
/// order, number spellings and members the editor does not know. So every subtree of the edited value that equals
/// the original's at the same place is copied byte for byte (whitespace inside it, `2.0`, `1e3`, string escapes,
/// key order), and so is the whitespace around the top-level value. Object members are matched by key, and written
/// in the edited value's order; array elements are matched so that one inserted or deleted leaves the others
/// matched to themselves (``JSONElementAlignment``). A changed scalar is written as ``JSONWriter`` writes it; a new
/// member or element follows its siblings' layout (its line and indentation, or their one-line spacing), and a new
/// container is laid out like its nearest original counterpart (the value it replaces, the same member of a
/// neighbouring element, a neighbouring element), else pretty-printed at its siblings' indentation. A removed member
/// or element takes its comma and whitespace with it.
///
/// `merge(original: x, edited: parse(x)) == x` for every document `x` the parser accepts.
public enum JSONSourceMerge {
    /// The text of `edited`, reusing `original`'s where it is unchanged. Parsing the result gives `edited`.
    public static func merge(original: [UInt8], edited: JSONValue) throws(JSONSourceMergeError) -> [UInt8] {
        let root: JSONSourceNode
        do throws(JSONParseError) {
            root = JSONSourceNode(value: try JSONParser().parse(original), span: try JSONSourceSpan.scan(original))
        } catch {
            throw .originalUnreadable(error)
        }
        try checkRepresentable(edited, path: "$")
        let text = SourceText(original)
        let document = DocumentStyle(text: text, span: root.span)
        var merger = SourceMerger(writer: JSONSourceWriter(source: text, document: document))
        let range = root.span.range
        let indent = text.lineIndent(at: range.lowerBound)
        let layout: JSONSourceWriter.Layout = root.hasChildren ? merger.writer.layout(of: root) : .pretty
        merger.writer.copy(0..<range.lowerBound)
        merger.merge(root, edited, Placement(indent: indent, layout: layout, prototypes: [root]))
        merger.writer.copy(range.upperBound..<original.count)
        return merger.writer.output
    }

    /// Throws when `value` holds something JSON text cannot say, naming where.
    private static func checkRepresentable(_ value: JSONValue, path: String) throws(JSONSourceMergeError) {
        switch value {
        case .number(let number) where !number.isFinite: throw .nonFiniteNumber(path: path)
        case .array(let elements):
            for (index, element) in elements.enumerated() { try checkRepresentable(element, path: "\(path)[\(index)]") }
        case .object(let object):
            var seen = Set<String>()
            for member in object.members {
                guard seen.insert(member.key).inserted else { throw .duplicateKey(member.key, path: path) }
                try checkRepresentable(member.value, path: memberPath(path, member.key))
            }
        default: break
        }
    }

    /// `$.name` for a key that is a plain name, else `$["the key"]`.
    private static func memberPath(_ path: String, _ key: String) -> String {
        let plain =
            !key.isEmpty
            && key.utf8.allSatisfy { byte in
                byte == UInt8(ascii: "_") || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                    || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                    || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            }
        if plain { return "\(path).\(key)" }
        var quoted = ""
        JSONWriter.appendString(key, to: &quoted)
        return "\(path)[\(quoted)]"
    }
}

/// Where a value is written: what a new container there is laid out like.
struct Placement {
    /// The indentation of the line the value starts on.
    var indent: [UInt8]
    /// The layout of a new container when no prototype shows one.
    var layout: JSONSourceWriter.Layout
    /// Original values a new container here should look like: the original at this place first, if any, then the
    /// same place in neighbouring elements (at most three: an element and its two neighbours).
    var prototypes: [JSONSourceNode]
}

/// Walks the original and the edited value together, copying what is equal and merging or writing what is not.
private struct SourceMerger {
    var writer: JSONSourceWriter

    mutating func merge(_ node: JSONSourceNode, _ edited: JSONValue, _ placement: Placement) {
        if node.value == edited {
            writer.copy(node.span.range)
            return
        }
        switch (node.value, edited) {
        case (.object, .object(let object)) where node.hasChildren && !object.members.isEmpty:
            mergeObject(node, object, placement)
        case (.array, .array(let elements)) where node.hasChildren && !elements.isEmpty:
            mergeArray(node, elements, placement)
        default:
            writer.writeFresh(
                edited, indent: placement.indent, layout: placement.layout, prototypes: placement.prototypes)
        }
    }

    /// Members by key, in `edited`'s order; an original member keeps its key's spelling and the bytes up to its value.
    mutating func mergeObject(_ node: JSONSourceNode, _ edited: JSONObject, _ placement: Placement) {
        guard case .object(let original) = node.value else { return }
        let layout = ContainerLayout(node: node, text: writer.source, document: writer.document)
        let childLayout: JSONSourceWriter.Layout = layout.multiline ? .pretty : .inline(layout.inline)
        var indexByKey: [String: Int] = [:]
        for (index, member) in original.members.enumerated() where indexByKey[member.key] == nil {
            indexByKey[member.key] = index
        }
        writer.append("{".utf8)
        writer.append(layout.leadingGap)
        var previous: Int?
        for (position, member) in edited.members.enumerated() {
            let index = indexByKey[member.key]
            if position > 0 { writer.append(layout.separator(previous: previous, current: index)) }
            let prototypes = placement.prototypes.compactMap { $0.member(member.key) }
            if let index, let child = node.child(index) {
                writer.copy(node.childStart(index)..<child.span.range.lowerBound)
                let indent = writer.source.lineIndent(at: node.childStart(index))
                merge(child, member.value, Placement(indent: indent, layout: childLayout, prototypes: prototypes))
            } else {
                JSONWriter.appendString(member.key.utf8, to: &writer.output)
                writer.append(layout.colon)
                writer.writeFresh(member.value, indent: layout.childIndent, layout: childLayout, prototypes: prototypes)
            }
            previous = index
        }
        writer.append(layout.trailingGap)
        writer.append("}".utf8)
    }

    /// Elements in `edited`'s order, each paired original merged with its edited element.
    mutating func mergeArray(_ node: JSONSourceNode, _ edited: [JSONValue], _ placement: Placement) {
        guard case .array(let original) = node.value else { return }
        let layout = ContainerLayout(node: node, text: writer.source, document: writer.document)
        let childLayout: JSONSourceWriter.Layout = layout.multiline ? .pretty : .inline(layout.inline)
        let origins = JSONElementAlignment.origins(original: original, edited: edited)
        // New elements look like the original before them, else (before every paired one) the first paired one.
        let firstPaired = min(origins.lazy.compactMap { $0 }.first ?? 0, layout.count - 1)
        writer.append("[".utf8)
        writer.append(layout.leadingGap)
        var previous: Int?
        var lastOriginal: Int?
        for (position, element) in edited.enumerated() {
            let index = origins[position]
            if position > 0 { writer.append(layout.separator(previous: previous, current: index)) }
            if let index, let child = node.child(index) {
                let indent = writer.source.lineIndent(at: node.childStart(index))
                let prototypes = neighbours(of: index, count: layout.count).compactMap { node.child($0) }
                merge(child, element, Placement(indent: indent, layout: childLayout, prototypes: prototypes))
                lastOriginal = index
            } else {
                let near = lastOriginal ?? firstPaired
                let prototypes = neighbours(of: near, count: layout.count).compactMap { node.child($0) }
                writer.writeFresh(element, indent: layout.childIndent, layout: childLayout, prototypes: prototypes)
            }
            previous = index
        }
        writer.append(layout.trailingGap)
        writer.append("]".utf8)
    }

    /// `index` and the indices beside it, nearest first, within `0..<count`.
    private func neighbours(of index: Int, count: Int) -> [Int] {
        [index, index - 1, index + 1].filter { $0 >= 0 && $0 < count }
    }
}
