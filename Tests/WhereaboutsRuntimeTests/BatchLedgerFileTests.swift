import CommandLineSupport
import Glibc
import Testing
import WhereaboutsRuntime
import WhereaboutsWire

/// The batch ledger's file: one per client id, replaced whole, and nothing in the directory stops a start.
@Suite("Batch ledger file")
struct BatchLedgerFileTests {
    func scratch() throws -> String {
        var template = Array("/tmp/whereabouts-ledger-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
        return try #require(made)
    }

    @Test(
        "every client id names its own file in the directory, and no other",
        arguments: [
            ("whereabouts-locator", "whereabouts-locator.ledger"),
            ("locator/../../etc/passwd", "locator%2F..%2F..%2Fetc%2Fpasswd.ledger"),
            ("..", "%2E..ledger"),
            ("a b%", "a%20b%25.ledger"),
        ])
    func names(clientID: String, name: String) {
        #expect(BatchLedgerFile.fileName(clientID: clientID) == name)
    }

    @Test("a client id too long for a file name is cut and told apart by its checksum")
    func longNames() {
        let one = BatchLedgerFile.fileName(clientID: String(repeating: "x", count: 300) + "1")
        let two = BatchLedgerFile.fileName(clientID: String(repeating: "x", count: 300) + "2")
        #expect(one != two)
        #expect(one.utf8.count < 255 && two.utf8.count < 255)
    }

    @Test("missing at first start; saved and read back whole; the directory made when missing")
    func roundTrip() throws {
        let root = try scratch()
        defer { _ = system("rm -rf '\(root)'") }
        let file = BatchLedgerFile(directory: root + "/state", clientID: "locator-1")
        #expect(file.path == root + "/state/locator-1.ledger")
        #expect(try file.read() == nil, "a ledger where there is none")
        var dedup = BatchDeduplicator()
        _ = dedup.admit(agent: try #require(AgentID("hall-1")), epoch: 5, seq: 0, sent: 1)
        try file.save(BatchLedger.encode(dedup))
        let bytes = try #require(try file.read(), "the saved ledger is gone")
        #expect(bytes == BatchLedger.encode(dedup))
        #expect(access(file.path + ".tmp", F_OK) != 0, "no temporary file left behind")
        #expect(file.moveAside() == file.path + ".unreadable")
        #expect(try file.read() == nil, "moved aside, yet still there")
    }

    @Test("a state directory that cannot be made, or a ledger that is not a file, is an error naming the path")
    func unusable() throws {
        let root = try scratch()
        defer { _ = system("rm -rf '\(root)'") }
        // A regular file where the directory should be: refused even for root, unlike a permission.
        try FileAccess.write(Array("x".utf8), to: root + "/plain")
        let blocked = BatchLedgerFile(directory: root + "/plain/state", clientID: "locator")
        #expect {
            try blocked.prepareDirectory()
        } throws: { error in
            "\(error)".contains(root + "/plain/state")
        }
        #expect(throws: RuntimeError.self) { try blocked.save([1, 2, 3]) }
        let notDirectory = BatchLedgerFile(directory: root + "/plain", clientID: "locator")
        #expect(throws: RuntimeError.self) { try notDirectory.prepareDirectory() }
        // A directory, or a FIFO, at the ledger's path: refused at once, never read (a FIFO would block).
        let odd = BatchLedgerFile(directory: root, clientID: "odd")
        #expect(mkdir(odd.path, 0o700) == 0)
        #expect(throws: RuntimeError.self) { try odd.read() }
        let fifo = BatchLedgerFile(directory: root, clientID: "fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        #expect(throws: RuntimeError.self) { try fifo.read() }
    }
}
