import CommandLineSupport
import Glibc
import Testing
import WhereaboutsRuntime

/// The locator's ledger kept in its file: saved when asked, read back at the start, and never a reason to stop.
@Suite("Ledger saver")
struct LedgerSaverTests {
    enum Effect: Hashable, Sendable {
        case save([UInt8])
        case other
    }

    struct Unusable: Error {}

    func scratch() throws -> String {
        var template = Array("/tmp/whereabouts-saver-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
        return try #require(made)
    }

    func saver(_ directory: String?) -> LedgerSaver<Effect> {
        LedgerSaver(
            file: directory.map { BatchLedgerFile(directory: $0, clientID: "locator") },
            logger: Logger(label: "ledger-saver-tests", level: .error)
        ) { effect in
            switch effect {
            case .save(let bytes): .save(bytes)
            case .other: nil
            }
        }
    }

    @Test("the effect that asks for a save writes its bytes; another effect writes nothing")
    func savesWhenAsked() async throws {
        let root = try scratch()
        defer { _ = system("rm -rf '\(root)'") }
        let saver = saver(root + "/state")
        await saver.perform(.other)
        #expect(try saver.file?.read() == nil)
        await saver.perform(.save([1, 2, 3]))
        #expect(try saver.file?.read() == [1, 2, 3])
        #expect(saver.save([4, 5]))
        #expect(try saver.file?.read() == [4, 5])
        #expect(!saver.isFailing)
    }

    @Test("a save that fails is said once and retried; when the directory is usable again the next save works")
    func failsAndRecovers() throws {
        let root = try scratch()
        defer { _ = system("rm -rf '\(root)'") }
        // A regular file where the state directory's parent should be: no save can make the directory.
        let blocker = root + "/blocker"
        #expect(creat(blocker, 0o600) >= 0)
        let saver = saver(blocker + "/state")
        #expect(!saver.save([1]))
        #expect(saver.isFailing)
        #expect(!saver.save([2]))
        #expect(saver.isFailing)
        #expect(unlink(blocker) == 0 && mkdir(blocker, 0o700) == 0)
        #expect(saver.save([3]))
        #expect(!saver.isFailing)
        #expect(try saver.file?.read() == [3])
    }

    @Test("without a state directory nothing is saved or restored")
    func noDirectory() {
        let saver = saver(nil)
        #expect(!saver.save([1]))
        #expect(!saver.isFailing)
        #expect(!saver.restore { _ in 0 })
    }

    @Test("the start takes what the last run saved; none is a first start; an unusable one is moved aside")
    func restores() throws {
        let root = try scratch()
        defer { _ = system("rm -rf '\(root)'") }
        let saver = saver(root + "/state")
        #expect(
            !saver.restore { _ in
                Issue.record("restored a ledger that was never saved")
                return 0
            })
        #expect(saver.save([7, 8]))
        var taken: [UInt8] = []
        #expect(
            saver.restore { bytes in
                taken = bytes
                return 1
            })
        #expect(taken == [7, 8])
        #expect(!saver.restore { _ in throw Unusable() })
        let path = try #require(saver.file?.path)
        #expect(access(path, F_OK) != 0)
        #expect(access(path + ".unreadable", F_OK) == 0)
    }
}
