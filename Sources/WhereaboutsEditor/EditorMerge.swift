import WhereaboutsJSON

/// The one place the editor turns the edited document into the file's new text: `JSONSourceMerge`, so that every
/// part the user did not touch keeps its bytes (key order, spacing, number spellings such as `2.0`, unknown keys)
/// and what changed follows its neighbours' layout.
enum EditorMerge {
    static func merge(original: [UInt8], edited: JSONValue) throws(JSONSourceMergeError) -> [UInt8] {
        try JSONSourceMerge.merge(original: original, edited: edited)
    }
}
