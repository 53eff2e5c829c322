/// How a one-line container is written: the bytes between its children and between a key and its value, and the
/// padding inside its brackets (`[1, 2]` has ", " and no padding; `{ "a": 1 }` has ": " and " " inside its braces).
///
/// Every piece is whitespace around at most the one comma or colon it stands for, so any of them makes valid JSON.
/// Padding is kept per kind of container: a style that pads braces need not pad brackets.
struct InlineStyle: Sendable {
    var comma: [UInt8] = [UInt8(ascii: ",")]
    var colon: [UInt8] = [UInt8(ascii: ":")]
    /// After `{` and before `}`.
    var objectPadding: (open: [UInt8], close: [UInt8]) = ([], [])
    /// After `[` and before `]`.
    var arrayPadding: (open: [UInt8], close: [UInt8]) = ([], [])
}

/// The conventions of a whole document, for text written where nothing nearby shows how.
struct DocumentStyle: Sendable {
    /// The line break ("\r\n" when the document uses it).
    var newline: [UInt8] = [0x0A]
    /// One level of indentation in multi-line containers.
    var indentUnit: [UInt8] = [0x20, 0x20]
    /// Between a key and its value in multi-line objects.
    var colon: [UInt8] = Array(": ".utf8)
    /// One-line containers.
    var inline = InlineStyle()

    /// The style `text` (whose value's spans are `span`) is written in; ``JSONWriter``'s where it shows none.
    init(text: SourceText, span: JSONSourceSpan) {
        let bytes = text.bytes
        if zip(bytes, bytes.dropFirst()).contains(where: { $0 == 0x0D && $1 == 0x0A }) { newline = [0x0D, 0x0A] }
        var found = Found()
        visit(span, text, &found)
        // A document whose one-line containers have one child each shows no comma; it follows the colon's spacing.
        if !found.comma, found.inlineColon, inline.colon.last == 0x20 { inline.comma = Array(", ".utf8) }
    }

    /// Which of the conventions a walk has seen an example of.
    private struct Found {
        var indent = false
        var colon = false
        var comma = false
        var inlineColon = false
        var all: Bool { indent && colon && comma && inlineColon }
    }

    /// Takes the first example of each convention, depth first in document order.
    private mutating func visit(_ span: JSONSourceSpan, _ text: SourceText, _ found: inout Found) {
        guard let first = span.children.first, !found.all else { return }
        let bytes = text.bytes
        let firstStart = span.keys.first?.lowerBound ?? first.range.lowerBound
        let multiline = text.breaksLine(span.range.lowerBound..<firstStart)
        if multiline, !found.indent {
            let outer = text.lineIndent(at: span.range.lowerBound)
            let inner = text.lineIndent(at: firstStart)
            if inner.count > outer.count, inner.starts(with: outer) { indentUnit = Array(inner.dropFirst(outer.count)) }
            found.indent = true
        }
        if let key = span.keys.first {
            let gap = Array(bytes[key.upperBound..<first.range.lowerBound])
            if multiline, !found.colon {
                colon = gap
                found.colon = true
            } else if !multiline, !found.inlineColon, !gap.contains(0x0A) {
                inline.colon = gap
                found.inlineColon = true
            }
        }
        if !multiline, !found.comma, span.children.count > 1 {
            let secondStart = span.keys.count > 1 ? span.keys[1].lowerBound : span.children[1].range.lowerBound
            let gap = Array(bytes[first.range.upperBound..<secondStart])
            if !gap.contains(0x0A) {
                inline.comma = gap
                found.comma = true
            }
        }
        for child in span.children { visit(child, text, &found) }
    }
}

/// The original text, with where its lines start: a line's indentation is found without walking back along the line
/// (a one-line document is one long line, and a merge asks about many places in it).
struct SourceText: Sendable {
    let bytes: [UInt8]
    /// The offset of each line's first byte, in order.
    private let lineStarts: [Int]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        var starts = [0]
        for (offset, byte) in bytes.enumerated() where byte == 0x0A { starts.append(offset + 1) }
        lineStarts = starts
    }

    /// Where the line holding `offset` starts (a line break belongs to the line it ends).
    func lineStart(of offset: Int) -> Int {
        var low = 0
        var high = lineStarts.count
        // The last start at or before `offset`: lineStarts[0] is 0, so there is one.
        while high - low > 1 {
            let middle = (low + high) / 2
            if lineStarts[middle] <= offset { low = middle } else { high = middle }
        }
        return lineStarts[low]
    }

    /// Whether a line break falls in `range`.
    func breaksLine(_ range: Range<Int>) -> Bool { lineStart(of: range.upperBound) > range.lowerBound }

    /// The spaces and tabs that begin the line `offset` is on (up to `offset`).
    func lineIndent(at offset: Int) -> [UInt8] {
        let start = lineStart(of: offset)
        var end = start
        while end < min(offset, bytes.count), bytes[end] == 0x20 || bytes[end] == 0x09 { end += 1 }
        return Array(bytes[start..<end])
    }
}

/// The layout of one original container with children, as ``JSONSourceMerge`` reuses it for the container's new text.
struct ContainerLayout {
    let node: JSONSourceNode
    let bytes: [UInt8]
    let count: Int
    /// Whether the children stand on lines of their own.
    let multiline: Bool
    /// The indentation of the children's lines (of the last child's, which is the most likely to be on its own).
    let childIndent: [UInt8]
    /// The container's own one-line style (the document's where the container shows none).
    let inline: InlineStyle
    /// Between a key and its value (objects).
    let colon: [UInt8]
    private let newline: [UInt8]

    /// The layout of `node`, which must have children (``JSONSourceNode/hasChildren``).
    init(node: JSONSourceNode, text: SourceText, document: DocumentStyle) {
        let bytes = text.bytes
        self.node = node
        self.bytes = bytes
        count = node.childCount ?? 0
        let leading = bytes[(node.span.range.lowerBound + 1)..<node.childStart(0)]
        let firstSeparator = count > 1 ? bytes[node.childEnd(0)..<node.childStart(1)] : []
        multiline = leading.contains(0x0A) || firstSeparator.contains(0x0A)
        childIndent = text.lineIndent(at: node.childStart(count - 1))
        newline = document.newline
        var inline = document.inline
        let isObject: Bool
        if case .object = node.value { isObject = true } else { isObject = false }
        if isObject {
            inline.colon = Array(bytes[node.span.keys[0].upperBound..<node.span.children[0].range.lowerBound])
        }
        colon = inline.colon
        if !multiline {
            let padding = (Array(leading), Array(bytes[node.childEnd(count - 1)..<(node.span.range.upperBound - 1)]))
            if isObject { inline.objectPadding = padding } else { inline.arrayPadding = padding }
            if count > 1 { inline.comma = Array(firstSeparator) }
        }
        self.inline = inline
    }

    /// From after the opening bracket to the first child.
    var leadingGap: ArraySlice<UInt8> { bytes[(node.span.range.lowerBound + 1)..<node.childStart(0)] }

    /// From after the last child to the closing bracket, both brackets excluded.
    var trailingGap: ArraySlice<UInt8> { bytes[node.childEnd(count - 1)..<(node.span.range.upperBound - 1)] }

    /// The comma and whitespace before original child `index` (which must be above 0).
    func separator(before index: Int) -> ArraySlice<UInt8> { bytes[node.childEnd(index - 1)..<node.childStart(index)] }

    /// The separator for a child with no original neighbour to copy: the last one the container has, else one made
    /// from its layout.
    var typicalSeparator: ArraySlice<UInt8> {
        if count > 1 { return separator(before: count - 1) }
        if multiline { return ArraySlice([UInt8(ascii: ",")] + newline + childIndent) }
        return ArraySlice(inline.comma)
    }

    /// The separator between output children whose original indices (nil for new ones) are `previous` and `current`.
    ///
    /// An original child keeps the separator it had before it, so a child deleted before it takes its own away; a new
    /// child after an original one takes the separator that followed that one, else the typical one.
    func separator(previous: Int?, current: Int?) -> ArraySlice<UInt8> {
        if let current, current > 0 { return separator(before: current) }
        if let previous, previous + 1 < count { return separator(before: previous + 1) }
        return typicalSeparator
    }
}
