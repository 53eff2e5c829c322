import CommandLineSupport
import Testing
import WhereaboutsSettings

@Suite("settings files are read only when they are regular files")
struct SettingsFileReaderTests {
    @Test("a device given as a settings file is refused at once, naming it")
    func deviceRefused() {
        // /dev/zero never ends: read as a file, it would fill memory (and a FIFO would block for ever).
        guard case .unreadable(let reason) = SettingsFileReader.read("/dev/zero") else {
            Issue.record("/dev/zero was read")
            return
        }
        #expect(reason.contains("/dev/zero") && reason.contains("not a regular file"), "\(reason)")
    }

    @Test("/dev/null stands for an empty settings file, as `--config /dev/null` means")
    func devNullIsEmpty() {
        guard case .text(let text) = SettingsFileReader.read("/dev/null") else {
            Issue.record("/dev/null was not read as empty")
            return
        }
        #expect(text.isEmpty)
    }
}
