public import WhereaboutsMQTT
public import WhereaboutsSettings

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension BrokerSettings {
    /// The broker settings of ``WhereaboutsSettings/Setting/broker(defaultUsername:)``; `defaultUsername` applies when none is given.
    public init(_ settings: Settings, defaultUsername: String?) throws(SettingsError) {
        try self.init(
            broker: try settings.required("broker", "mqtt://host[:port] or mqtts://host[:port]"),
            username: settings.value("username") ?? defaultUsername, password: settings.value("password"),
            passwordFile: settings.value("password-file"), caFile: settings.value("ca-file"),
            certificateFile: settings.value("cert-file"), keyFile: settings.value("key-file"),
            insecure: try settings.switchValue("insecure"))
    }

    /// Checks the settings together and reads the password file (which wins over a password given directly).
    public init(
        broker: String, username: String?, password: String?, passwordFile: String?, caFile: String?,
        certificateFile: String?, keyFile: String?, insecure: Bool
    ) throws(SettingsError) {
        let address: BrokerAddress
        do {
            address = try BrokerAddress(broker)
        } catch {
            throw .invalid(error.description)
        }
        var password = password
        if let passwordFile {
            do {
                password = try MQTTPasswordFile.read(path: passwordFile)
            } catch {
                throw .invalid(error.description)
            }
        }
        self.init(
            address: address, username: username, password: password, caFile: caFile,
            certificateFile: certificateFile, keyFile: keyFile, insecure: insecure)
        if (certificateFile == nil) != (keyFile == nil) { throw .invalid("--cert-file and --key-file go together") }
        if insecure && !usesTLS { throw .invalid("--insecure only makes sense with mqtts://") }
        // A TLS file that cannot be read is bad usage, named here, not a library status code at the first connect.
        for (flag, path) in [("--ca-file", caFile), ("--cert-file", certificateFile), ("--key-file", keyFile)] {
            guard let path else { continue }
            if access(path, R_OK) != 0 {
                throw .invalid("\(flag) \(path): cannot read it (\(FileAccess.systemMessage()))")
            }
        }
    }
}
