public import CommandLineSupport
import WhereaboutsWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The file behind a ``BatchLedger``: which batches a locator took, kept in its state directory so that the next run
/// with the same client id (the same persistent session) drops a batch the broker delivers again.
///
/// One file per client id (``fileName(clientID:)``), so that two locators sharing a directory keep apart. The file is
/// replaced whole, atomically (a temporary file, synced, renamed over it, the directory synced): a crash or a power
/// cut leaves the old ledger or the new one. Reading refuses anything but a regular file no larger than
/// ``BatchLedger/maximumSize(maximumAgents:)``, before reading it.
///
/// Beside it, `PATH.journal` lists the batches taken since the ledger was last saved, a line each, appended as they
/// are taken and removed at each save (``BatchLedger/journalLines(_:)``): a `kill -9` between two saves then loses
/// nothing the ledger knew. Appended without a sync: a crash of the process keeps what was written, and a power cut
/// loses at most the lines since the last save, as the ledger alone did.
public struct BatchLedgerFile: Sendable {
    /// The state directory.
    public let directory: String
    /// The ledger's path in it.
    public let path: String
    /// The journal's path: the ledger's, then `.journal`.
    public var journalPath: String { path + ".journal" }
    /// The largest journal read back, bytes (some 600,000 batches): a larger one is left out, and said.
    public static let journalLimit = 32 << 20

    /// The ledger of the locator with `clientID` in `directory`.
    public init(directory: String, clientID: String) {
        self.directory = directory
        path = (directory.hasSuffix("/") ? directory : directory + "/") + Self.fileName(clientID: clientID)
    }

    /// `CLIENT-ID.ledger`, with every byte of the id outside `A-Z a-z 0-9 . _ -` written `%XX` (and a leading dot
    /// too), so that any client id names one file in the directory and no other; an id too long for a file name is
    /// cut and told apart by the CRC-32 of the whole id.
    public static func fileName(clientID: String) -> String {
        var name = ""
        for byte in clientID.utf8 {
            let safe =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x5F || byte == 0x2D || (byte == 0x2E && !name.isEmpty)
            if safe {
                name.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                name += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        // NAME_MAX is 255 bytes: keep room for the checksum and the extension.
        if name.utf8.count > 200 {
            var crc = CRC32()
            crc.update(clientID.utf8)
            name = String(name.prefix(180)) + "~" + String(crc.value, radix: 16).leftPadded(to: 8)
        }
        return name + ".ledger"
    }

    /// Reads the ledger's bytes; nil when there is none (a first start).
    ///
    /// - Throws: ``RuntimeError`` naming the path and the reason when the file exists but cannot be read, is not a
    ///   regular file, or is larger than any ledger.
    public func read(maximumAgents: Int = 1024) throws(RuntimeError) -> [UInt8]? {
        try FileAccess.readStateFile(path, limit: BatchLedger.maximumSize(maximumAgents: maximumAgents))
    }

    /// Reads the journal's bytes; nil when there is none.
    ///
    /// - Throws: ``RuntimeError`` naming the path and the reason when it exists but cannot be read, is not a regular
    ///   file, or is larger than ``journalLimit``.
    public func readJournal() throws(RuntimeError) -> [UInt8]? {
        try FileAccess.readStateFile(journalPath, limit: Self.journalLimit)
    }

    /// Appends journal lines (made if missing, mode 0600).
    ///
    /// - Throws: ``RuntimeError`` naming the path and the reason.
    public func appendJournal(_ bytes: [UInt8]) throws(RuntimeError) {
        let file = open(journalPath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw RuntimeError("cannot open \(journalPath): \(FileAccess.systemMessage())") }
        defer { close(file) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                write(file, $0.baseAddress.map { $0 + offset }, bytes.count - offset)
            }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else {
                throw RuntimeError("cannot write \(journalPath): \(FileAccess.systemMessage())")
            }
            offset += written
        }
    }

    /// Removes the journal: the ledger just saved holds what it listed.
    public func clearJournal() {
        unlink(journalPath)
    }

    /// Moves an unreadable ledger aside to `PATH.unreadable` (for a post-mortem; the next save begins a new one);
    /// returns the new path, or nil when it could not be moved.
    public func moveAside() -> String? {
        let aside = path + ".unreadable"
        return rename(path, aside) == 0 ? aside : nil
    }

    /// Checks that the state directory exists (making it, mode 0700, when it does not) and that the locator may
    /// write in it.
    ///
    /// - Throws: ``RuntimeError`` naming the directory and the reason.
    public func prepareDirectory() throws(RuntimeError) {
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw RuntimeError("cannot create the state directory \(directory): \(FileAccess.systemMessage())")
        }
        var status = stat()
        guard stat(directory, &status) == 0 else {
            throw RuntimeError("cannot use the state directory \(directory): \(FileAccess.systemMessage())")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw RuntimeError("the state directory \(directory) is not a directory")
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw RuntimeError("cannot write in the state directory \(directory): \(FileAccess.systemMessage())")
        }
    }

    /// Replaces the ledger with `bytes`, durably (see the type's overview); makes the directory first if it is
    /// missing.
    ///
    /// - Throws: ``RuntimeError`` naming the path and the reason (no permission, a full disk).
    public func save(_ bytes: [UInt8]) throws(RuntimeError) {
        if access(directory, F_OK) != 0 { try prepareDirectory() }
        try FileAccess.write(bytes, to: path, durable: true)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
