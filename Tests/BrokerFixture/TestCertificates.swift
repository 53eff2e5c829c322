import Foundation

/// A throwaway certificate authority with a server and a client certificate, made with `openssl`.
///
/// The server certificate names `127.0.0.1` and `localhost` as subject alternative names, so a client
/// that verifies host names accepts it on loopback. Keys are P-256 (fast to generate) and certificates
/// are valid for two days. Nothing here is fit for production.
public struct TestCertificates: Sendable {
    /// The CA certificate (PEM), to give clients as their trust anchor.
    public let caFile: String
    /// The server certificate (PEM), signed by the CA.
    public let serverCertificateFile: String
    /// The server's private key (PEM, unencrypted).
    public let serverKeyFile: String
    /// A client certificate (PEM) signed by the same CA, common name `whereabouts-test-client`.
    public let clientCertificateFile: String
    /// The client's private key (PEM, unencrypted).
    public let clientKeyFile: String

    /// Makes a fresh CA, server and client certificate in `directory`, which must exist.
    ///
    /// Two calls give two unrelated CAs, which is how a test gets a "wrong" CA.
    public static func make(in directory: String, authorityName: String = "Whereabouts Test CA")
        throws(BrokerFixtureError) -> TestCertificates
    {
        let openssl = try ExternalTool.locate("openssl", package: "openssl")
        let certificates = TestCertificates(
            caFile: directory + "/ca.crt",
            serverCertificateFile: directory + "/server.crt",
            serverKeyFile: directory + "/server.key",
            clientCertificateFile: directory + "/client.crt",
            clientKeyFile: directory + "/client.key"
        )
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try ExternalTool.run(
            openssl,
            ["req", "-x509"] + key + [
                "-keyout", directory + "/ca.key", "-out", certificates.caFile, "-days", "2",
                "-subj", "/CN=\(authorityName)",
            ],
            in: directory
        )
        let serverExtensions = directory + "/server.ext"
        try write("subjectAltName=IP:127.0.0.1,DNS:localhost\n", to: serverExtensions)
        try sign(
            name: "localhost", key: certificates.serverKeyFile, certificate: certificates.serverCertificateFile,
            extensions: serverExtensions, openssl: openssl, keyOptions: key, directory: directory
        )
        try sign(
            name: "whereabouts-test-client", key: certificates.clientKeyFile,
            certificate: certificates.clientCertificateFile, extensions: nil, openssl: openssl, keyOptions: key,
            directory: directory
        )
        return certificates
    }

    private static func sign(
        name: String, key: String, certificate: String, extensions: String?, openssl: String,
        keyOptions: [String], directory: String
    ) throws(BrokerFixtureError) {
        let request = certificate + ".csr"
        try ExternalTool.run(
            openssl, ["req", "-new"] + keyOptions + ["-keyout", key, "-out", request, "-subj", "/CN=\(name)"],
            in: directory
        )
        var arguments = [
            "x509", "-req", "-in", request, "-CA", directory + "/ca.crt", "-CAkey", directory + "/ca.key",
            "-CAcreateserial", "-out", certificate, "-days", "2",
        ]
        if let extensions {
            arguments += ["-extfile", extensions]
        }
        try ExternalTool.run(openssl, arguments, in: directory)
    }

    static func write(_ text: String, to path: String) throws(BrokerFixtureError) {
        do {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw .fileNotWritten(path: path, reason: "\(error)")
        }
    }
}
