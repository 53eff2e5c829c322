/// How a test wants its throwaway broker configured.
///
/// The defaults give a plain, anonymous, non-persistent listener on 127.0.0.1, which is what most
/// tests need. Every field maps to one or two lines of `mosquitto.conf(5)`.
public struct BrokerOptions: Sendable {
    /// Whether clients without a username may connect (`allow_anonymous`).
    public var allowAnonymous: Bool = true

    /// Accounts written to a `password_file` with `mosquitto_passwd -b`, username to password.
    ///
    /// Empty means no password file at all.
    public var accounts: [String: String] = [:]

    /// Lines of an `acl_file`, for example `["topic read #", "topic write allowed/#"]`; `nil` means no ACL.
    public var aclRules: [String]? = nil

    /// Whether the broker keeps sessions and queued messages on disk across a restart.
    ///
    /// When on, the fixture also sets `autosave_on_changes true` and `autosave_interval 1`, so a SIGKILL
    /// loses at most one change (reliability.md §1.1: with the default of 1800 s it loses everything).
    public var persistence: Bool = false

    /// Whether the listener speaks TLS with certificates the fixture makes (see ``TestCertificates``).
    public var tls: Bool = false

    /// With ``tls``: whether clients must present a certificate signed by the fixture's CA.
    public var requireClientCertificate: Bool = false

    /// `max_packet_size`, in bytes; `nil` keeps mosquitto's default (no limit below the protocol's).
    public var maxPacketSize: Int? = nil

    /// Raw configuration lines, appended after the listener block (so listener options apply to it).
    public var extraConfiguration: [String] = []

    /// Options for an anonymous, plain, non-persistent broker.
    public init() {}

    /// Adds a bridge (`mosquitto.conf(5)`, "Configuring Bridges") that forwards the messages on `topics` from this
    /// broker to another on loopback, at QoS 1, as an edge broker forwards its agents' readings to a central or
    /// cloud broker (deploy/mosquitto/whereabouts-bridge.conf is the production sample). Only those topics cross,
    /// in one direction: nothing published on the other broker comes back.
    public mutating func bridge(name: String, toPort port: Int, topics: [String]) {
        extraConfiguration += [
            "connection \(name)",
            "address 127.0.0.1:\(port)",
            "clientid \(name)",
            // A persistent session on the other broker, so that readings queued while the link is down are kept.
            "cleansession false",
            "restart_timeout 1 5",
            "notifications false",
        ]
        extraConfiguration += topics.map { "topic \($0) out 1" }
    }
}
