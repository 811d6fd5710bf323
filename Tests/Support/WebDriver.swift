import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Just enough of the WebDriver protocol to drive chromedriver.
public struct WebDriver: Sendable {
    public static let chromium = "/usr/bin/chromium"
    public static let chromedriver = "/usr/bin/chromedriver"
    public static var available: Bool {
        FileManager.default.isExecutableFile(atPath: chromium)
            && FileManager.default.isExecutableFile(atPath: chromedriver)
    }

    let process: Process
    let base: String
    let session: String
    /// Where screenshots go (not committed).
    let screenshots: URL
    /// The browser's profile and everything chromedriver and Chromium put in a temporary directory, deleted by `stop()`
    /// once they have quit (else Chromium's profiles and `org.chromium.Chromium.*` sockets piled up in /tmp).
    let directory: URL

    /// `phone`: Chromium's mobile emulation (390 × 844 CSS pixels, touch), else a 1400 × 900 window.
    public static func start(screenshots: URL, phone: Bool = false) async throws -> WebDriver {
        let port = try FreePort.find()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: WebDriver.chromedriver)
        process.arguments = ["--port=\(port)"]
        // Chromium makes its socket directory in TMPDIR, whatever the profile; chromedriver its own folders.
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": directory.path]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        let base = "http://127.0.0.1:\(port)"
        // chromedriver answers /status once it listens.
        var ready = false
        var failure = ""
        for _ in 0..<300 where !ready {
            do {
                _ = try await request("GET", "\(base)/status")
                ready = true
            } catch {
                failure = "\(error)"
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        guard ready else {
            await Self.quit(process, at: base, deleting: directory)
            throw WebDriverError("chromedriver did not answer on \(base): \(failure)")
        }
        var options: [String: Any] = [
            "binary": WebDriver.chromium,
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,900",
                "--user-data-dir=\(directory.appendingPathComponent("profile").path)",
            ],
        ]
        if phone {
            options["mobileEmulation"] = [
                "deviceMetrics": ["width": 390, "height": 844, "pixelRatio": 2.0, "touch": true] as [String: Any]
            ]
        }
        let capabilities: [String: Any] = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    "goog:chromeOptions": options,
                    "goog:loggingPrefs": ["browser": "ALL"],
                ]
            ]
        ]
        do {
            let reply = try await request("POST", "\(base)/session", capabilities)
            guard let value = reply["value"] as? [String: Any], let session = value["sessionId"] as? String else {
                throw WebDriverError("chromedriver refused the session: \(reply)")
            }
            return WebDriver(
                process: process, base: base, session: session, screenshots: screenshots, directory: directory)
        } catch {
            await Self.quit(process, at: base, deleting: directory)
            throw error
        }
    }

    /// Ends the session (Chromium quits) and chromedriver, then deletes their folder: when the test ends, as a
    /// `TestTeardown` step (awaited with the `.awaitsTeardown` trait).
    public func stop() {
        let base = base
        let url = "\(base)/session/\(session)"
        let process = process
        let directory = directory
        TestTeardown.add {
            _ = try? await Self.request("DELETE", url)
            await Self.quit(process, at: base, deleting: directory)
        }
    }

    /// Shuts chromedriver down through its /shutdown endpoint, which quits its browsers too, waits for it to exit —
    /// SIGKILL after 10 s — and deletes `directory`. Not by SIGTERM (`terminate()`): chromedriver then dies at once and
    /// a browser whose session is still open runs on, writing to its profile.
    static func quit(_ process: Process, at base: String, deleting directory: URL) async {
        _ = try? await request("GET", "\(base)/shutdown")
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while process.isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            let killed = ContinuousClock.now.advanced(by: .seconds(30))
            while process.isRunning && ContinuousClock.now < killed { try? await Task.sleep(for: .milliseconds(20)) }
        }
        try? FileManager.default.removeItem(at: directory)
    }

    public func open(_ url: String) async throws {
        _ = try await Self.request("POST", "\(base)/session/\(session)/url", ["url": url])
    }

    public func run(_ script: String) async throws -> Any? {
        let reply = try await Self.request(
            "POST", "\(base)/session/\(session)/execute/sync", ["script": script, "args": [Any]()])
        return reply["value"]
    }

    /// Runs `script` until `done` accepts its value or `timeout` passes; returns the last value.
    public func poll(
        _ script: String, timeout: Duration = .seconds(30), until done: (Any?) -> Bool
    ) async throws -> Any? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var value: Any?
        repeat {
            value = try await run(script)
            if done(value) { return value }
            try await Task.sleep(for: .milliseconds(100))
        } while ContinuousClock.now < deadline
        return value
    }

    public func click(_ selector: String) async throws {
        let found = try await Self.request(
            "POST", "\(base)/session/\(session)/element", ["using": "css selector", "value": selector])
        guard let element = (found["value"] as? [String: Any])?.values.first as? String else {
            throw WebDriverError("no element \(selector): \(found)")
        }
        _ = try await Self.request("POST", "\(base)/session/\(session)/element/\(element)/click", [:])
    }

    public func screenshot(_ name: String) async throws {
        let reply = try await Self.request("GET", "\(base)/session/\(session)/screenshot")
        guard let encoded = reply["value"] as? String, let png = Data(base64Encoded: encoded) else { return }
        try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)
        let file = screenshots.appendingPathComponent("\(name).png")
        try png.write(to: file)
        print("screenshot: \(file.path)")
    }

    /// The browser's console messages at level SEVERE (errors, failed loads).
    public func consoleErrors() async throws -> [String] {
        let reply = try await Self.request("POST", "\(base)/session/\(session)/se/log", ["type": "browser"])
        let entries = reply["value"] as? [[String: Any]] ?? []
        return entries.filter { $0["level"] as? String == "SEVERE" }.map { "\($0["message"] ?? "")" }
    }

    /// One WebDriver call. Over a plain socket: chromedriver writes headers without a space after the colon
    /// (`Content-Length:249`), which Foundation's URLSession on Linux refuses ("Failed writing header").
    static func request(_ method: String, _ url: String, _ body: [String: Any]? = nil) async throws -> [String: Any] {
        let components = URLComponents(string: url)!
        let payload = try body.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        let port = components.port ?? 80
        let path = components.path
        // On a thread of its own: the blocking read held one of the cooperative pool's two threads for as long as
        // chromedriver took, and on a busy machine every other suite's timers and streams timed out meanwhile.
        let (status, data) = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<(Int, Data), any Error>) in
            Thread {
                continuation.resume(
                    with: Result { try exchange(port: port, method: method, path: path, body: payload) })
            }.start()
        }
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        guard status == 200 else {
            throw WebDriverError(
                "WebDriver \(method) \(url) failed (\(status)): \(String(decoding: data, as: UTF8.self))")
        }
        return json
    }

    /// Sends one HTTP/1.1 request to 127.0.0.1 on a new connection and reads its reply.
    static func exchange(port: Int, method: String, path: String, body: Data) throws -> (Int, Data) {
        let fd = try connectLoopback(port: port, receiveTimeout: timeval(tv_sec: 60, tv_usec: 0))
        defer { close(fd) }
        var request = Data(
            ("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n").utf8)
        request.append(body)
        let sent = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        guard sent == request.count else { throw WebDriverError("cannot send to 127.0.0.1:\(port)") }
        // chromedriver keeps the connection open whatever the request says: read the head, then Content-Length bytes.
        var reply = Data()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            if let end = reply.range(of: Data("\r\n\r\n".utf8)) {
                let head = String(decoding: reply[..<end.lowerBound], as: UTF8.self)
                let length =
                    head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if reply.count - end.upperBound >= length {
                    let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
                    return (status, reply[end.upperBound..<(end.upperBound + length)])
                }
            }
            let count = recv(fd, &chunk, chunk.count, 0)
            guard count > 0 else { throw WebDriverError("no complete HTTP reply from 127.0.0.1:\(port)") }
            reply.append(contentsOf: chunk[..<count])
        }
    }

}

public struct WebDriverError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A TCP connection to 127.0.0.1:`port` whose reads give up after `receiveTimeout` (the caller closes it).
public func connectLoopback(port: Int, receiveTimeout: timeval) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else {
        close(fd)
        throw WebDriverError("cannot connect to 127.0.0.1:\(port)")
    }
    var timeout = receiveTimeout
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    return fd
}
