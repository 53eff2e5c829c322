import Testing
import WhereaboutsHCI

@testable import WhereaboutsRadio

@Suite("Which of the capabilities raw HCI needs this process has")
struct NetworkCapabilitiesTests {
    /// Lines of a real /proc/self/status (root on this machine: every capability).
    static func status(effective: String) -> String {
        """
        Name:\twhereabouts-age
        Umask:\t0022
        State:\tR (running)
        CapInh:\t0000000000000000
        CapPrm:\t000001ffffffffff
        CapEff:\t\(effective)
        CapBnd:\t000001ffffffffff
        CapAmb:\t0000000000000000
        NoNewPrivs:\t0
        """
    }

    @Test(
        "CAP_NET_RAW is bit 13 and CAP_NET_ADMIN bit 12 of the effective set; the message names the one missing",
        arguments: [
            ("000001ffffffffff", true, true, "has CAP_NET_RAW and CAP_NET_ADMIN, so something else refuses"),
            ("0000000000000000", false, false, "has neither CAP_NET_RAW nor CAP_NET_ADMIN"),
            ("0000000000001000", false, true, "lacks CAP_NET_RAW (it has CAP_NET_ADMIN)"),
            ("0000000000002000", true, false, "lacks CAP_NET_ADMIN (it has CAP_NET_RAW)"),
        ])
    func parse(effective: String, raw: Bool, admin: Bool, message: String) throws {
        let capabilities = try #require(NetworkCapabilities(status: Self.status(effective: effective)))
        #expect(capabilities == NetworkCapabilities(raw: raw, admin: admin))
        #expect(capabilities.explanation.contains(message), "\(capabilities.explanation)")
    }

    @Test("no CapEff line, or one that is not hex, gives nothing")
    func malformed() {
        #expect(NetworkCapabilities(status: "Name:\tx\n") == nil)
        #expect(NetworkCapabilities(status: "CapEff:\tzz\n") == nil)
        #expect(NetworkCapabilities.current() != nil, "Linux has /proc/self/status")
    }

    @Test("a refused permission names the controller and the capabilities; other errors are as before")
    func openFailure() {
        let refused = ControllerOpener.openFailure("hci0", .permissionDenied(operation: "write on hci0"))
        #expect(refused.hasPrefix("cannot open Bluetooth controller hci0: not permitted to write on hci0"))
        #expect(refused.contains("; this process "), "\(refused)")
        #expect(
            ControllerOpener.openFailure("hci9", .noSuchController("hci9"))
                == "cannot open Bluetooth controller hci9: no Bluetooth controller named hci9 (ENODEV)")
    }
}
