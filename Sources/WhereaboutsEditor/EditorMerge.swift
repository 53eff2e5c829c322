import WhereaboutsJSON
import WhereaboutsMapFile

/// The one place the editor turns the edited document into the file's new text.
///
/// Meant to be `JSONSourceMerge.merge(original:edited:)` (WhereaboutsJSON, issue 46's contract): the parts the
/// user did not touch keep their bytes. Until that lands, this fallback keeps the file byte for byte when nothing
/// changed, and otherwise writes the whole document again with `JSONWriter` (pretty, members in the document's
/// order, so unknown keys survive; only spacing and number spelling such as `2.0` are lost).
enum EditorMerge {
    static func merge(original: [UInt8], edited: JSONValue) throws(JSONParseError) -> [UInt8] {
        let before = try MapDocument.parse(original)
        if before == edited { return original }
        return Array((JSONWriter(pretty: true).string(edited) + "\n").utf8)
    }
}
