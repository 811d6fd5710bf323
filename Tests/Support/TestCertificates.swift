import Foundation
import Synchronization

/// A throw-away PKI made with the openssl command line: a CA, a server certificate for 127.0.0.1 and localhost, a
/// client certificate, and an unrelated second CA that must not be trusted.
public struct TestCertificates: Sendable {
    public let directory: URL
    public let caFile: URL
    public let serverCert: URL
    public let serverKey: URL
    public let clientCert: URL
    public let clientKey: URL
    /// A CA that signed nothing here: trusting only it must fail the TLS handshake.
    public let otherCAFile: URL

    /// This test process's PKI, made the first time it is asked for and removed when the process exits. Nothing
    /// writes to its files, so every broker of the process reads the same ones.
    ///
    /// Made once, not once a broker, and with P-256 keys: its six openssl runs are synchronous, and with a TLS broker
    /// starting in several tests at once they held the threads of the cooperative pool — two on two cores — while the
    /// live tests beside them waited to be scheduled. A stack dump at the live round's start under load showed one
    /// thread making the PKI and the other waiting for it. Four RSA-2048 keys took 4.1 s there; four P-256 keys 0.13 s.
    public static func shared() throws -> TestCertificates {
        try made.withLock { made in
            if let made { return made }
            let fresh = try generate(in: URL(fileURLWithPath: sharedDirectory))
            atexit { try? FileManager.default.removeItem(atPath: sharedDirectory) }
            made = fresh
            return fresh
        }
    }

    private static let made = Mutex<TestCertificates?>(nil)

    private static func generate(in directory: URL) throws -> TestCertificates {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        func openssl(_ arguments: [String]) throws { try MosquittoBroker.runTool("/usr/bin/openssl", arguments) }

        for ca in ["ca", "other-ca"] {
            try openssl([
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                "-subj", "/CN=BeaconTracker test \(ca)", "-keyout", path("\(ca).key"), "-out", path("\(ca).pem"),
            ])
        }
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(
            toFile: path("server.ext"), atomically: true, encoding: .utf8)
        for (name, subject, extensions) in [
            ("server", "/CN=localhost", ["-extfile", path("server.ext")]), ("client", "/CN=gw-test", []),
        ] {
            try openssl([
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", subject,
                "-keyout", path("\(name).key"), "-out", path("\(name).csr"),
            ])
            try openssl(
                [
                    "x509", "-req", "-in", path("\(name).csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                    "-CAcreateserial", "-days", "2", "-out", path("\(name).pem"),
                ] + extensions)
        }
        return TestCertificates(
            directory: directory, caFile: URL(fileURLWithPath: path("ca.pem")),
            serverCert: URL(fileURLWithPath: path("server.pem")), serverKey: URL(fileURLWithPath: path("server.key")),
            clientCert: URL(fileURLWithPath: path("client.pem")), clientKey: URL(fileURLWithPath: path("client.key")),
            otherCAFile: URL(fileURLWithPath: path("other-ca.pem")))
    }
}

/// Where this test process keeps its PKI (a global: `atexit` takes a C function, which captures nothing).
private let sharedDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "beacontracker-test-pki-\(getpid())"
).path
