/// The output of a merge: original bytes copied, and new values written in the style of the text around them.
struct JSONSourceWriter {
    /// How a new container is laid out when no original value shows how.
    enum Layout {
        /// Children on lines of their own, indented one level deeper than the container's line.
        case pretty
        /// All on one line.
        case inline(InlineStyle)
    }

    let source: SourceText
    let document: DocumentStyle
    var output: [UInt8] = []

    init(source: SourceText, document: DocumentStyle) {
        self.source = source
        self.document = document
        output.reserveCapacity(source.bytes.count + 256)
    }

    /// Copies original bytes.
    mutating func copy(_ range: Range<Int>) { output.append(contentsOf: source.bytes[range]) }

    mutating func append(_ bytes: some Sequence<UInt8>) { output.append(contentsOf: bytes) }

    /// Writes `value` as new text on a line indented by `indent`.
    ///
    /// A container is laid out like the first of `prototypes` that is a container of its kind with children (one
    /// line if that one is on one line, else one child per line), or by `layout` when none is; its children take
    /// the prototypes' children at the same key (or index, the last for an index beyond them) as theirs. Numbers are
    /// written as ``JSONWriter`` writes them.
    mutating func writeFresh(_ value: JSONValue, indent: [UInt8], layout: Layout, prototypes: [JSONSourceNode]) {
        switch value {
        case .null: JSONWriter.append("null", to: &output)
        case .bool(let flag): JSONWriter.append(flag ? "true" : "false", to: &output)
        case .number(let number): JSONWriter.appendNumber(number, to: &output)
        case .string(let text): JSONWriter.appendString(text.utf8, to: &output)
        case .array(let elements):
            let shapes = prototypes.filter { $0.hasChildren && $0.isContainer(like: value) }
            let layout = shapes.first.map { self.layout(of: $0) } ?? layout
            writeChildren(count: elements.count, open: "[", close: "]", indent: indent, layout: layout) {
                writer, index, indent, layout in
                let children = shapes.compactMap { $0.child(min(index, ($0.childCount ?? 1) - 1)) }
                writer.writeFresh(elements[index], indent: indent, layout: layout, prototypes: children)
            }
        case .object(let object):
            let shapes = prototypes.filter { $0.hasChildren && $0.isContainer(like: value) }
            let layout = shapes.first.map { self.layout(of: $0) } ?? layout
            let colon = colon(in: layout, shape: shapes.first)
            writeChildren(count: object.members.count, open: "{", close: "}", indent: indent, layout: layout) {
                writer, index, indent, layout in
                let member = object.members[index]
                JSONWriter.appendString(member.key.utf8, to: &writer.output)
                writer.append(colon)
                let children = shapes.compactMap { $0.member(member.key) }
                writer.writeFresh(member.value, indent: indent, layout: layout, prototypes: children)
            }
        }
    }

    /// Writes a container's brackets and separators in `layout`, and its children with `writeChild`.
    private mutating func writeChildren(
        count: Int, open: Unicode.Scalar, close: Unicode.Scalar, indent: [UInt8], layout: Layout,
        _ writeChild: (inout JSONSourceWriter, Int, [UInt8], Layout) -> Void
    ) {
        output.append(UInt8(ascii: open))
        defer { output.append(UInt8(ascii: close)) }
        guard count > 0 else { return }
        switch layout {
        case .pretty:
            let inner = indent + document.indentUnit
            for index in 0..<count {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                append(document.newline)
                append(inner)
                writeChild(&self, index, inner, layout)
            }
            append(document.newline)
            append(indent)
        case .inline(let style):
            let padding = open == "{" ? style.objectPadding : style.arrayPadding
            append(padding.open)
            for index in 0..<count {
                if index > 0 { append(style.comma) }
                writeChild(&self, index, indent, layout)
            }
            append(padding.close)
        }
    }

    /// The layout an original container with children shows: one line when it is on one line.
    func layout(of node: JSONSourceNode) -> Layout {
        guard !source.breaksLine(node.span.range) else { return .pretty }
        return .inline(ContainerLayout(node: node, text: source, document: document).inline)
    }

    /// Between a key and its value in a new object: its prototype's, else the document's for the layout.
    private func colon(in layout: Layout, shape: JSONSourceNode?) -> [UInt8] {
        if let shape { return ContainerLayout(node: shape, text: source, document: document).colon }
        switch layout {
        case .pretty: return document.colon
        case .inline(let style): return style.colon
        }
    }
}
