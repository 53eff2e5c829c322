import Glibc
import Testing
import WhereaboutsHCI

/// This machine's kernel has no Bluetooth, so only the failure path can run here. It must be a clear, typed
/// error rather than a crash; where the kernel does have Bluetooth, the test checks whatever error it gives
/// names the cause.
@Suite("Opening a controller through the kernel's raw HCI socket")
struct RawSocketTransportTests {
    /// Whether the kernel refuses Bluetooth sockets outright, checked without libbluetooth.
    static let kernelLacksBluetooth: Bool = {
        let descriptor = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 1)
        if descriptor >= 0 {
            close(descriptor)
            return false
        }
        return errno == EAFNOSUPPORT
    }()

    @Test("without kernel Bluetooth, opening hci0 fails with 'kernel has no Bluetooth support', not a crash")
    func noKernelBluetooth() throws {
        guard Self.kernelLacksBluetooth else {
            // A machine with Bluetooth: opening may work, or fail for a named reason (no hci0, no capabilities).
            do throws(HCIError) {
                try RawSocketTransport(device: "hci0").close()
            } catch {
                #expect(!error.description.isEmpty)
            }
            return
        }
        #expect(throws: HCIError.bluetoothUnsupported) { try RawSocketTransport(device: "hci0") }
        #expect(throws: HCIError.bluetoothUnsupported) { try RawSocketTransport(device: "hci7") }
        // A name that is not hciN is looked up by address, which needs a Bluetooth socket too.
        #expect(throws: HCIError.bluetoothUnsupported) { try RawSocketTransport(device: "00:11:22:33:44:55") }
        #expect(HCIError.bluetoothUnsupported.description.contains("kernel has no Bluetooth support"))
        #expect(HCIError.bluetoothUnsupported.description.contains("address family not supported"))
    }

    @Test("errors name what is missing")
    func descriptions() {
        #expect(
            HCIError.permissionDenied(operation: "hci_open_dev on hci0").description.contains(
                "CAP_NET_RAW and CAP_NET_ADMIN"))
        #expect(HCIError.noSuchController("hci3").description == "no Bluetooth controller named hci3 (ENODEV)")
        #expect(
            HCIError.commandFailed(opcode: 0x200C, status: 0x0C).description
                == "the controller refused HCI command 0x200c with status 0x0c"
        )
    }
}
