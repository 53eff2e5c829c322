import Testing
import WhereaboutsHCI

/// The user channel can only fail here (no Bluetooth in this kernel); the failure must be typed and say what to do.
@Suite("Opening a controller's exclusive user channel")
struct UserChannelTransportTests {
    @Test("without kernel Bluetooth, opening the user channel fails with 'kernel has no Bluetooth support'")
    func noKernelBluetooth() {
        guard RawSocketTransportTests.kernelLacksBluetooth else {
            do throws(HCIError) {
                try UserChannelTransport(device: "hci0").close()
            } catch {
                #expect(!error.description.isEmpty)
            }
            return
        }
        #expect(throws: HCIError.bluetoothUnsupported) { try UserChannelTransport(device: "hci0") }
    }

    @Test("a controller in use says to stop bluetoothd and power the adapter off")
    func busyNamesTheWayOut() {
        let text = HCIError.controllerBusy("hci0").description
        #expect(text.contains("stop bluetoothd"))
        #expect(text.contains("btmgmt --index 0 power off"))
    }
}
