import Glibc
import Testing

@testable import WhereaboutsHCI

/// How a failed system call on a controller becomes a typed error. Only the failure paths can run without a
/// controller, so they are tested here on the errno values the kernel gives.
@Suite("HCI errors")
struct HCIErrorTests {
    @Test(
        "each errno the kernel gives for a controller becomes the error that names its cause",
        arguments: [
            (EAFNOSUPPORT, HCIError.bluetoothUnsupported),
            (ENODEV, .noSuchController("hci3")),
            (ENETDOWN, .controllerDown("hci3")),
            (EPERM, .permissionDenied(operation: "hci_open_dev on hci3")),
            (EACCES, .permissionDenied(operation: "hci_open_dev on hci3")),
        ])
    func namedErrno(code: Int32, expected: HCIError) {
        #expect(Errno(code: code).hciError("hci_open_dev", controller: "hci3") == expected)
    }

    @Test("any other errno keeps the call, the number and the system's message")
    func otherErrno() {
        let error = Errno(code: EIO).hciError("write", controller: "hci0")
        #expect(error == .systemCall("write", errno: EIO, message: "Input/output error"))
        #expect(error.description == "write failed: Input/output error (errno \(EIO))")
        // An errno the C library has no name for still gives a message, not an empty string.
        #expect(!Errno(code: 9999).message.isEmpty)
    }

    @Test("every error says something different, and names the constant or capability behind it")
    func descriptionsAreDistinct() {
        let errors: [(HCIError, String)] = [
            (.bluetoothUnsupported, "EAFNOSUPPORT"),
            (.noSuchController("hci1"), "ENODEV"),
            (.controllerDown("hci1"), "ENETDOWN"),
            (.permissionDenied(operation: "read on hci1"), "CAP_NET_ADMIN"),
            (.commandFailed(opcode: 0x2006, status: 0x12), "0x2006"),
            (.systemCall("read", errno: EBADF, message: "Bad file descriptor"), "errno \(EBADF)"),
            (.alreadyScanning, "already scanning"),
            (.closed, "closed"),
        ]
        for (error, named) in errors {
            #expect(error.description.contains(named), "\(error)")
        }
        #expect(Set(errors.map(\.0.description)).count == errors.count)
    }

    @Test("a command's status is shown as two hex digits and its opcode as four, zero-padded")
    func commandFailurePadding() {
        #expect(
            HCIError.commandFailed(opcode: 0x000A, status: 0x01).description
                == "the controller refused HCI command 0x000a with status 0x01")
        #expect(
            HCIError.commandFailed(opcode: 0xFFFF, status: 0xFF).description
                == "the controller refused HCI command 0xffff with status 0xff")
    }
}
