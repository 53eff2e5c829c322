import CommandLineSupport
import Foundation
import Testing

@Suite("File access")
struct FileAccessTests {
    /// The file's inode and modification time: a write replaces the file (a new inode) and dates it.
    func identity(_ path: String) throws -> (inode: Int, modified: Date) {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let inode = try #require(attributes[.systemFileNumber] as? Int)
        return (inode, try #require(attributes[.modificationDate] as? Date))
    }

    @Test("a state file that already holds the same bytes is not rewritten; other bytes, or no file, are written")
    func writeIfChanged() throws {
        let path = try scratchFile("web-state.json")
        #expect(try FileAccess.writeIfChanged(Array("one".utf8), to: path), "no file yet")
        // Dated far back, so that a rewrite shows even within the clock's resolution.
        let old = Date(timeIntervalSince1970: 0)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path)
        let before = try identity(path)

        let wrote = try FileAccess.writeIfChanged(Array("one".utf8), to: path)
        let after = try identity(path)
        #expect(!wrote)
        #expect(after.inode == before.inode && after.modified == old, "the file was rewritten with the same bytes")
        #expect(try contents(path) == "one")

        #expect(try FileAccess.writeIfChanged(Array("one!".utf8), to: path), "longer")
        #expect(try contents(path) == "one!")
        #expect(try FileAccess.writeIfChanged(Array("one".utf8), to: path), "a prefix of what it holds")
        #expect(try contents(path) == "one")
        #expect(try FileAccess.writeIfChanged(Array("two".utf8), to: path), "the same length")
        #expect(try contents(path) == "two")
        try FileManager.default.removeItem(atPath: path)
        #expect(try FileAccess.writeIfChanged(Array("two".utf8), to: path), "removed meanwhile")
        #expect(try contents(path) == "two")
    }
}
