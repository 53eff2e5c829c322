/// How to reach and log in to the broker, read the same way by every executable: flags first, then the
/// `WHEREABOUTS_*` environment variables. The password never comes from a flag, only from a file or the
/// environment, so that it does not show in `ps`.
public struct BrokerSettings: Sendable {
    /// The broker's address.
    public var address: BrokerAddress
    /// The account, if any.
    public var username: String?
    /// The password, from `--password-file` or `WHEREABOUTS_PASSWORD`.
    public var password: String?
    /// CA certificate(s) to verify the broker with.
    public var caFile: String?
    /// Client certificate and key, for brokers that want one.
    public var certificateFile: String?
    public var keyFile: String?
    /// Skip verifying the broker's certificate (the executables warn when this is set).
    public var insecure: Bool
    /// Whether to use TLS at all.
    public var usesTLS: Bool { address.usesTLS || caFile != nil }

    /// The lines of `--help` text describing these options.
    public static let usage = """
          --broker URL             mqtt://host[:port] or mqtts://host[:port] (env WHEREABOUTS_BROKER)
          --username NAME          broker account (env WHEREABOUTS_USERNAME)
          --password-file FILE     file holding the password (env WHEREABOUTS_PASSWORD_FILE;
                                   or the password itself in env WHEREABOUTS_PASSWORD)
          --ca-file FILE           CA certificate(s) to verify the broker (env WHEREABOUTS_CA_FILE)
          --cert-file FILE         client certificate (env WHEREABOUTS_CERT_FILE)
          --key-file FILE          client key (env WHEREABOUTS_KEY_FILE)
          --insecure               do not verify the broker's certificate (logged as a warning)
        """

    /// Reads the options; `defaultUsername` applies when neither flag nor environment gives one.
    public init(_ arguments: inout Arguments, defaultUsername: String? = nil) throws(UsageError) {
        func setting(_ flag: String, _ variable: String) throws(UsageError) -> String? {
            try arguments.option(flag) ?? Environment.value(variable)
        }
        guard let text = try setting("broker", "WHEREABOUTS_BROKER") else { throw UsageError("--broker is required") }
        address = try BrokerAddress(text)
        username = try setting("username", "WHEREABOUTS_USERNAME") ?? defaultUsername
        password = Environment.value("WHEREABOUTS_PASSWORD")
        if let file = try setting("password-file", "WHEREABOUTS_PASSWORD_FILE") {
            do {
                var text = String(decoding: try FileAccess.read(file, limit: 4096), as: UTF8.self)
                if text.hasSuffix("\n") { text.removeLast() }
                if text.hasSuffix("\r") { text.removeLast() }
                password = text
            } catch {
                throw UsageError("cannot read the password file: \(error)")
            }
        }
        caFile = try setting("ca-file", "WHEREABOUTS_CA_FILE")
        certificateFile = try setting("cert-file", "WHEREABOUTS_CERT_FILE")
        keyFile = try setting("key-file", "WHEREABOUTS_KEY_FILE")
        insecure = arguments.flag("insecure")
        if (certificateFile == nil) != (keyFile == nil) { throw UsageError("--cert-file and --key-file go together") }
        if insecure && !usesTLS { throw UsageError("--insecure only makes sense with mqtts://") }
    }
}
